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
# Bar labels (task ids) stand upright under their bars: one needs a column of the tick
# font's height (11 px, the report's CSS) plus a gap, and as much height as its characters
# are wide (at most CHAR_WIDTH each). A bar chart widens with its bars up to MAX_WIDTH (it
# fits a 1,400 px page); beyond, every k-th label is drawn (each bar keeps its tooltip).
LABEL_PITCH = 13.0
CHAR_WIDTH = 7.0
LABEL_CHARS = 14
MAX_WIDTH = 1360
MIN_SLOT = 18.0


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


@dataclass(frozen=True)
class _Box:
    """A chart's size: the plot area is TOP..height - bottom by LEFT..width - RIGHT."""

    width: float = WIDTH
    height: float = HEIGHT
    bottom: float = BOTTOM

    @property
    def axis_y(self) -> float:
        return self.height - self.bottom


def _frame(
    title: str,
    x_label: str,
    y_label: str,
    body: list[str],
    legend: list[str],
    box: _Box = _Box(),
) -> Markup:
    width, height, axis_y = box.width, box.height, box.axis_y
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width:g}" '
        f'height="{height:g}" viewBox="0 0 {width:g} {height:g}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<text x="{width / 2}" y="16" text-anchor="middle" class="title">{escape(title)}</text>',
        f'<line x1="{LEFT}" y1="{axis_y}" x2="{width - RIGHT}" y2="{axis_y}" class="axis"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{axis_y}" class="axis"/>',
        f'<text x="{(LEFT + width - RIGHT) / 2}" y="{height - 6}" text-anchor="middle" '
        f'class="label">{escape(x_label)}</text>',
        f'<text x="12" y="{(TOP + axis_y) / 2}" text-anchor="middle" class="label" '
        f'transform="rotate(-90 12 {(TOP + axis_y) / 2})">{escape(y_label)}</text>',
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


def _y_axis(y_max: float, box: _Box = _Box()) -> tuple[list[str], float]:
    y_max = nice_max(y_max)
    ticks = []
    for i in range(5):
        value = y_max * i / 4
        y = box.axis_y - (box.axis_y - TOP) * i / 4
        ticks.append(
            f'<line x1="{LEFT - 4}" y1="{y:.1f}" x2="{box.width - RIGHT}" y2="{y:.1f}" '
            'class="grid"/>'
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


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    x_label: str,
    y_label: str,
    highlight: Sequence[bool] | None = None,
) -> Markup:
    """One bar per label; ``highlight`` bars (e.g. solved tasks) are drawn in green.

    Labels stand upright under their bars, LABEL_PITCH apart at least: the chart widens
    with its bars up to MAX_WIDTH, then only every k-th label is drawn, so none overlaps.
    """
    count = max(len(values), 1)
    width = min(max(WIDTH, LEFT + RIGHT + 8 + MIN_SLOT * count), MAX_WIDTH)
    slot = (width - LEFT - RIGHT - 8) / count
    stride = math.ceil(LABEL_PITCH / slot)
    shown = [_short(label) for label in labels[::stride]]
    depth = CHAR_WIDTH * max((len(label) for label in shown), default=0)
    box = _Box(width=width, height=HEIGHT + depth, bottom=BOTTOM + depth)
    ticks, top = _y_axis(max(values, default=0), box)
    body = list(ticks)
    for index, (label, value) in enumerate(zip(labels, values, strict=True)):
        height = (box.axis_y - TOP) * value / top
        x = LEFT + 4 + slot * index
        good = highlight is not None and highlight[index]
        body.append(
            f'<rect x="{x + slot * 0.1:.1f}" y="{box.axis_y - height:.1f}" '
            f'width="{max(slot * 0.8, 1):.1f}" height="{height:.1f}" '
            f'class="{"bar good" if good else "bar"}"><title>{escape(label)}: '
            f"{_number(value)}</title></rect>"
        )
        if index % stride == 0:
            # Upright, its end under the bar: x is the column's centre plus half the font.
            cx, cy = x + slot / 2 + 4, box.axis_y + 6
            body.append(
                f'<text x="{cx:.1f}" y="{cy:.1f}" text-anchor="end" class="tick bar-label" '
                f'transform="rotate(-90 {cx:.1f} {cy:.1f})">{escape(_short(label))}</text>'
            )
    return _frame(title, x_label, y_label, body, [], box)
