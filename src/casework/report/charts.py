"""Inline SVG charts for the HTML report: line, grouped-bar and stacked-bar charts, no dependencies.

Each function returns one ``<svg>`` element as a string (values escaped), sized by a viewBox so
it scales with the page. Entry points: :func:`line_chart`, :func:`bar_chart`, :func:`stacked_bars`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["PALETTE", "Series", "bar_chart", "line_chart", "stacked_bars"]

#: Colour-blind-safe palette (Okabe & Ito 2008).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

_W, _H = 640, 300
_L, _R, _T, _B = 56, 150, 34, 46


@dataclass(frozen=True)
class Series:
    """One named series of values (``None``: no value at that point)."""

    name: str
    values: Sequence[float | None]
    dashed: bool = False


def _frame(title: str, y_min: float, y_max: float, ticks: int = 5) -> list[str]:
    parts = [
        f'<svg class="chart" viewBox="0 0 {_W} {_H}" role="img" aria-label="{escape(title)}" '
        'xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<text x="{_L}" y="20" font-size="14" font-weight="600">{escape(title)}</text>',
    ]
    for i in range(ticks + 1):
        v = y_min + (y_max - y_min) * i / ticks
        y = _y(v, y_min, y_max)
        parts.append(f'<line x1="{_L}" y1="{y:.1f}" x2="{_W - _R}" y2="{y:.1f}" stroke="#e3e3e3"/>')
        parts.append(
            f'<text x="{_L - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#555">{v:.1f}</text>'
        )
    parts.append(f'<line x1="{_L}" y1="{_T}" x2="{_L}" y2="{_H - _B}" stroke="#999"/>')
    return parts


def _y(value: float, y_min: float, y_max: float) -> float:
    span = (y_max - y_min) or 1.0
    return _H - _B - (value - y_min) / span * (_H - _B - _T)


def _legend(names: Sequence[tuple[str, str, bool]]) -> list[str]:
    out = []
    for i, (name, colour, dashed) in enumerate(names):
        y = _T + 8 + i * 18
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        out.append(
            f'<line x1="{_W - _R + 12}" y1="{y}" x2="{_W - _R + 34}" y2="{y}" stroke="{colour}" stroke-width="3"{dash}/>'
        )
        out.append(f'<text x="{_W - _R + 40}" y="{y + 4}">{escape(name[:18])}</text>')
    return out


def line_chart(
    title: str,
    x_labels: Sequence[str],
    series: Sequence[Series],
    *,
    y_min: float = 0.0,
    y_max: float = 1.0,
    x_title: str = "",
) -> str:
    """A line chart with markers; each series gets a palette colour (dashed if asked)."""
    parts = _frame(title, y_min, y_max)
    n = len(x_labels)
    width = _W - _L - _R

    def x(i: int) -> float:
        return _L + (width * (i + 0.5) / n if n else 0)

    for i, label in enumerate(x_labels):
        parts.append(
            f'<text x="{x(i):.1f}" y="{_H - _B + 18}" text-anchor="middle">{escape(label)}</text>'
        )
    if x_title:
        parts.append(
            f'<text x="{_L + width / 2:.1f}" y="{_H - 8}" text-anchor="middle" fill="#555">{escape(x_title)}</text>'
        )
    legend = []
    for s_index, s in enumerate(series):
        colour = PALETTE[s_index % len(PALETTE)]
        points = [(x(i), _y(v, y_min, y_max), v) for i, v in enumerate(s.values) if v is not None]
        dash = ' stroke-dasharray="5 3"' if s.dashed else ""
        if len(points) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in points)
            parts.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
            )
        for px, py, v in points:
            parts.append(
                f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{colour}"><title>{escape(s.name)}: {v:.3f}</title></circle>'
            )
        legend.append((s.name, colour, s.dashed))
    parts += _legend(legend)
    parts.append("</svg>")
    return "\n".join(parts)


def bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    *,
    y_min: float = 0.0,
    y_max: float = 1.0,
    threshold: float | None = None,
    threshold_label: str = "",
) -> str:
    """Grouped bars: one group per category, one bar per series; an optional threshold line."""
    parts = _frame(title, y_min, y_max)
    n = max(1, len(categories))
    width = _W - _L - _R
    group = width / n
    bar = group * 0.8 / max(1, len(series))
    zero = _y(max(y_min, 0.0), y_min, y_max)
    for ci, cat in enumerate(categories):
        gx = _L + ci * group + group * 0.1
        for si, s in enumerate(series):
            v = s.values[ci] if ci < len(s.values) else None
            if v is None:
                continue
            top = _y(min(max(v, y_min), y_max), y_min, y_max)
            y, h = min(top, zero), abs(zero - top)
            colour = PALETTE[si % len(PALETTE)]
            parts.append(
                f'<rect x="{gx + si * bar:.1f}" y="{y:.1f}" width="{bar * 0.92:.1f}" height="{h:.1f}" '
                f'fill="{colour}"><title>{escape(cat)} · {escape(s.name)}: {v:.3f}</title></rect>'
            )
        parts.append(
            f'<text x="{_L + ci * group + group / 2:.1f}" y="{_H - _B + 18}" text-anchor="middle">{escape(cat[:16])}</text>'
        )
    if threshold is not None:
        ty = _y(threshold, y_min, y_max)
        parts.append(
            f'<line x1="{_L}" y1="{ty:.1f}" x2="{_W - _R}" y2="{ty:.1f}" stroke="#D55E00" stroke-dasharray="6 4" stroke-width="1.5"/>'
        )
        parts.append(
            f'<text x="{_W - _R - 4}" y="{ty - 5:.1f}" text-anchor="end" fill="#D55E00">{escape(threshold_label)}</text>'
        )
    parts += _legend([(s.name, PALETTE[i % len(PALETTE)], False) for i, s in enumerate(series)])
    parts.append("</svg>")
    return "\n".join(parts)


def stacked_bars(title: str, categories: Sequence[str], series: Sequence[Series]) -> str:
    """Bars of shares stacking to 1 per category (e.g. discriminating / tied / inverted)."""
    parts = _frame(title, 0.0, 1.0)
    n = max(1, len(categories))
    width = _W - _L - _R
    group = width / n
    colours = ("#009E73", "#BBBBBB", "#D55E00", *PALETTE)
    for ci, cat in enumerate(categories):
        bottom = 0.0
        for si, s in enumerate(series):
            v = s.values[ci] if ci < len(s.values) else None
            if not v:
                continue
            y_top, y_bottom = _y(bottom + v, 0, 1), _y(bottom, 0, 1)
            parts.append(
                f'<rect x="{_L + ci * group + group * 0.2:.1f}" y="{y_top:.1f}" width="{group * 0.6:.1f}" '
                f'height="{y_bottom - y_top:.1f}" fill="{colours[si % len(colours)]}">'
                f"<title>{escape(cat)} · {escape(s.name)}: {v:.3f}</title></rect>"
            )
            bottom += v
        parts.append(
            f'<text x="{_L + ci * group + group / 2:.1f}" y="{_H - _B + 18}" text-anchor="middle">{escape(cat[:16])}</text>'
        )
    parts += _legend([(s.name, colours[i % len(colours)], False) for i, s in enumerate(series)])
    parts.append("</svg>")
    return "\n".join(parts)
