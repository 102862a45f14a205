"""harness/autotune/heatmap.py: the kernel x tile heatmap as standalone SVG."""
import tomllib
import xml.etree.ElementTree as ET

from harness.autotune.heatmap import CHAR_W, STOPS, cost_colour, heatmap_svg, write_heatmap
from harness.autotune.layers import parse_layer
from harness.autotune.outputs import write_heatmaps
from harness.autotune.tiler import tilings
from harness.autotune.tuner import NOT_MEASURED, Outcome, StepResult

NS = "{http://www.w3.org/2000/svg}"
ROWS = ["mm_fp32", "mm_fp32_unroll", "mm_fp32_simd"]
COLS = ["8x8", "16x8", "16x16", "32x16"]


def grid(**extra):
    values = {(r, c): 100.0 * (1 + i + j) for i, r in enumerate(ROWS) for j, c in enumerate(COLS)}
    values[("mm_fp32", "8x8")] = 100.0      # the best
    values[("mm_fp32_unroll", "8x8")] = 100.0  # ties with the best
    values[("mm_fp32_simd", "32x16")] = 1000.0  # 10x the best
    values[("mm_fp32_simd", "16x8")] = 5.0     # failed: must not become the reference
    del values[("mm_fp32_unroll", "32x16")]   # not measured
    values[("mm_fp32", "32x16")] = None       # not measured either
    kwargs = dict(title="matmul fw", rows=ROWS, columns=COLS, values=values,
                  failed={("mm_fp32_simd", "16x8"): "numeric"}, best=("mm_fp32", "8x8"), unit="cycles")
    return {**kwargs, **extra}


def cells(svg):
    root = ET.fromstring(svg)
    found = [e for e in root.iter(f"{NS}rect") if "cell" in e.get("class", "").split()]
    return root, {(e.get("data-row"), e.get("data-col")): e for e in found}, found


def tip(cell):
    return cell.find(f"{NS}title").text


def test_one_cell_per_row_and_column():
    _, by_key, found = cells(heatmap_svg(**grid()))
    assert len(found) == len(ROWS) * len(COLS)
    assert set(by_key) == {(r, c) for r in ROWS for c in COLS}


def test_best_cell_is_the_given_one_and_outlined():
    _, by_key, found = cells(heatmap_svg(**grid()))
    best = [e for e in found if "best" in e.get("class").split()]
    assert len(best) == 1 and best[0] is by_key[("mm_fp32", "8x8")]
    assert best[0].get("stroke") == "#000" and float(best[0].get("stroke-width")) >= 2
    _, _, found = cells(heatmap_svg(**grid(best=None)))
    assert not [e for e in found if "best" in e.get("class").split()]


def test_failed_and_missing_cells():
    _, by_key, _ = cells(heatmap_svg(**grid()))
    bad = by_key[("mm_fp32_simd", "16x8")]
    assert "failed" in bad.get("class").split() and "numeric" in tip(bad)
    assert bad.get("fill") not in {cost_colour(r) for r in (1, 2, 10)}
    for key in [("mm_fp32_unroll", "32x16"), ("mm_fp32", "32x16")]:
        assert "missing" in by_key[key].get("class").split()
        assert tip(by_key[key]).endswith("not measured")


def test_measured_tooltip_names_value_unit_and_ratio():
    _, by_key, _ = cells(heatmap_svg(**grid()))
    assert tip(by_key[("mm_fp32", "16x8")]) == "mm_fp32 / 16x8: 200 cycles (2.00x best)"
    assert tip(by_key[("mm_fp32_simd", "32x16")]) == "mm_fp32_simd / 32x16: 1,000 cycles (10.00x best)"


def test_colour_is_relative_to_best_passing_value():
    _, by_key, _ = cells(heatmap_svg(**grid()))
    best = by_key[("mm_fp32", "8x8")].get("fill")
    assert best == cost_colour(1.0) == "#%02x%02x%02x" % STOPS[0][1]
    assert by_key[("mm_fp32_unroll", "8x8")].get("fill") == best  # same value, same colour
    assert by_key[("mm_fp32_simd", "32x16")].get("fill") == "#%02x%02x%02x" % STOPS[-1][1]
    assert by_key[("mm_fp32_simd", "32x16")].get("fill") != best
    assert cost_colour(2.0) == "#%02x%02x%02x" % STOPS[1][1]
    assert cost_colour(50.0) == cost_colour(10.0) and cost_colour(0.5) == cost_colour(1.0)


def test_ratio_printed_in_cells_only_when_wide_enough():
    root, _, _ = cells(heatmap_svg(**grid()))
    texts = [e.text for e in root.iter(f"{NS}text")]
    assert "1.00" in texts and "2.00" in texts and "10" in texts
    wide = grid(columns=[f"t{i}" for i in range(40)], values={("mm_fp32", "t0"): 1.0}, best=None)
    root, _, found = cells(heatmap_svg(**wide))
    assert len(found) == 3 * 40
    assert "1.00" not in [e.text for e in root.iter(f"{NS}text")]


def test_names_are_escaped():
    key = ("<mm&fp32>", 'tile "a" <&>')
    svg = heatmap_svg(title="a <b> & c", rows=[key[0]], columns=[key[1]], values={key: 3.0}, failed={},
                      best=key, unit="<ms>")
    root, by_key, _ = cells(svg)
    assert list(by_key) == [key]
    assert tip(by_key[key]) == '<mm&fp32> / tile "a" <&>: 3 <ms> (1.00x best) [best]'
    texts = [e.text for e in root.iter(f"{NS}text")]
    assert "a <b> & c" in texts and key[0] in texts and key[1] in texts


def test_write_heatmap_is_atomic_and_parses(tmp_path):
    path = tmp_path / "heat.svg"
    write_heatmap(path, **grid())
    write_heatmap(path, **grid(title="again"))
    assert [p.name for p in tmp_path.iterdir()] == ["heat.svg"]
    root = ET.parse(path).getroot()
    assert root.tag == f"{NS}svg"
    assert "again" in [e.text for e in root.iter(f"{NS}text")]


def test_empty_grid_says_no_measurements():
    for rows, columns in [([], COLS), (ROWS, [])]:
        root, by_key, _ = cells(heatmap_svg(title="t", rows=rows, columns=columns, values={}, failed={},
                                            best=None, unit="cycles"))
        assert not by_key
        assert "no measurements" in [e.text for e in root.iter(f"{NS}text")]


LONG_TITLE = ("resnet20 conv1 (conv2d Ci=16 H=32 W=32 Co=16 Hk=3 Wk=3 sh=1 sw=1 L=1 R=1 U=1 D=1 HWC=0 bias=0) fw, "
              "fp32, 8 cores on gvsoc")


def test_the_svg_is_wide_enough_for_a_long_title():
    empty = dict(title=LONG_TITLE, rows=[], columns=[], values={}, failed={}, best=None, unit="cycles")
    for kwargs in (grid(title=LONG_TITLE), empty):
        root = ET.fromstring(heatmap_svg(**kwargs))
        head = next(e for e in root.iter(f"{NS}text") if e.text == LONG_TITLE)
        estimate = len(LONG_TITLE) * CHAR_W * float(head.get("font-size")) / 11   # CHAR_W: at font size 11
        assert float(root.get("width")) >= float(head.get("x")) + estimate


def two_method_step(tmp_path):
    """A conv2d fw step tuned on both methods, written by outputs.write_heatmaps: im2col with two matmul
    kernels (one not measured on one tiling), direct with its own kernel (failed on one tiling)."""
    lay = parse_layer(tomllib.loads("name='c'\ntype='conv2d'\nCi=3\nH=13\nW=7\nCo=10\nHk=4\nWk=3"), "test")
    by_method = {}
    for t in tilings(lay, "fw", "fp32", 16 * 1024, 8, limit=2):
        by_method.setdefault(t.method.label, []).append(t)
    (im_a, im_b), (di_a, di_b) = by_method["im2col"], by_method["direct"]
    outcomes = [Outcome(im_a, 0, "mm", 8, "passed", 1000), Outcome(im_b, 0, "mm", 8, "passed", 1500),
                Outcome(im_a, 2, "mm_u2", 8, "passed", 900), Outcome(di_a, 0, "direct", 8, "passed", 2000),
                Outcome(di_b, 0, "direct", 8, "numeric")]
    meta = {"network": "net", "dtype": "fp32", "target": "gvsoc", "unit": "cycles"}
    [path] = write_heatmaps([StepResult(lay, "fw", [im_a, im_b, di_a, di_b], outcomes)], meta, tmp_path)
    return ET.parse(path).getroot(), (im_a.label, im_b.label), (di_a.label, di_b.label)


def test_a_step_with_two_methods_has_one_panel_per_method(tmp_path):
    root, (im_a, im_b), (di_a, di_b) = two_method_step(tmp_path)
    panels = root.findall(f"{NS}g[@class='panel']")
    assert [p.get("data-panel") for p in panels] == ["im2col", "direct"]
    for p in panels:   # each panel is headed by its method
        assert [e.text for e in p.iter(f"{NS}text") if e.get("class") == "panel-title"] == [p.get("data-panel")]
    im2col, direct = ({(e.get("data-row"), e.get("data-col")): e for e in p.iter(f"{NS}rect")
                       if "cell" in e.get("class", "").split()} for p in panels)
    assert set(im2col) == {(k, t) for k in ("mm", "mm_u2") for t in (im_a, im_b)}
    assert set(direct) == {("direct", di_a), ("direct", di_b)}   # no matmul kernel rows, no im2col columns
    assert "missing" in im2col[("mm_u2", im_b)].get("class").split()   # genuinely not measured
    assert "failed" in direct[("direct", di_b)].get("class").split()
    assert [k for k, e in {**im2col, **direct}.items() if "best" in e.get("class").split()] == [("mm_u2", im_a)]
    assert direct[("direct", di_a)].get("fill") != cost_colour(1.0)   # colours are relative to the step's best
    bottom = max(float(e.get("y")) + float(e.get("height")) for e in im2col.values())
    assert all(float(e.get("y")) > bottom for e in direct.values())   # stacked, not overlapping
    width, height = float(root.get("width")), float(root.get("height"))
    assert all(float(e.get("x")) + float(e.get("width")) <= width and float(e.get("y")) + float(e.get("height"))
               <= height for e in [*im2col.values(), *direct.values()])


def test_a_step_with_one_method_is_one_untitled_panel():
    svg = heatmap_svg(**grid())
    assert heatmap_svg(**grid(groups={c: "im2col" for c in COLS})) == svg
    root = ET.fromstring(svg)
    assert [p.get("data-panel") for p in root.findall(f"{NS}g[@class='panel']")] == [""]
    assert not [e for e in root.iter(f"{NS}text") if e.get("class") == "panel-title"]


def test_a_replayed_configuration_without_a_measurement_is_drawn_not_measured_not_failed(tmp_path):
    lay = parse_layer(tomllib.loads("name='c'\ntype='conv2d'\nCi=3\nH=13\nW=7\nCo=10\nHk=4\nWk=3"), "test")
    first, second = [t for t in tilings(lay, "fw", "fp32", 16 * 1024, 8, limit=2) if t.method.label == "im2col"][:2]
    outcomes = [Outcome(first, 0, "mm", 8, "passed", 1000), Outcome(second, 0, "mm", 8, NOT_MEASURED),
                Outcome(first, 2, "mm_u2", 8, "numeric")]
    meta = {"network": "net", "dtype": "fp32", "target": "qemu", "unit": "instructions"}
    [path] = write_heatmaps([StepResult(lay, "fw", [first, second], outcomes)], meta, tmp_path)
    by_key = {(e.get("data-row"), e.get("data-col")): e.get("class").split()
              for e in ET.parse(path).getroot().iter(f"{NS}rect") if "cell" in e.get("class", "").split()}
    assert "missing" in by_key[("mm", second.label)] and "failed" not in by_key[("mm", second.label)]
    assert "failed" in by_key[("mm_u2", first.label)]
