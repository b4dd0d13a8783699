"""Small inline SVG charts (no plotting library: a report must open without network).

Every label is escaped here, so the returned markup is safe to embed as is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

WIDTH, HEIGHT = 420, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 30, 44
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")


@dataclass
class Series:
    """One line of a line chart: a name and its (x, y) points."""

    name: str
    points: list[tuple[float, float]]


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _frame(title: str, x_label: str, y_label: str, body: list[str], legend: list[str]) -> Markup:
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" class="title">{escape(title)}</text>',
        f'<line x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" '
        f'y2="{HEIGHT - BOTTOM}" class="axis"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}" class="axis"/>',
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 6}" text-anchor="middle" '
        f'class="label">{escape(x_label)}</text>',
        f'<text x="12" y="{(TOP + HEIGHT - BOTTOM) / 2}" text-anchor="middle" class="label" '
        f'transform="rotate(-90 12 {(TOP + HEIGHT - BOTTOM) / 2})">{escape(y_label)}</text>',
        *body,
        *legend,
        "</svg>",
    ]
    return Markup("\n".join(parts))


def nice_max(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 (times a power of ten) at least ``value``: round ticks."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value)


def _y_axis(y_max: float) -> tuple[list[str], float]:
    y_max = nice_max(y_max)
    ticks = []
    for i in range(5):
        value = y_max * i / 4
        y = HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * i / 4
        ticks.append(
            f'<line x1="{LEFT - 4}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
            f"{_number(value)}</text>"
        )
    return ticks, y_max


def _legend(names: Sequence[str]) -> list[str]:
    if len(names) < 2:
        return []
    items = []
    for index, name in enumerate(names):
        y = TOP + 4 + 14 * index
        color = PALETTE[index % len(PALETTE)]
        items.append(
            f'<rect x="{WIDTH - RIGHT - 120}" y="{y - 8}" width="10" height="10" '
            f'fill="{color}"/><text x="{WIDTH - RIGHT - 106}" y="{y + 1}" class="tick">'
            f"{escape(name[:18])}</text>"
        )
    return items


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    y_max: float | None = None,
) -> Markup:
    """Lines with dots over shared numeric x values (e.g. score by retry depth)."""
    xs = sorted({x for s in series for x, _ in s.points})
    top = y_max if y_max is not None else max((y for s in series for _, y in s.points), default=1)
    ticks, top = _y_axis(top)
    span = (xs[-1] - xs[0]) if len(xs) > 1 else 1.0
    inner_w = WIDTH - LEFT - RIGHT - 24

    def px(x: float) -> float:
        return LEFT + 12 + (inner_w * (x - xs[0]) / span if len(xs) > 1 else inner_w / 2)

    def py(y: float) -> float:
        return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * y / top

    body = list(ticks)
    body += [
        f'<text x="{px(x):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" '
        f'class="tick">{_number(x)}</text>'
        for x in xs
    ]
    for index, one in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        points = sorted(one.points)
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
        body.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        body += [
            f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{color}">'
            f"<title>{escape(one.name)}: {_number(x)} → {_number(y)}</title></circle>"
            for x, y in points
        ]
    return _frame(title, x_label, y_label, body, _legend([s.name for s in series]))


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    x_label: str,
    y_label: str,
    highlight: Sequence[bool] | None = None,
) -> Markup:
    """One bar per label; ``highlight`` bars (e.g. solved tasks) are drawn in green."""
    ticks, top = _y_axis(max(values, default=0))
    inner_w = WIDTH - LEFT - RIGHT - 8
    slot = inner_w / max(len(values), 1)
    body = list(ticks)
    for index, (label, value) in enumerate(zip(labels, values, strict=True)):
        height = (HEIGHT - TOP - BOTTOM) * value / top
        x = LEFT + 4 + slot * index
        good = highlight is not None and highlight[index]
        body.append(
            f'<rect x="{x + slot * 0.1:.1f}" y="{HEIGHT - BOTTOM - height:.1f}" '
            f'width="{max(slot * 0.8, 1):.1f}" height="{height:.1f}" '
            f'class="{"bar good" if good else "bar"}"><title>{escape(label)}: '
            f"{_number(value)}</title></rect>"
        )
        if len(labels) <= 12:
            body.append(
                f'<text x="{x + slot / 2:.1f}" y="{HEIGHT - BOTTOM + 14}" text-anchor="middle" '
                f'class="tick">{escape(label[:8])}</text>'
            )
    return _frame(title, x_label, y_label, body, [])
