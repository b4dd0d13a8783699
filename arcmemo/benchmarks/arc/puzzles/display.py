"""Colored terminal rendering of ARC grids (the usual ARC palette) with rich."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from arcmemo.benchmarks.arc.grids import Grid

# The palette of the ARC testing interface, by color index.
ARC_PALETTE = (
    "#000000",  # 0 black
    "#0074D9",  # 1 blue
    "#FF4136",  # 2 red
    "#2ECC40",  # 3 green
    "#FFDC00",  # 4 yellow
    "#AAAAAA",  # 5 grey
    "#F012BE",  # 6 magenta
    "#FF851B",  # 7 orange
    "#7FDBFF",  # 8 azure
    "#870C25",  # 9 maroon
)


def grid_text(grid: Grid) -> Text:
    """A grid as colored cells, two characters wide.

    Each cell shows its digit in the cell's own color on that color: a solid square in a
    color terminal, and still the digits when colors are stripped (pipes, logs).
    """
    text = Text()
    for index, row in enumerate(grid):
        if index:
            text.append("\n")
        for cell in row:
            color = ARC_PALETTE[cell]
            text.append(f"{cell} ", style=f"{color} on {color}")
    return text


def pair_table(title: str, grid_in: Grid, grid_out: Grid | None) -> RenderableType:
    """An input grid and its output side by side under a title with their shapes."""
    table = Table(show_header=True, box=None, padding=(0, 2), title=title, title_justify="left")
    table.add_column(f"input {len(grid_in)}x{len(grid_in[0])}")
    if grid_out is not None:
        table.add_column(f"output {len(grid_out)}x{len(grid_out[0])}")
        table.add_row(grid_text(grid_in), grid_text(grid_out))
    else:
        table.add_row(grid_text(grid_in))
    return table


def task_view(
    train: Sequence[tuple[Grid, Grid]], test: Sequence[tuple[Grid, Grid | None]]
) -> Group:
    """Every pair of a task, train first."""
    parts: list[RenderableType] = [
        pair_table(f"train {index}", grid_in, grid_out)
        for index, (grid_in, grid_out) in enumerate(train, 1)
    ]
    parts += [
        pair_table(f"test {index}", grid_in, grid_out)
        for index, (grid_in, grid_out) in enumerate(test, 1)
    ]
    return Group(*parts)
