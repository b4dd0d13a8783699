"""Printing tables where a terminal is not there to size them.

rich lays a table out to the terminal's width, and to 80 columns when output goes to a file
or a pipe (nohup, SLURM logs, ``| tee``). Off a terminal a table is printed as wide as its
content up to ``$COLUMNS`` (100 when unset; up to 120 where cells that cannot wrap need it),
cells wrapped in their column; a text cell longer than two such lines is cut, ending in
`` [...]`` (the whole text stays in the run's files).
"""

from __future__ import annotations

import os

from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table

PLAIN_WIDTH = 100
MAX_PLAIN_WIDTH = 120
"""Off a terminal a table grows past :func:`plain_width` up to this only where its cells that
cannot wrap (ids, names, numbers) need it: a cut id cannot be pasted back into a command."""


def plain_width() -> int:
    """The width of a table off a terminal: ``$COLUMNS`` when it is a number, else 100."""
    columns = os.environ.get("COLUMNS", "").strip()
    return int(columns) if columns.isdigit() and int(columns) > 0 else PLAIN_WIDTH


CUT_MARK = " [...]"


def _cut(cell: RenderableType, limit: int) -> RenderableType:
    """A text cell longer than two lines of ``limit`` cut, ending in :data:`CUT_MARK`."""
    if isinstance(cell, str) and len(cell) > 2 * limit:
        return cell[: 2 * limit - len(CUT_MARK)] + CUT_MARK
    return cell


def print_table(console: Console, table: RenderableType) -> None:
    """Print ``table``: on a terminal at its width, elsewhere as wide as its content up to
    :func:`plain_width`, long cells cut with an ellipsis."""
    if console.is_terminal:
        console.print(table)
        return
    limit = plain_width()
    if isinstance(table, Table):
        for column in table.columns:
            column._cells = [_cut(cell, limit) for cell in column._cells]
    natural = console.measure(table, options=console.options.update_width(limit))
    # print(width=...) is capped at the console's width: set the console's for this table.
    width = console.width
    needed = _unwrappable_width(console, table) if isinstance(table, Table) else 0
    console.width = max(min(natural.maximum, limit), min(needed, MAX_PLAIN_WIDTH))
    try:
        console.print(table)
    finally:
        console.width = width


def _unwrappable_width(console: Console, table: Table) -> int:
    """The width ``table`` needs to show every cell of its ``no_wrap`` columns whole (the
    other columns at their header's width): rich's own minimum would cut them."""
    options = console.options.update_width(MAX_PLAIN_WIDTH)
    widths = []
    for column in table.columns:
        cells = [column.header, *column._cells] if column.no_wrap else [column.header]
        widths.append(max(Measurement.get(console, options, cell).maximum for cell in cells))
    left, right = table.padding[3], table.padding[1]
    return sum(widths) + (left + right) * max(len(widths) - 1, 0)
