"""A horizontal bar chart as a standalone SVG file, without plotting
dependencies: one group of bars per series, one bar per label."""
from __future__ import annotations

from html import escape
from pathlib import Path

from harness.files import write_atomically

ROW, LABEL_W, BAR_W, GAP, TOP = 16, 190, 420, 26, 44


def bar_chart(path: Path, title: str, unit: str, groups: dict[str, list[tuple[str, float]]],
              goal: float | None = None) -> None:
    """groups: series name -> [(label, value)]. A dashed line marks `goal`."""
    rows = sum(len(bars) + 1 for bars in groups.values())
    height = TOP + rows * ROW + GAP
    top = max(v for bars in groups.values() for _, v in bars)
    scale = BAR_W / top
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LABEL_W + BAR_W + 90}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="6" y="16" font-size="13" font-weight="bold">{escape(title)}</text>']
    y = TOP
    for series, bars in groups.items():
        out.append(f'<text x="6" y="{y + 12}" font-weight="bold">{escape(series)}</text>')
        y += ROW
        best = min(v for _, v in bars)
        for label, value in bars:
            colour = "#2a7" if value == best else "#68a"
            out.append(f'<text x="{LABEL_W - 6}" y="{y + 11}" text-anchor="end">{escape(label)}</text>')
            out.append(f'<rect x="{LABEL_W}" y="{y + 2}" width="{value * scale:.1f}" height="{ROW - 4}" '
                       f'fill="{colour}"/>')
            out.append(f'<text x="{LABEL_W + value * scale + 4:.1f}" y="{y + 11}">{value:.2f}</text>')
            y += ROW
    if goal is not None:
        x = LABEL_W + goal * scale
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 12}" x2="{x:.1f}" y2="{y}" stroke="#c33" stroke-dasharray="4 3"/>')
        out.append(f'<text x="{x + 3:.1f}" y="{TOP - 4}" fill="#c33">goal {goal:g} {escape(unit)}</text>')
    out.append("</svg>")
    write_atomically(path, "\n".join(out).encode())
