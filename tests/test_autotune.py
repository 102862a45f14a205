"""The autotuner: network descriptions, the tiler, the results database, the
strategies, the outputs, and that only correct configurations compete."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.autotune import cli
from harness.autotune.layers import NetworkError, load_network, parse_layer
from harness.autotune.tiler import NoFit, tilings, whole_layer_case
from harness.autotune.tuner import Evaluator
from harness.kernels import kernel_table
from harness.targets import make_target
from harness.targets.qemu import toolchain
from tests.mutants import FAST_AND_WRONG, FAST_AND_WRONG_KERNEL, mutant_library

ROOT = Path(__file__).resolve().parent.parent

SMALL_NET = """
name = "small"
[[layer]]
name = "fc"
type = "linear"
inp = 40
out = 24
bias = 1
[[layer]]
name = "pw"
type = "conv_pw"
Ci = 8
Co = 9
H = 3
W = 3
steps = ["fw"]
"""


def write(tmp_path: Path, text: str, name: str = "net.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def tune(tmp_path: Path, net: Path, *extra: str, reports: str = "reports") -> tuple[int, dict, list[dict]]:
    """Run the tuner in-process on the host; return its exit status, best.json and measurements.csv."""
    status = cli.main([str(net), "--target", "host", "--ptl-cache", str(tmp_path / "cache"),
                       "--reports-dir", str(tmp_path / reports), *extra])
    out = tmp_path / reports
    with open(out / "measurements.csv") as f:
        rows = list(csv.DictReader(f))
    return status, json.loads((out / "best.json").read_text()), rows


# ---- the network description -----------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("name = 'x'\n[[layer]]\nname = 'a'\ntype = 'lstm'\n", "unknown layer type 'lstm'"),
    ("[[layer]]\nname = 'a'\ntype = 'linear'\ninp = 4\n", "missing field out"),
    ("[[layer]]\nname = 'a'\ntype = 'linear'\ninp = 4\nout = -1\n", "field out must be an integer >= 1"),
    ("[[layer]]\nname = 'a'\ntype = 'linear'\ninp = 4\nout = 2\nCo = 3\n", "unknown field(s) ['Co']"),
    ("[[layer]]\nname = 'a'\ntype = 'linear'\ninp = 4\nout = 2\nsteps = ['bw']\n", "`steps` must be"),
    ("[[layer]]\nname = ' '\ntype = 'linear'\ninp = 4\nout = 2\n", "must be a non-empty line of text"),
    ("[[layer]]\nname = \"a\\tb\"\ntype = 'linear'\ninp = 4\nout = 2\n", "must be a non-empty line of text"),
    ("[[layer]]\nname = 'a'\ntype = 'conv_dw'\nC = 2\nH = 2\nW = 2\nHk = 5\nWk = 1\n", "larger than the padded"),
    ("name = 'x'\n", "no layers"),
    ("[[layer]\nname = 'a'\n", "not valid TOML"),
    ("[[layer]]\nname = 'a'\ntype = 'linear'\ninp = 4\nout = 2\n[[layer]]\nname = 'a'\ntype = 'linear'\n"
     "inp = 4\nout = 2\n", "repeated: ['a']"),
])
def test_a_malformed_network_names_the_file_the_layer_and_the_field(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(NetworkError) as info:
        load_network(path)
    assert message in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize("args, message", [
    (["--l1-bytes", "0"], "--l1-bytes 0: must be a positive number"),
    (["--cores", "9"], "--cores 9: must be comma-separated core counts, each between 1 and 8"),
    (["--cores", "1,x"], "--cores 1,x: must be comma-separated core counts"),
    (["--run-timeout", "nan"], "--run-timeout nan: must be a positive number of seconds"),
    (["--layer", "nosuch"], "--layer nosuch: not in"),
    (["--steps", "xx"], "--steps xx"),
    (["--tiles", "0"], "--tiles 0"),
])
def test_bad_options_and_inputs_are_one_line_and_no_traceback(tmp_path, args, message):
    net = write(tmp_path, SMALL_NET)
    result = subprocess.run([sys.executable, "-m", "harness", "autotune", str(net), "--target", "host", *args],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_an_unknown_layer_type_from_the_command_line_is_a_usage_error(tmp_path):
    net = write(tmp_path, "[[layer]]\nname = 'a'\ntype = 'lstm'\n")
    result = subprocess.run([sys.executable, "-m", "harness", "autotune", str(net), "--target", "host"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "unknown layer type 'lstm'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_library_path_that_is_not_a_library_is_one_line(tmp_path):
    net = write(tmp_path, SMALL_NET)
    result = subprocess.run([sys.executable, "-m", "harness", "autotune", str(net), "--target", "host",
                             "--trainlib", str(tmp_path), "--ptl-cache", str(tmp_path / "cache")],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1 and "is not a trainlib checkout" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_example_networks_load():
    for path in sorted((ROOT / "networks").glob("*.toml")):
        assert load_network(path).layers, path


# ---- the tiler ---------------------------------------------------------------------------

def layer(text: str):
    import tomllib
    return parse_layer(tomllib.loads(text), "test")


LAYERS = {
    "conv2d_strided_padded": "name='c'\ntype='conv2d'\nCi=3\nH=13\nW=7\nCo=10\nHk=4\nWk=3\nsh=2\nsw=2\nU=2\nD=1\nL=1\nR=1",
    "conv_pw": "name='p'\ntype='conv_pw'\nCi=24\nCo=40\nH=9\nW=5",
    "conv_dw": "name='d'\ntype='conv_dw'\nC=40\nH=11\nW=6\nHk=3\nWk=3\nsh=2\nU=1\nD=1\nL=1\nR=1",
    "linear": "name='f'\ntype='linear'\ninp=200\nout=70\nbias=1",
    "transp": "name='t'\ntype='transp_conv2d'\nCi=12\nCo=10\nH=4\nW=4\nHk=3\nWk=3\nsh=2\nsw=2\nU=1\nD=1\nL=1\nR=1",
}

# The output each step writes, in elements, from a tile's shape.
OUTPUT = {
    ("conv2d", "fw"): lambda s: s["Co"] * ((s["H"] + s["U"] + s["D"] - s["Hk"]) // s["sh"] + 1)
    * ((s["W"] + s["L"] + s["R"] - s["Wk"]) // s["sw"] + 1),
    ("conv2d", "wg"): lambda s: s["Co"] * s["Ci"] * s["Hk"] * s["Wk"],
    ("conv2d", "ig"): lambda s: s["Ci"] * s["H"] * s["W"],
    ("conv_pw", "fw"): lambda s: s["Co"] * s["H"] * s["W"],
    ("conv_pw", "wg"): lambda s: s["Co"] * s["Ci"],
    ("conv_pw", "ig"): lambda s: s["Ci"] * s["H"] * s["W"],
    ("conv_dw", "fw"): lambda s: s["C"] * ((s["H"] + s["U"] + s["D"] - s["Hk"]) // s["sh"] + 1)
    * ((s["W"] + s["L"] + s["R"] - s["Wk"]) // s["sw"] + 1),
    ("conv_dw", "wg"): lambda s: s["C"] * s["Hk"] * s["Wk"],
    ("conv_dw", "ig"): lambda s: s["C"] * s["H"] * s["W"],
    ("linear", "fw"): lambda s: s["out"],
    ("linear", "wg"): lambda s: s["out"] * s["inp"],
    ("linear", "ig"): lambda s: s["inp"],
    ("transp_conv2d", "fw"): lambda s: s["Co"],   # per output pixel plane: channels are the only cut
    ("transp_conv2d", "wg"): lambda s: s["Co"] * s["Ci"],
    ("transp_conv2d", "ig"): lambda s: s["Ci"],
}


@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("step", ["fw", "wg", "ig"])
def test_every_tiling_covers_the_layer_exactly_and_fits(name, step):
    """The tiles of a tiling write disjoint slices, so their outputs add up
    to the whole layer's; each fits the budget; the list is largest first."""
    lay = layer(LAYERS[name])
    output = OUTPUT[lay.kind.name, step]
    whole = output(lay.sizes)
    found = tilings(lay, step, "fp32", 16 * 1024, 8)
    assert found
    for t in found:
        assert sum(p.count * output(p.case.shape) for p in t.pieces) == whole, t.label
        assert all(sum(p.case.footprint.values()) <= 16 * 1024 for p in t.pieces)
        assert t.l1_bytes == max(sum(p.case.footprint.values()) for p in t.pieces)
    assert [t.l1_bytes for t in found] == sorted((t.l1_bytes for t in found), reverse=True)


@pytest.mark.parametrize("step", ["fw", "wg", "ig"])
def test_a_pointwise_tiling_as_one_whole_layer_run_carries_its_tile_sizes(step):
    """whole_layer_case: the layer's sizes, the tiling's tile sizes and the
    full length of every axis the step leaves whole; its L1 is two sets of
    its largest tile's buffers (tiles with it fit by that, not by one tile)."""
    lay = layer(LAYERS["conv_pw"])
    for t in tilings(lay, step, "fp32", 16 * 1024, 8, whole_layer=True):
        case = whole_layer_case(t)
        tile = dict(t.tile)
        assert case.entry.name == "conv_pw_layer" and case.step == step
        assert case.shape == {**lay.sizes, "tCo": tile.get("Co", 40), "tH": tile.get("H", 9), "tCi": tile.get("Ci", 24)}
        largest = max(t.pieces, key=lambda p: sum(p.case.footprint.values())).case
        one = {k: v for k, v in largest.footprint.items() if k != "transpose_buffer"}
        assert t.l1_bytes == 2 * sum(one.values()) + largest.footprint["transpose_buffer"] <= 16 * 1024, t.label


def test_only_a_kind_with_a_whole_layer_run_and_its_options_gets_one():
    hwc = layer(LAYERS["conv_pw"] + "\nHWC=1")            # the whole-layer pointwise is CHW only
    assert all(whole_layer_case(t) is None for t in tilings(hwc, "fw", "fp32", 16 * 1024, 8))
    assert all(whole_layer_case(t) is None for t in tilings(layer(LAYERS["conv_dw"]), "fw", "fp32", 16 * 1024, 8))
    assert all(whole_layer_case(t).entry.name == "linear_layer"
               for t in tilings(layer(LAYERS["linear"]), "wg", "fp32", 16 * 1024, 8))


def test_with_layer_time_a_tiling_costs_its_whole_layer_run(tmp_path):
    """The Evaluator with layer_time measures one whole-layer case per tiling
    (on host: the DMA is a copy) for every kernel of the method; each outcome
    says its cost, and a kind without a whole-layer run keeps the tile sum."""
    session, db, _ = cli.open_tuning(make_target("host"), ROOT / "lib_c", tmp_path / "cache", 60.0, 16 * 1024, (1,))
    evaluator = Evaluator(session, db, (1,), layer_time=True)
    pw = tilings(layer(LAYERS["conv_pw"]), "fw", "fp32", 16 * 1024, 1, 2, whole_layer=True)
    dw = tilings(layer(LAYERS["conv_dw"]), "wg", "fp32", 16 * 1024, 1, 1)
    outcomes, direct = evaluator.evaluate(pw[-1]), evaluator.evaluate(dw[0])
    assert len(outcomes) == len(kernel_table("fp32")) and all(o.passed and o.cost == "layer" for o in outcomes)
    measured = evaluator.measurements(whole_layer_case(pw[-1]))
    assert {o.latency for o in outcomes} == {m.latency for m in measured.values()}
    assert pw[-1].calls > 1 and direct and all(o.passed and o.cost == "tiles" for o in direct)


def test_output_row_tiles_read_their_halo_and_keep_the_padding_at_the_borders():
    lay = layer(LAYERS["conv2d_strided_padded"])   # H 13, Hk 4, stride 2, U 2, D 1: Ho 7
    t = next(t for t in tilings(lay, "fw", "fp32", 1 << 30, 8) if dict(t.tile) == {"Co": 10, "Ho": 3})
    shapes = sorted((p.case.shape["H"], p.case.shape["U"], p.case.shape["D"], p.count) for p in t.pieces)
    # rows 0-2 read input rows -2..5 (2 padding rows), rows 3-5 read 4..11, row 6 reads 10..13 (1 padding row)
    assert shapes == [(3, 0, 1, 1), (6, 2, 0, 1), (8, 0, 0, 1)]


def test_depthwise_channel_tiles_split_evenly_over_the_cores():
    lay = layer(LAYERS["conv_dw"])
    for t in tilings(lay, "wg", "fp32", 1 << 30, 8):
        tile = dict(t.tile)["C"]
        assert tile % 8 == 0 or tile == 40, t.label


def test_a_layer_that_cannot_fit_at_all_says_what_the_smallest_tile_needs():
    lay = layer("name='big'\ntype='conv_dw'\nC=1\nH=64\nW=64\nHk=3\nWk=3")
    with pytest.raises(NoFit, match=r"no tiling fits 100 bytes of L1; the smallest \(direct Ho1\) needs \d+"):
        tilings(lay, "fw", "fp32", 100, 8)


# ---- the tuner, end to end on the host ---------------------------------------------------------

def test_tuning_writes_every_output_and_a_rerun_makes_no_target_run(tmp_path, capsys):
    net = write(tmp_path, SMALL_NET)
    status, best, rows = tune(tmp_path, net, "--tiles", "3", "--cores", "1,8")
    first = capsys.readouterr().out
    assert status == 0
    assert {(r["layer"], r["step"]) for r in rows} == {("fc", "fw"), ("fc", "wg"), ("fc", "ig"), ("pw", "fw")}
    for layer_name, steps in (("fc", ("fw", "wg", "ig")), ("pw", ("fw",))):
        for step in steps:
            record = best["layers"][layer_name][step]
            mine = [r for r in rows if (r["layer"], r["step"]) == (layer_name, step)]
            passing = [r for r in mine if r["status"] == "passed"]
            winner = min(passing, key=lambda r: int(r["latency"]))
            assert int(winner["latency"]) == record["latency"] and record["kernel"] in {
                r["kernel"] for r in passing if int(r["latency"]) == record["latency"]}
            assert [r for r in mine if r["best"] == "1"][0]["kernel"] == record["kernel"]
            assert {r["cores"] for r in mine} == {"1", "8"}
    header = (tmp_path / "reports" / "small.h").read_text()
    assert f"#define FC_OPT_MATMUL_TYPE_WG {best['layers']['fc']['wg']['kernel_index']} " in header
    assert f"#define PW_TILE_CO_FW {best['layers']['pw']['fw']['tile']['Co']}" in header
    cases = ET.parse(tmp_path / "reports" / "junit.xml").getroot().findall("testcase")
    assert sorted(c.get("name") for c in cases) == ["small.fc.fw", "small.fc.ig", "small.fc.wg", "small.pw.fw"]
    assert all(c.find("failure") is None for c in cases)
    assert len(list((tmp_path / "reports").glob("heatmap_*.svg"))) == 4
    assert "0 target runs" not in first

    status, again, _ = tune(tmp_path, net, "--tiles", "3", "--cores", "1,8", reports="again")
    assert status == 0 and "autotune: 0 target runs" in capsys.readouterr().out
    for layer_name, steps in again["layers"].items():
        for step in ("fw", "wg", "ig"):
            if step in steps:
                assert steps[step]["latency"] == best["layers"][layer_name][step]["latency"]

    status, replayed, _ = tune(tmp_path, net, "--tiles", "3", "--cores", "1,8", "--replay", reports="replay")
    assert status == 0 and "autotune: 0 target runs" in capsys.readouterr().out
    assert replayed["layers"]["fc"]["wg"]["kernel"] == best["layers"]["fc"]["wg"]["kernel"]


def test_an_interrupted_tuning_resumes_and_measures_nothing_twice(tmp_path, monkeypatch, capsys):
    net = write(tmp_path, SMALL_NET)
    cold = tmp_path / "cold"
    cold.mkdir()
    assert tune(cold, net, "--tiles", "3")[0] == 0
    cold_runs = json.loads((cold / "reports" / "best.json").read_text())["target_runs"]

    calls = {"n": 0}
    real = cli.Progress.__call__

    def interrupt_after_two(self, *args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, *args)

    monkeypatch.setattr(cli.Progress, "__call__", interrupt_after_two)
    status = cli.main([str(net), "--target", "host", "--ptl-cache", str(tmp_path / "cache"),
                       "--reports-dir", str(tmp_path / "reports"), "--tiles", "3"])
    assert status == 130 and "run the same command again to resume" in capsys.readouterr().err
    monkeypatch.setattr(cli.Progress, "__call__", real)
    status, best, _ = tune(tmp_path, net, "--tiles", "3")
    assert status == 0
    assert 0 < best["target_runs"] < cold_runs


def test_replay_with_an_empty_database_measures_nothing_and_says_so(tmp_path, capsys):
    net = write(tmp_path, SMALL_NET)
    status, best, rows = tune(tmp_path, net, "--tiles", "2", "--replay")
    assert status == 1 and best["target_runs"] == 0
    assert {r["status"] for r in rows} == {"not_measured"}
    assert "NOT TUNED" in capsys.readouterr().out


def test_the_tuner_reuses_what_the_regression_measured(tmp_path, capsys):
    """conv_pw 8->9 on 3x3 is a regression case; tuning that layer whole at 8
    cores finds every kernel of it in the results database."""
    cache = tmp_path / "cache"
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_ops.py"), "--family", "conv_dw_pw", "-q",
                             "-p", "no:xdist", "--target", "host", "--ptl-cache", str(cache), "--reports-dir",
                             str(tmp_path / "regression"), "-k", "conv_pw-fp32-fw-Ci8xCo9xH3xW3-HWC0 and c8"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:]
    net = write(tmp_path, "[[layer]]\nname = 'pw'\ntype = 'conv_pw'\nCi = 8\nCo = 9\nH = 3\nW = 3\nsteps = ['fw']\n")
    status, best, _ = tune(tmp_path, net, "--tiles", "1")
    kernels = len(kernel_table("fp32"))   # every kernel at 8 cores
    assert status == 0 and best["target_runs"] == 0 and best["reused_variants"] == kernels
    assert f"autotune: 0 target runs, {kernels} measurements reused" in capsys.readouterr().out


needs_qemu = pytest.mark.skipif(toolchain.unavailable_reason() is not None,
                                reason=f"QEMU toolchain: {toolchain.unavailable_reason()}")


@needs_qemu
def test_a_fast_and_wrong_kernel_is_never_chosen_and_the_tuner_says_why(tmp_path, capsys):
    """On QEMU (exact instruction counts) the mutant kernel is the fastest of
    all, and wrong: the tuner reports it as numeric and picks another."""
    mutant = mutant_library(tmp_path / "lib", FAST_AND_WRONG)
    net = write(tmp_path, "[[layer]]\nname = 'pw'\ntype = 'conv_pw'\nCi = 16\nCo = 16\nH = 4\nW = 4\n"
                          "steps = ['fw']\n")
    status = cli.main([str(net), "--target", "qemu", "--trainlib", str(mutant), "--ptl-cache", str(tmp_path / "c"),
                       "--reports-dir", str(tmp_path / "reports"), "--tiles", "2"])
    out = capsys.readouterr().out
    assert status == 0
    with open(tmp_path / "reports" / "measurements.csv") as f:
        rows = list(csv.DictReader(f))
    wrong = [r for r in rows if r["kernel"] == FAST_AND_WRONG_KERNEL]
    assert wrong and {r["status"] for r in wrong} == {"numeric"}
    best = json.loads((tmp_path / "reports" / "best.json").read_text())["layers"]["pw"]["fw"]
    assert best["kernel"] != FAST_AND_WRONG_KERNEL
    assert min(int(r["latency"]) for r in wrong) < best["latency"], "the mutant kernel is not the fastest"
    assert f"{FAST_AND_WRONG_KERNEL} (numeric)" in out and "did not pass and were not chosen" in out


def test_the_pytest_mode_gives_one_test_per_layer_and_step_with_the_best_as_properties(tmp_path):
    net = write(tmp_path, SMALL_NET)
    junit = tmp_path / "pytest.xml"
    argv = [sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_autotune.py"), "--tune", str(net), "-n", "0",
            "--target", "host", "--tune-tiles", "2", "--ptl-cache", str(tmp_path / "cache"),
            "--reports-dir", str(tmp_path / "reports"), "--junitxml", str(junit), "-q"]
    result = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and "4 passed" in result.stdout, result.stdout[-2000:]
    cases = {c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}
             for c in ET.parse(junit).getroot().iter("testcase")}
    assert sorted(cases) == ["test_autotune[small.fc.fw]", "test_autotune[small.fc.ig]", "test_autotune[small.fc.wg]",
                             "test_autotune[small.pw.fw]"]
    best = json.loads((tmp_path / "reports" / "autotune" / "best.json").read_text())["layers"]
    assert cases["test_autotune[small.fc.wg]"]["kernel"] == best["fc"]["wg"]["kernel"]
    assert cases["test_autotune[small.pw.fw]"]["latency"] == str(best["pw"]["fw"]["latency"])

    parallel = subprocess.run(argv[:-1] + ["-n", "2"], capture_output=True, text=True, cwd=ROOT)
    assert parallel.returncode == 4 and "add -n 0" in parallel.stderr, parallel.stderr
    untuned = subprocess.run(argv[:4] + ["-q", "-p", "no:xdist"], capture_output=True, text=True, cwd=ROOT)
    assert untuned.returncode == 4 and "give it a network, --tune NET.toml" in untuned.stderr, untuned.stderr
    assert "Traceback" not in untuned.stderr + untuned.stdout


# ---- what the outputs say after a partial run, odd names, and huge layers (issue 22) ----------

def header_defines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("#define")]


def test_a_run_that_tunes_a_subset_updates_its_entries_and_keeps_the_others(tmp_path, capsys):
    """The README's second command after its first: the header keeps every
    layer step the second run did not tune, and says which came from where."""
    net = write(tmp_path, SMALL_NET)
    header = tmp_path / "reports" / "small.h"
    status, full, full_rows = tune(tmp_path, net, "--tiles", "2")
    assert status == 0
    before = header_defines(header)
    assert any(d.startswith("#define FC_") for d in before) and any(d.startswith("#define PW_") for d in before)
    capsys.readouterr()

    status, merged, rows = tune(tmp_path, net, "--tiles", "2", "--layer", "pw", "--steps", "fw", "--cores", "1,8",
                               "--strategy", "greedy")
    err = capsys.readouterr().err
    assert status == 0
    assert "kept 3 earlier layer steps not tuned in this run (fc fw, fc wg, fc ig)" in err, err
    after = header_defines(header)
    assert [d for d in after if d.startswith("#define FC_")] == [d for d in before if d.startswith("#define FC_")]
    assert len(after) == len(before)
    assert merged["layers"]["fc"] == full["layers"]["fc"]
    assert merged["layers"]["pw"]["fw"]["tuned_with"] == {"strategy": "greedy", "tiles": 2, "cores": "1,8"}
    assert "(an earlier run: strategy exhaustive, cores 8)" in header.read_text()
    assert [r for r in rows if r["layer"] == "fc"] == [r for r in full_rows if r["layer"] == "fc"]
    assert {r["cores"] for r in rows if r["layer"] == "pw"} == {"1", "8"}

    # Other settings: the earlier entries are not valid for this run, and that is said.
    status, other, _ = tune(tmp_path, net, "--tiles", "2", "--layer", "pw", "--steps", "fw", "--l1-bytes", "32768")
    err = capsys.readouterr().err
    assert status == 0
    assert "the earlier results of fc fw, fc wg, fc ig" in err and "l1_bytes 65536 (this run: 32768)" in err, err
    assert list(other["layers"]) == ["pw"] and not any("FC_" in d for d in header_defines(header))

    # A layer whose sizes changed since: its earlier entries are dropped, and that is said.
    assert tune(tmp_path, net, "--tiles", "2")[0] == 0
    capsys.readouterr()
    write(tmp_path, SMALL_NET.replace("out = 24", "out = 20"))
    status, changed, _ = tune(tmp_path, net, "--tiles", "2", "--layer", "pw")
    err = capsys.readouterr().err
    assert status == 0 and "fc fw, fc wg, fc ig" in err and "the layer changed" in err, err
    assert list(changed["layers"]) == ["pw"]

    # An earlier best.json that cannot be read: said, and replaced whole.
    (tmp_path / "reports" / "best.json").write_text("{damaged")
    status, _, _ = tune(tmp_path, net, "--tiles", "2", "--layer", "pw")
    err = capsys.readouterr().err
    assert status == 0 and "best.json is unreadable" in err and "none of its entries is kept" in err, err


POOL_NET = SMALL_NET + """
[[layer]]
name = "pool"
type = "avgpool"
C = 4
H = 4
W = 4
Hk = 2
Wk = 2
Hs = 2
Ws = 2
"""


@pytest.mark.parametrize("args, message", [
    (["--layer", "pool", "--steps", "ig"], "--steps ig: pool (avgpool) has steps fw, bw: nothing to tune there"),
    (["--layer", "pool", "--layer", "fc", "--steps", "ig"], "--steps ig: pool (avgpool) has steps fw, bw"),
    (["--layer", "fc", "--steps", "bw"], "--steps bw: fc (linear) has steps fw, wg, ig"),
])
def test_a_step_the_layers_do_not_have_is_one_error_and_writes_nothing(tmp_path, args, message):
    net = write(tmp_path, POOL_NET)
    result = subprocess.run([sys.executable, "-m", "harness", "autotune", str(net), "--target", "host",
                             "--ptl-cache", str(tmp_path / "cache"), "--reports-dir", str(tmp_path / "reports"), *args],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr and [line for line in lines if "error" in line] == lines[-1:]
    assert not (tmp_path / "reports").exists()


def test_writing_the_outputs_of_no_layer_step_is_an_error(tmp_path):
    from harness.autotune.outputs import write_all
    with pytest.raises(ValueError, match="no layer step"):
        write_all([], {"network": "x"}, tmp_path / "reports")
    assert not (tmp_path / "reports").exists()


LINEAR = "type = 'linear'\ninp = 4\nout = 2\nsteps = ['fw']\n"


@pytest.mark.parametrize("first, second", [("if", "IF"), ("conv-1", "conv_1"), ("a b", "A.B")])
def test_layer_names_that_become_the_same_c_identifier_are_an_error_naming_both(tmp_path, first, second):
    net = write(tmp_path, f"[[layer]]\nname = '{first}'\n{LINEAR}[[layer]]\nname = '{second}'\n{LINEAR}")
    result = subprocess.run([sys.executable, "-m", "harness", "autotune", str(net), "--target", "host",
                             "--reports-dir", str(tmp_path / "reports")], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2, result.stderr
    assert f"layers '{first}' and '{second}' both become the C macro prefix" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "reports").exists()


def test_names_that_are_not_c_identifiers_or_file_names_give_a_header_that_compiles_inside_the_reports(tmp_path):
    """Spaces, `-`, a leading digit, a C keyword, and a network name that
    tries to leave the reports dir."""
    names = {"1st layer": "LAYER_1ST_LAYER", "while": "WHILE", "conv-1": "CONV_1", "_x": "LAYER__X"}
    text = "name = '../../up/my net-1'\n" + "".join(f"[[layer]]\nname = '{n}'\n{LINEAR}" for n in names)
    net = write(tmp_path, text)
    status, best, _ = tune(tmp_path, net, "--tiles", "1", "--cores", "1")
    assert status == 0 and set(best["layers"]) == set(names)
    header = tmp_path / "reports" / "______up_my_net-1.h"
    assert header.exists()
    # no header anywhere else (the cache holds the library's copy, harness/library_snapshot.py)
    assert [p for p in tmp_path.rglob("*.h") if p != header and not p.is_relative_to(tmp_path / "cache")] == []
    assert {p.name for p in (tmp_path / "reports").glob("heatmap_*")} == {
        "heatmap_1st_layer_fw.svg", "heatmap_while_fw.svg", "heatmap_conv-1_fw.svg", "heatmap__x_fw.svg"}
    source = tmp_path / "use.c"
    source.write_text(f'#include "{header}"\n#include "{header}"\n'
                      + "".join(f"int {prefix.lower()}_cores = {prefix}_NUM_CORES_FW;\n"
                                for prefix in names.values()))
    compiled = subprocess.run(["gcc", "-std=c99", "-Wall", "-Werror", "-pedantic", "-fsyntax-only", str(source)],
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    assert "#ifndef PTL_AUTOTUNE_______UP_MY_NET_1_H" in header.read_text()


# ---- the tiler: what it enumerates, how long it may take ----------------------------------------

def walked_tile_sizes(length: int, multiple_of: int = 1) -> list[int]:
    """The definition: ceil(length / k) for every k (what the tiler used to walk)."""
    sizes = sorted({-(-length // k) for k in range(1, length + 1)}, reverse=True)
    return [t for t in sizes if multiple_of == 1 or t % multiple_of == 0 or t == length]


def test_tile_sizes_are_those_of_the_definition_without_walking_every_size():
    from harness.autotune.tiler import tile_sizes
    for length in range(1, 1200):
        for multiple_of in (1, 8):
            assert tile_sizes(length, multiple_of) == walked_tile_sizes(length, multiple_of), (length, multiple_of)
    sizes = tile_sizes(10**9)
    assert sizes[0] == 10**9 and sizes[-1] == 1 and len(sizes) <= 2 * 31623


def walked_pieces(tiling) -> list[tuple[dict, int]]:
    """A tiling's pieces found by visiting every tile, as the tiler used to."""
    from collections import Counter
    from itertools import product

    from harness.autotune.tiler import _piece_shape, full_length
    axes = [axis for axis, _ in tiling.tile]
    segments = [[(start, min(size, full_length(tiling.layer, tiling.step, axis) - start))
                 for start in range(0, full_length(tiling.layer, tiling.step, axis), size)]
                for axis, size in tiling.tile]
    shapes = Counter(tuple(_piece_shape(tiling.layer, dict(zip(axes, cut))).items()) for cut in product(*segments))
    return [(dict(shape), count) for shape, count in shapes.items()]


PADDED = {   # output-row tiles that keep padding, read only padding, or straddle both borders
    "tall_pads": "name='d'\ntype='conv_dw'\nC=8\nH=5\nW=3\nHk=5\nWk=1\nU=4\nD=4",
    "strided": "name='c'\ntype='conv2d'\nCi=2\nH=23\nW=3\nCo=5\nHk=3\nWk=3\nsh=3\nU=1\nD=2\nL=1\nR=1",
    "kernel_eq_input": "name='c'\ntype='conv2d'\nCi=1\nH=4\nW=4\nCo=3\nHk=4\nWk=4",
}


def test_a_tiling_counts_the_pieces_that_visiting_every_tile_finds():
    examples = [layer(text) for text in (*LAYERS.values(), *PADDED.values())]
    examples += [lay for path in sorted((ROOT / "networks").glob("*.toml")) for lay in load_network(path).layers]
    checked = 0
    for lay in examples:
        for step in lay.steps:
            try:
                found = tilings(lay, step, "fp32", 1 << 30, 8)
            except NoFit:
                continue
            for t in found:
                assert [(p.case.shape, p.count) for p in t.pieces] == walked_pieces(t), (lay.describe(), t.label)
                checked += 1
    assert checked > 1000


def test_a_layer_no_target_can_hold_is_refused_at_once(tmp_path):
    from harness.autotune.tiler import LayerTooLarge
    huge = layer("name='f'\ntype='linear'\ninp=1000000000\nout=4")
    with pytest.raises(LayerTooLarge, match=r"more than any target holds \(134,217,728 bytes, QEMU's RAM\)"):
        tilings(huge, "fw", "fp32", 64 * 1024, 8)
    net = write(tmp_path, "[[layer]]\nname = 'f'\ntype = 'linear'\ninp = 1000000000\nout = 4\n")
    result = subprocess.run([sys.executable, "-m", "harness", "autotune", str(net), "--target", "host",
                             "--reports-dir", str(tmp_path / "reports")], capture_output=True, text=True, cwd=ROOT,
                            timeout=60)
    assert result.returncode == 2 and "f (linear inp=1000000000 out=4 bias=0) fw fp32: its tensors need" \
        in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "reports").exists()


def test_a_long_enumeration_reports_its_progress_to_the_end():
    big = layer("name='f'\ntype='linear'\ninp=2048\nout=1024")
    calls = []
    found = tilings(big, "wg", "fp32", 64 * 1024, 8, 8, progress=lambda done, total: calls.append((done, total)))
    assert found and len(calls) >= 2
    assert [done for done, _ in calls] == sorted({done for done, _ in calls}) and calls[-1][0] == calls[-1][1]
    stream = io.StringIO()
    cli.Progress(stream).enumerating(cli.StepResult(big, "wg"), 2000, 5859)
    assert "f wg: listing tilings, 2000/5859 candidates" in stream.getvalue()


# ---- the pytest mode: options checked once --------------------------------------------------------

@pytest.mark.parametrize("text, extra, message", [
    # --tune-cores is checked before collection: tests/test_options.py
    (f"[[layer]]\nname = 'if'\n{LINEAR}[[layer]]\nname = 'IF'\n{LINEAR}", [], "both become the C macro prefix IF_"),
])
def test_a_bad_tuning_in_the_pytest_mode_is_one_error_not_one_per_test(tmp_path, text, extra, message):
    net = write(tmp_path, text)
    result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suite" / "test_autotune.py"), "--tune",
                             str(net), "-n", "0", "--target", "host", "--ptl-cache", str(tmp_path / "cache"),
                             "--reports-dir", str(tmp_path / "reports"), "-q", *extra],
                            capture_output=True, text=True, cwd=ROOT)
    out = result.stdout + result.stderr
    assert result.returncode == 2 and out.count(message) == 1, out
    assert "1 error" in out and "Traceback" not in out and "test_autotune[" not in out, out
