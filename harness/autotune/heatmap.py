"""A kernel x tile heatmap of autotuner costs as a standalone SVG file, without
plotting dependencies. One cell per (kernel, tile): its colour is the cost on a
log scale relative to the cheapest passing measurement (dark green = best,
yellow = 2x, dark red = 10x or worse); failed configurations are hatched grey,
unmeasured ones white. Every cell has a <title> tooltip."""
from __future__ import annotations

import math
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from harness.files import write_atomically

TOP, MARGIN, CHAR_W, MIN_W = 58, 8, 7.0, 460
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


def heatmap_svg(title: str, rows: list[str], columns: list[str], values: dict[tuple[str, str], float | None],
                failed: dict[tuple[str, str], str], best: tuple[str, str] | None, unit: str) -> str:
    """rows: kernel names (y axis), columns: tile labels (x axis), values[(row, col)]: the measured cost
    (lower is better) or None/missing when not measured; failed[(row, col)]: a short failure class
    ("numeric", "crash", ...) for configurations that ran but computed the wrong result. Returns SVG text."""
    head = f'<text x="{MARGIN}" y="16" font-size="13" font-weight="bold">{escape(title)}</text>'
    if not rows or not columns:
        return "\n".join([f'<svg xmlns="http://www.w3.org/2000/svg" width="{MIN_W}" height="60" '
                          'font-family="sans-serif" font-size="11">', head,
                          f'<text x="{MARGIN}" y="42" fill="#666">no measurements</text>', "</svg>"])
    cw = max(18, min(56, 720 // len(columns)))
    ch = max(14, min(24, 660 // len(rows)))
    row_w = CHAR_W * max(len(_short(r)) for r in rows) + 2 * MARGIN
    col_drop = 0.72 * CHAR_W * max(len(_short(c)) for c in columns) + MARGIN
    left = round(max(row_w, col_drop - cw / 2 + MARGIN))
    bottom = TOP + len(rows) * ch
    passing = [v for key, v in values.items() if v is not None and key not in failed
               and key[0] in rows and key[1] in columns]
    low = min(passing, default=None)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(MIN_W, left + len(columns) * cw + MARGIN, 2 * MARGIN + 8 * len(title))}" '
           f'height="{round(bottom + col_drop + MARGIN)}" font-family="sans-serif" font-size="11">',
           head, *_legend()]
    cells, last = [], []
    for i, row in enumerate(rows):
        y = TOP + i * ch
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
    for j, col in enumerate(columns):
        x, y = left + j * cw + cw / 2 + 4, bottom + 6
        out.append(f'<text x="{x:.1f}" y="{y}" text-anchor="end" transform="rotate(-45 {x:.1f} {y})">'
                   f'{escape(_short(col))}</text>')
    out.append("</svg>")
    return "\n".join(out)


def write_heatmap(path: Path, **kwargs) -> None:
    """Writes heatmap_svg(...) atomically: write to a temp file in the same directory, then os.replace."""
    write_atomically(Path(path), heatmap_svg(**kwargs).encode())
