"""A ThreadSanitizer report becomes one line naming the two accesses
(harness.session.tsan_race), which the failure of class `race` carries; an
AddressSanitizer or UBSan report, one line saying what and where
(sanitizer_report), which a `crash` carries; and the host target's runs name
file:line in their frames."""
import subprocess

from harness.session import sanitizer_report, tsan_race
from harness.targets.host import HostTarget
from harness.team_order import is_team_order

REPORT = b"""ptl: some output first
==================
WARNING: ThreadSanitizer: data race (pid=4242)
  Write of size 2 at 0x7b0400000010 by thread T2:
    #0 memcpy ../../../../src/libsanitizer/sanitizer_common/sanitizer_common_interceptors.inc:827 (libtsan.so.2+0x5c0e3)
    #1 embedding_fw_tiled_fp16 /tmp/lib/sources/pulp_embedding_fp16.c:18 (runner+0x4c2a1)

  Previous read of size 2 at 0x7b0400000010 by main thread:
    #0 embedding_fw_tiled_fp16 /tmp/lib/sources/pulp_embedding_fp16.c:19 (runner+0x4c2b7)
    #1 run_share /work/harness/targets/host/runtime/team_pthreads.c:200 (runner+0x1111)

SUMMARY: ThreadSanitizer: data race /tmp/lib/sources/pulp_embedding_fp16.c:18 in embedding_fw_tiled_fp16
==================
"""


def test_a_data_race_names_both_accesses_with_their_frames():
    assert tsan_race(REPORT) == ("ThreadSanitizer: data race between write of size 2 by thread T2 in "
                                 "embedding_fw_tiled_fp16 at pulp_embedding_fp16.c:18 and previous read of size 2 "
                                 "by main thread in embedding_fw_tiled_fp16 at pulp_embedding_fp16.c:19")


def test_no_report_is_no_race_and_a_cut_report_still_says_race():
    assert tsan_race(b"plain output\n") is None
    cut = REPORT.split(b"  Previous")[0]
    assert tsan_race(cut).startswith("ThreadSanitizer: data race (")


def test_team_orders_include_seeded_random_ones():
    assert all(is_team_order(o) for o in ("free", "forward", "reverse", "rotate", "random:0", "random:12345"))
    assert not any(is_team_order(o) for o in ("random", "random:", "random:-1", "random:x", "backwards"))


def test_a_sanitizer_report_gives_its_first_line_and_where():
    asan = (b"==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602 at pc 0x55 bp 0x7f sp 0x7f\n"
            b"READ of size 4 at 0x602 thread T1\n    #0 0x55 in tile_4x4 lib/x.c:12\n")
    assert sanitizer_report(asan) == ("ERROR: AddressSanitizer: heap-buffer-overflow (READ of size 4) in tile_4x4 "
                                      "at x.c:12")
    ubsan = b"noise\nlayer_tiles.h:185:50: runtime error: applying non-zero offset 40 to null pointer\n"
    assert sanitizer_report(ubsan) == ("runtime error: applying non-zero offset 40 to null pointer "
                                       "at layer_tiles.h:185:50")
    assert sanitizer_report(b"Segmentation fault\n") is None


def test_an_access_to_a_poisoned_guard_word_is_named_as_such():
    """Under AddressSanitizer the runner poisons only its guard words (runner/buffers.c)."""
    for access in ("READ", "WRITE"):
        report = (b"==7==ERROR: AddressSanitizer: use-after-poison on address 0x60 at pc 0x55 bp 0x7f sp 0x7f\n"
                  + access.encode() + b" of size 4 at 0x60 thread T0\n    #0 0x55 in row_max lib/y.c:59\n")
        assert sanitizer_report(report) == (f"a {access.lower()} of a guard word past an output or work buffer "
                                            f"(AddressSanitizer: use-after-poison, {access} of size 4) "
                                            f"in row_max at y.c:59")


def test_an_address_sanitizer_report_names_the_frame_and_two_callers_in_our_code():
    report = (b"==9==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x60 at pc 0x55 bp 0x7f sp 0x7f\n"
              b"READ of size 4 at 0x60 thread T2\n"
              b"    #0 0x7f1 in __interceptor_memcpy ../src/libsanitizer/sanitizer_common_interceptors.inc:827\n"
              b"    #1 0x551 in copy_row /lib/a.c:10:3\n    #2 0x552 in layer_fw /lib/b.c:20:5\n"
              b"    #3 0x553 in layer_step /lib/c.c:30\n    #4 0x554 in main /run/main.c:40\n"
              b"\n0x60 is located 0 bytes after 16-byte region\nallocated by thread T0 here:\n"
              b"    #0 0x7f2 in malloc ../src/libsanitizer/asan/asan_malloc_linux.cpp:69\n")
    assert sanitizer_report(report) == ("ERROR: AddressSanitizer: heap-buffer-overflow (READ of size 4) in copy_row "
                                        "at a.c:10:3, called from layer_fw at b.c:20:5, called from layer_step "
                                        "at c.c:30")
    forked = report.replace(b"in layer_fw /lib/b.c:20:5", b"in run_share /h/runtime/team_pthreads.c:281:5")
    assert sanitizer_report(forked).endswith("in copy_row at a.c:10:3, forked on the team")


def test_a_clang_19_sanitizer_report_run_by_the_host_target_names_file_and_line(tmp_path):
    """clang-19's runtimes print bare addresses unless told where an
    llvm-symbolizer is (harness/targets/host: SANITIZER_OPTIONS)."""
    source = tmp_path / "overflow.c"
    source.write_text("#include <stdlib.h>\n"
                      "int read_past(const int *p, int i) { return p[i]; }\n"
                      "int main(int argc, char **argv) { int *p = malloc(8); int r = read_past(p, argc + 3);\n"
                      "  free(p); return r; }\n")
    subprocess.run(["clang-19", "-fsanitize=address", "-O1", "-g1", str(source), "-o", str(tmp_path / "runner")],
                   check=True)
    raw = HostTarget().run(tmp_path, None, 60, tmp_path)
    assert raw.returncode == 66
    assert "in read_past " in raw.stderr.decode() and "overflow.c:2" in raw.stderr.decode()
