"""harness/buildcache.py: content-keyed build artefacts shared between workers."""
import multiprocessing
import subprocess
import time

import pytest

from harness.buildcache import BuildCache, ObjectCache, ObjectStore, digest_files

MATERIAL = {"target": "host", "fp16": "fp16", "flags": ["-O2"], "sources": "abc123"}


class CountingBuild:
    """A build that writes one artefact and appends a line to a log per call."""

    def __init__(self, log, fail=False, seconds=0.0):
        self.log, self.fail, self.seconds = log, fail, seconds

    def __call__(self, out):
        with open(self.log, "a") as handle:
            handle.write("built\n")
        (out / "runner").write_text("binary")
        time.sleep(self.seconds)
        if self.fail:
            raise RuntimeError("compiler said no")

    def count(self):
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0


def entries(cache):
    """Directories under the build root, hidden staging directories included."""
    return sorted(p.name for p in cache.root.iterdir() if p.is_dir())


def test_first_get_builds_and_second_get_reuses(tmp_path):
    cache, build = BuildCache(tmp_path), CountingBuild(tmp_path / "log")
    first = cache.get(MATERIAL, build)
    second = cache.get(MATERIAL, build)
    assert first == second
    assert build.count() == 1
    assert (cache.compiled, cache.reused) == (1, 1)
    assert (first / "runner").read_text() == "binary"
    assert (first / ".complete").exists() and (first / "material.json").exists()


def test_a_new_cache_on_the_same_root_reuses_the_artefact(tmp_path):
    build = CountingBuild(tmp_path / "log")
    path = BuildCache(tmp_path).get(MATERIAL, build)
    later = BuildCache(tmp_path)
    assert later.get(MATERIAL, build) == path
    assert build.count() == 1 and (later.compiled, later.reused) == (0, 1)


def test_different_material_builds_into_a_different_directory(tmp_path):
    cache, build = BuildCache(tmp_path), CountingBuild(tmp_path / "log")
    a = cache.get(MATERIAL, build)
    b = cache.get({**MATERIAL, "sources": "def456"}, build)
    assert a != b and a.parent == b.parent
    assert build.count() == 2 and cache.compiled == 2


def test_the_key_does_not_depend_on_dict_order():
    reordered = {k: MATERIAL[k] for k in reversed(list(MATERIAL))}
    assert BuildCache.key_of(reordered) == BuildCache.key_of(MATERIAL)


def test_a_failing_build_leaves_no_directory_and_no_complete_marker(tmp_path):
    cache = BuildCache(tmp_path)
    with pytest.raises(RuntimeError, match="compiler said no"):
        cache.get(MATERIAL, CountingBuild(tmp_path / "log", fail=True))
    assert entries(cache) == []
    assert list(tmp_path.rglob(".complete")) == []
    assert cache.compiled == 0


def test_a_failed_build_does_not_poison_the_next_attempt(tmp_path):
    cache, log = BuildCache(tmp_path), tmp_path / "log"
    with pytest.raises(RuntimeError):
        cache.get(MATERIAL, CountingBuild(log, fail=True))
    path = cache.get(MATERIAL, CountingBuild(log))
    assert (path / ".complete").exists() and CountingBuild(log).count() == 2


def test_an_incomplete_leftover_directory_is_rebuilt(tmp_path):
    cache, build = BuildCache(tmp_path), CountingBuild(tmp_path / "log")
    leftover = cache.root / BuildCache.name_of(MATERIAL)
    leftover.mkdir(parents=True)
    (leftover / "half-written.o").write_text("junk")
    path = cache.get(MATERIAL, build)
    assert path == leftover and build.count() == 1
    assert not (path / "half-written.o").exists() and (path / ".complete").exists()


def _worker(root, log, barrier, results):
    cache = BuildCache(root)
    barrier.wait()
    try:
        path = cache.get(MATERIAL, CountingBuild(log, seconds=0.3))
    except Exception as exc:          # reported to the test, not lost in a child
        results.put((f"{type(exc).__name__}: {exc}", -1, -1))
        return
    results.put((str(path), cache.compiled, cache.reused))


def test_four_processes_asking_at_once_build_exactly_once(tmp_path):
    ctx = multiprocessing.get_context("fork")
    log, barrier, results = tmp_path / "log", ctx.Barrier(4), ctx.Queue()
    workers = [ctx.Process(target=_worker, args=(tmp_path, log, barrier, results)) for _ in range(4)]
    for w in workers:
        w.start()
    outcomes = [results.get(timeout=30) for _ in workers]
    for w in workers:
        w.join(timeout=30)
        assert w.exitcode == 0
    assert [o for o in outcomes if o[1] < 0] == []        # no worker raised
    assert CountingBuild(log).count() == 1
    assert len({path for path, _, _ in outcomes}) == 1
    assert sorted((c, r) for _, c, r in outcomes) == [(0, 1), (0, 1), (0, 1), (1, 0)]


def test_digest_of_sources_changes_with_content_and_ignores_other_suffixes(tmp_path):
    (tmp_path / "a.c").write_text("int a;")
    (tmp_path / "notes.txt").write_text("one")
    before = digest_files([tmp_path])
    (tmp_path / "notes.txt").write_text("two")
    assert digest_files([tmp_path]) == before
    (tmp_path / "a.c").write_text("int a = 1;")
    assert digest_files([tmp_path]) != before


def test_digest_of_sources_is_the_same_for_a_copy_elsewhere_and_changes_with_a_rename(tmp_path):
    """Shards on other machines, checked out at other paths, must agree on
    the library digest (merge refuses reports of different digests)."""
    for where in ("one/lib", "two/deeper/lib"):
        (tmp_path / where / "include").mkdir(parents=True)
        (tmp_path / where / "include" / "a.h").write_text("int a(void);")
        (tmp_path / where / "b.c").write_text("int b;")
    one = digest_files([tmp_path / "one/lib/include", tmp_path / "one/lib/b.c"])
    assert digest_files([tmp_path / "two/deeper/lib/include", tmp_path / "two/deeper/lib/b.c"]) == one
    (tmp_path / "one/lib/include/a.h").rename(tmp_path / "one/lib/include/c.h")
    assert digest_files([tmp_path / "one/lib/include", tmp_path / "one/lib/b.c"]) != one


def test_a_private_header_beside_the_sources_is_part_of_the_library_digest(tmp_path):
    """A library's sources include headers that live beside them (lib_c's
    *_impl.h): editing one must rebuild, or a mutant would reuse the clean
    build (and, before, an edited lib_c its stale one)."""
    from harness.target import LibrarySource
    lib = tmp_path / "lib"
    (lib / "include").mkdir(parents=True)
    (lib / "sources").mkdir()
    (lib / "include" / "api.h").write_text("void f(void);")
    (lib / "sources" / "f.c").write_text('#include "f_impl.h"')
    (lib / "sources" / "f_impl.h").write_text("void f(void) {}")
    before = digest_files(LibrarySource.at(lib).digest_roots)
    (lib / "sources" / "f_impl.h").write_text("void f(void) { for (;;); }")
    assert digest_files(LibrarySource.at(lib).digest_roots) != before


# ---- ObjectCache: compiled objects shared between builds ----

def _tree(root, sources: dict[str, str]):
    """A library tree: include/ and sources/ with the given files."""
    for name, text in sources.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


LIBRARY_FILES = {
    "include/api.h": "int add(int, int);\nint twice(int);\n",
    "sources/impl.h": "#define BODY(a, b) ((a) + (b))\n",
    "sources/add.c": '#include "api.h"\n#include "impl.h"\nint add(int a, int b) { return BODY(a, b); }\n',
    "sources/twice.c": '#include "api.h"\nint twice(int a) { return a * 2; }\n',
}


class CountingCompiler:
    """Runs gcc -c and records which sources it compiled."""

    def __init__(self):
        self.compiled = []

    def __call__(self, argv):
        self.compiled.append(argv[argv.index("-c") + 1].rsplit("/", 1)[1])
        return subprocess.run(argv, capture_output=True, text=True)


def _compile_all(store, lib, objdir, compiler):
    objdir.mkdir(parents=True, exist_ok=True)
    cache = ObjectCache(store, [lib / "include", lib / "sources"], {"LIB": lib, "OBJ": objdir})
    results = {}
    for source in sorted((lib / "sources").glob("*.c")):
        obj = objdir / f"{source.stem}.o"
        argv = ["gcc", "-O2", f"-I{lib / 'include'}", "-c", str(source), "-o", str(obj)]
        code = cache.compile(argv, source, obj, compiler).returncode
        results[source.name] = (code, obj.read_bytes() if code == 0 else None)
    return results


def test_a_copy_of_the_library_elsewhere_compiles_nothing_and_gets_the_same_objects(tmp_path):
    store = ObjectStore(tmp_path / "objects", "gcc-12 -O2")
    first, second = CountingCompiler(), CountingCompiler()
    a = _compile_all(store, _tree(tmp_path / "a", LIBRARY_FILES), tmp_path / "obj_a", first)
    b = _compile_all(store, _tree(tmp_path / "b", LIBRARY_FILES), tmp_path / "obj_b", second)
    assert sorted(first.compiled) == ["add.c", "twice.c"]
    assert second.compiled == []
    assert a == b and all(code == 0 for code, _ in b.values())


def test_an_edited_source_or_header_recompiles_exactly_what_reads_it(tmp_path):
    store = ObjectStore(tmp_path / "objects", "gcc-12 -O2")
    _compile_all(store, _tree(tmp_path / "clean", LIBRARY_FILES), tmp_path / "obj0", CountingCompiler())

    edited_source = CountingCompiler()
    _compile_all(store, _tree(tmp_path / "c", {**LIBRARY_FILES, "sources/twice.c": LIBRARY_FILES["sources/twice.c"]
                                               .replace("a * 2", "a * 3")}), tmp_path / "obj1", edited_source)
    assert edited_source.compiled == ["twice.c"]

    private_header = CountingCompiler()       # only add.c includes impl.h
    _compile_all(store, _tree(tmp_path / "h", {**LIBRARY_FILES, "sources/impl.h": "#define BODY(a, b) ((a) - (b))\n"}),
                 tmp_path / "obj2", private_header)
    assert private_header.compiled == ["add.c"]

    public_header = CountingCompiler()        # both include api.h
    _compile_all(store, _tree(tmp_path / "p", {**LIBRARY_FILES, "include/api.h": LIBRARY_FILES["include/api.h"] + "\n"}),
                 tmp_path / "obj3", public_header)
    assert sorted(public_header.compiled) == ["add.c", "twice.c"]


def test_an_edited_x_macro_list_recompiles_the_source_that_includes_it(tmp_path):
    """A .def list (ptl_kernels.def, ds_cnn_passes.def) is read like a header."""
    files = {**LIBRARY_FILES, "sources/twice.c": '#include "steps.def"\nint twice(int a) { return a * STEPS; }\n',
             "sources/steps.def": "#define STEPS 2\n"}
    store = ObjectStore(tmp_path / "objects", "gcc-12 -O2")
    _compile_all(store, _tree(tmp_path / "a", files), tmp_path / "o1", CountingCompiler())
    again = CountingCompiler()
    _compile_all(store, _tree(tmp_path / "b", {**files, "sources/steps.def": "#define STEPS 3\n"}), tmp_path / "o2",
                 again)
    assert again.compiled == ["twice.c"]


def test_other_tools_or_options_share_no_object(tmp_path):
    lib = _tree(tmp_path / "lib", LIBRARY_FILES)
    _compile_all(ObjectStore(tmp_path / "objects", "gcc-12 -O2"), lib, tmp_path / "o1", CountingCompiler())
    other = CountingCompiler()
    _compile_all(ObjectStore(tmp_path / "objects", "gcc-13 -O2"), lib, tmp_path / "o2", other)
    assert sorted(other.compiled) == ["add.c", "twice.c"]


def test_a_computed_include_makes_every_header_part_of_the_key(tmp_path):
    files = {**LIBRARY_FILES, "sources/twice.c": '#define WHICH "api.h"\n#include WHICH\n'
                                                 'int twice(int a) { return a * 2; }\n'}
    store = ObjectStore(tmp_path / "objects", "gcc-12 -O2")
    _compile_all(store, _tree(tmp_path / "a", files), tmp_path / "o1", CountingCompiler())
    again = CountingCompiler()
    _compile_all(store, _tree(tmp_path / "b", {**files, "sources/impl.h": "#define BODY(a, b) ((a) * (b))\n"}),
                 tmp_path / "o2", again)
    assert sorted(again.compiled) == ["add.c", "twice.c"]


def test_a_source_that_does_not_compile_stores_nothing(tmp_path):
    store = ObjectStore(tmp_path / "objects", "gcc-12 -O2")
    broken = {**LIBRARY_FILES, "sources/twice.c": "int twice(int a) { return a * ; }\n"}
    results = _compile_all(store, _tree(tmp_path / "lib", broken), tmp_path / "obj", CountingCompiler())
    assert results["twice.c"][0] != 0 and results["add.c"][0] == 0
    assert len([p for p in store.root.iterdir() if not p.name.startswith(".")]) == 1
    assert not [p for p in store.root.iterdir() if p.name.startswith(".")]



def test_a_header_forced_in_by_the_command_line_is_part_of_the_key(tmp_path):
    store = ObjectStore(tmp_path / "objects", "gcc-12 -O2")
    lib = _tree(tmp_path / "lib", LIBRARY_FILES)
    forced = tmp_path / "types.h"
    counts = []
    for body in ("typedef int word;\n", "typedef long word;\n", "typedef long word;\n"):
        forced.write_text(body)
        compiler = CountingCompiler()
        source = lib / "sources" / "twice.c"
        obj = tmp_path / "twice.o"
        argv = ["gcc", "-include", str(forced), f"-I{lib / 'include'}", "-c", str(source), "-o", str(obj)]
        ObjectCache(store, [lib / "include"], {"LIB": lib}).compile(argv, source, obj, compiler)
        counts.append(len(compiler.compiled))
    assert counts == [1, 1, 0]
