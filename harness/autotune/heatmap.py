"""A kernel x tile heatmap of autotuner costs as a standalone SVG file, without
plotting dependencies. One cell per (kernel, tile): its colour is the cost on a
log scale relative to the cheapest passing measurement (dark green = best,
yellow = 2x, dark red = 10x or worse); failed configurations are hatched grey,
unmeasured ones white. Every cell has a <title> tooltip. Tiles of several
methods (im2col, direct) are drawn as one panel per method, stacked."""
from __future__ import annotations

import math
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from harness.files import write_atomically

TOP, MARGIN, CHAR_W, MIN_W, PANEL_HEAD = 58, 8, 7.0, 460, 20
# (position on log10(cost / best) in [0, 1], colour): 1x, 2x, >=10x the best
STOPS = [(0.0, (0x1a, 0x7f, 0x37)), (math.log10(2), (0xf2, 0xd0, 0x24)), (1.0, (0x8b, 0x00, 0x00))]
FAILED_FILL, EMPTY_FILL = "url(#failed)", "#fafafa"


def cost_colour(ratio: float) -> str:
    """The cell colour of a cost `ratio` times the best, as #rrggbb."""
    t = min(1.0, max(0.0, math.log10(ratio))) if ratio > 0 else 0.0
    for (t0, c0), (t1, c1) in zip(STOPS, STOPS[1:]):
        if t <= t1:
            f = (t - t0) / (t1 - t0)
            return "#" + "".join(f"{round(a + (b - a) * f):02x}" for a, b in zip(c0, c1))
    raise AssertionError("unreachable")  # pragma: no cover


def _ink(colour: str) -> str:
    """Black or white, whichever reads better on `colour`."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#fff"


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def _short(name: str, limit: int = 40) -> str:
    return name if len(name) <= limit else name[:limit - 1] + "\u2026"


def _legend() -> list[str]:
    gradient = "".join(f'<stop offset="{t:.3f}" stop-color="{cost_colour(10 ** t)}"/>' for t, _ in STOPS)
    out = ['<defs>',
           f'<linearGradient id="scale">{gradient}</linearGradient>',
           '<pattern id="failed" width="6" height="6" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="6" height="6" fill="#bbb"/>'
           '<line x1="0" y1="0" x2="0" y2="6" stroke="#777" stroke-width="2"/></pattern>',
           '</defs>',
           f'<rect x="{MARGIN}" y="24" width="150" height="10" fill="url(#scale)"/>',
           f'<text x="{MARGIN}" y="46" font-size="9">1x</text>',
           f'<text x="{MARGIN + 150 * STOPS[1][0]:.1f}" y="46" font-size="9" text-anchor="middle">2x</text>',
           f'<text x="{MARGIN + 150}" y="46" font-size="9" text-anchor="end">{escape(">=10x best")}</text>']
    x = MARGIN + 170
    for fill, stroke, label in ((FAILED_FILL, "none", "failed"), (EMPTY_FILL, "#ccc", "not measured"),
                                ("none", "#000", "best")):
        width = 2.5 if label == "best" else 1
        out.append(f'<rect x="{x}" y="23" width="12" height="12" fill="{fill}" stroke="{stroke}" '
                   f'stroke-width="{width}"/><text x="{x + 16}" y="33">{label}</text>')
        x += 30 + CHAR_W * len(label)
    return out


def _text_width(text: str, size: float = 11) -> float:
    """An estimate of the width of `text` at font size `size`: CHAR_W per character at size 11."""
    return len(text) * CHAR_W * size / 11


def _panels(rows: list[str], columns: list[str], keys: set[tuple[str, str]], groups: dict[str, str]
            ) -> list[tuple[str, list[str], list[str]]]:
    """(name, rows, columns) of each panel: one unnamed panel unless the columns fall in two or more
    groups; then one per group, in order of first column, with its columns and the rows that have a
    key in them (all rows when none has)."""
    names = list(dict.fromkeys(groups.get(c, "") for c in columns))
    if len(names) < 2:
        return [("", rows, columns)]
    panels = []
    for name in names:
        own = [c for c in columns if groups.get(c, "") == name]
        panels.append((name, [r for r in rows if any((r, c) in keys for c in own)] or rows, own))
    return panels


def _grid(rows: list[str], columns: list[str], top: float, left: float, cw: int, ch: int,
          values: dict[tuple[str, str], float | None], failed: dict[tuple[str, str], str],
          best: tuple[str, str] | None, low: float | None, unit: str) -> list[str]:
    """One rows x columns grid with its top-left cell at (left, top): row labels, cells, column labels."""
    out, cells, last = [], [], []
    for i, row in enumerate(rows):
        y = top + i * ch
        out.append(f'<text x="{left - MARGIN}" y="{y + ch / 2 + 4:.1f}" text-anchor="end">{escape(_short(row))}</text>')
        for j, col in enumerate(columns):
            x, key, name = left + j * cw, (row, col), f"{row} / {col}"
            value, text = values.get((row, col)), None
            stroke, width, kind = "#fff", 1, "cell"
            if key in failed:
                fill, tip, kind = FAILED_FILL, f"{name}: failed ({failed[key]})", "cell failed"
            elif value is None:
                fill, tip, stroke, kind = EMPTY_FILL, f"{name}: not measured", "#ccc", "cell missing"
            else:
                ratio = value / low if low and low > 0 else (1.0 if value == low else math.inf)
                fill = cost_colour(ratio)
                tip = f"{name}: {_number(value)} {unit} ({ratio:.2f}x best)"
                text = f"{ratio:.2f}" if ratio < 9.995 else f"{ratio:.0f}"
            if key == best:
                stroke, width, kind, tip = "#000", 3, kind + " best", tip + " [best]"
            cell = [f'<rect class="{kind}" data-row={quoteattr(row)} data-col={quoteattr(col)} x="{x}" y="{y}" '
                    f'width="{cw}" height="{ch}" fill="{fill}" stroke="{stroke}" stroke-width="{width}">'
                    f'<title>{escape(tip)}</title></rect>']
            if text is not None and cw >= 36:
                cell.append(f'<text x="{x + cw / 2:.1f}" y="{y + ch / 2 + 3.5:.1f}" text-anchor="middle" '
                            f'font-size="10" fill="{_ink(fill)}" pointer-events="none">{text}</text>')
            (last if key == best else cells).extend(cell)  # drawn last so neighbours do not cover the outline
    out += cells + last
    bottom = top + len(rows) * ch
    for j, col in enumerate(columns):
        x, y = left + j * cw + cw / 2 + 4, bottom + 6
        out.append(f'<text x="{x:.1f}" y="{y}" text-anchor="end" transform="rotate(-45 {x:.1f} {y})">'
                   f'{escape(_short(col))}</text>')
    return out


def heatmap_svg(title: str, rows: list[str], columns: list[str], values: dict[tuple[str, str], float | None],
                failed: dict[tuple[str, str], str], best: tuple[str, str] | None, unit: str,
                groups: dict[str, str] | None = None) -> str:
    """rows: kernel names (y axis), columns: tile labels (x axis), values[(row, col)]: the measured cost
    (lower is better) or None/missing when not measured; failed[(row, col)]: a short failure class
    ("numeric", "crash", ...) for configurations that ran but computed the wrong result; groups[col]: the
    column's group (its method): columns of two or more groups are drawn as one panel per group, stacked,
    each headed by the group's name, with the rows that have a value or failure in its columns. Colours
    are relative to the cheapest passing value of all panels. Returns SVG text."""
    head = f'<text x="{MARGIN}" y="16" font-size="13" font-weight="bold">{escape(title)}</text>'
    width = 2 * MARGIN + _text_width(title, 13)
    if not rows or not columns:
        return "\n".join([f'<svg xmlns="http://www.w3.org/2000/svg" width="{round(max(MIN_W, width))}" height="60" '
                          'font-family="sans-serif" font-size="11">', head,
                          f'<text x="{MARGIN}" y="42" fill="#666">no measurements</text>', "</svg>"])
    panels = _panels(rows, columns, {*values, *failed}, groups or {})
    cw = max(18, min(56, 720 // len(columns)))
    ch = max(14, min(24, 660 // sum(len(r) for _, r, _ in panels)))
    row_w = CHAR_W * max(len(_short(r)) for r in rows) + 2 * MARGIN
    col_drop = 0.72 * CHAR_W * max(len(_short(c)) for c in columns) + MARGIN
    left = round(max(row_w, col_drop - cw / 2 + MARGIN))
    passing = [v for key, v in values.items() if v is not None and key not in failed
               and key[0] in rows and key[1] in columns]
    low = min(passing, default=None)
    body, y = [], TOP
    for name, panel_rows, panel_columns in panels:
        body.append(f'<g class="panel" data-panel={quoteattr(name)}>')
        if name:
            body.append(f'<text class="panel-title" x="{MARGIN}" y="{y + 13}" font-size="12" font-weight="bold">'
                        f'{escape(name)}</text>')
            y += PANEL_HEAD
            width = max(width, 2 * MARGIN + _text_width(name, 12))
        body += _grid(panel_rows, panel_columns, y, left, cw, ch, values, failed, best, low, unit) + ["</g>"]
        width = max(width, left + len(panel_columns) * cw + MARGIN)
        y += round(len(panel_rows) * ch + col_drop + MARGIN)
    return "\n".join([f'<svg xmlns="http://www.w3.org/2000/svg" width="{round(max(MIN_W, width))}" '
                      f'height="{y}" font-family="sans-serif" font-size="11">', head, *_legend(), *body,
                      "</svg>"])


def write_heatmap(path: Path, **kwargs) -> None:
    """Writes heatmap_svg(...) atomically: write to a temp file in the same directory, then os.replace."""
    write_atomically(Path(path), heatmap_svg(**kwargs).encode())
