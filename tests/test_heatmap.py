"""harness/autotune/heatmap.py: the kernel x tile heatmap as standalone SVG."""
import xml.etree.ElementTree as ET

from harness.autotune.heatmap import STOPS, cost_colour, heatmap_svg, write_heatmap

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
