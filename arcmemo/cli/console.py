"""Printing tables where a terminal is not there to size them.

rich lays a table out to the terminal's width, and to 80 columns when output goes to a file
or a pipe (nohup, SLURM logs, ``| tee``). Off a terminal a table is printed as wide as its
content up to ``$COLUMNS`` (100 when unset), cells wrapped in their column; a text cell
longer than two such lines is cut, ending in `` [...]`` (the whole text stays in the run's
files).
"""

from __future__ import annotations

import os

from rich.console import Console, RenderableType
from rich.table import Table

PLAIN_WIDTH = 100


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
    console.width = min(natural.maximum, limit)
    try:
        console.print(table)
    finally:
        console.width = width
