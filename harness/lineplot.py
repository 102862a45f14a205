"""Line plots as standalone SVG text, without plotting dependencies: the loss
curves of a training run on the device and in PyTorch."""
from __future__ import annotations

import math
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 560, 320
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 40, 44
COLOURS = ("#1f5fbf", "#d9480f", "#2b8a3e", "#862e9c")


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About `count` round tick values covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    step = 10 ** math.floor(math.log10((hi - lo) / count))
    for factor in (1, 2, 5, 10):
        if (hi - lo) / (step * factor) <= count:
            step *= factor
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def line_plot_svg(title: str, x_label: str, y_label: str, series: dict[str, list[float]],
                  dashed: tuple[str, ...] = ()) -> str:
    """One polyline per named series over x = 0, 1, 2, ...; a legend names
    them. Series in `dashed` are drawn dashed (e.g. the reference)."""
    values = [v for ys in series.values() for v in ys if math.isfinite(v)]
    if not values:
        raise ValueError(f"plot {title!r} has no finite values")
    lo, hi = min(values), max(values)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad
    n = max(len(ys) for ys in series.values())
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(i: float) -> float:
        return LEFT + plot_w * (i / max(n - 1, 1))

    def sy(v: float) -> float:
        return TOP + plot_h * (1 - (v - lo) / (hi - lo))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
           f'<text x="{WIDTH / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
           f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/>']
    for v in _ticks(lo, hi):
        out.append(f'<line x1="{LEFT - 4}" x2="{LEFT + plot_w}" y1="{sy(v):.1f}" y2="{sy(v):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{LEFT - 6}" y="{sy(v) + 4:.1f}" text-anchor="end">{v:.4g}</text>')
    for i in _ticks(0, n - 1):
        out.append(f'<text x="{sx(i):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{i:g}</text>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 8}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text transform="translate(14 {TOP + plot_h / 2}) rotate(-90)" '
               f'text-anchor="middle">{escape(y_label)}</text>')
    for k, (name, ys) in enumerate(series.items()):
        colour = COLOURS[k % len(COLOURS)]
        points = " ".join(f"{sx(i):.1f},{sy(v):.1f}" for i, v in enumerate(ys) if math.isfinite(v))
        dash = ' stroke-dasharray="6 4"' if name in dashed else ""
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash}>'
                   f'<title>{escape(name)}</title></polyline>')
        ly = TOP + 14 + 16 * k
        out.append(f'<line x1="{LEFT + plot_w - 150}" x2="{LEFT + plot_w - 126}" y1="{ly - 4}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{LEFT + plot_w - 120}" y="{ly}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
