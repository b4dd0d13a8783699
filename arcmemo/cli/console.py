"""Printing tables where a terminal is not there to size them.

rich lays a table out to the terminal's width, and to 80 columns when output goes to a file
or a pipe (nohup, SLURM logs, ``| tee``): model names and costs were cut or folded there.
Off a terminal a table is printed at its natural width instead.
"""

from __future__ import annotations

from rich.console import Console, RenderableType

# No table of ours is wider; the bound keeps a runaway cell from making one.
MAX_PLAIN_WIDTH = 400


def print_table(console: Console, table: RenderableType) -> None:
    """Print ``table``: on a terminal at its width, elsewhere as wide as its content."""
    if console.is_terminal:
        console.print(table)
        return
    natural = console.measure(table, options=console.options.update_width(MAX_PLAIN_WIDTH))
    # print(width=...) is capped at the console's width: widen the console for this table.
    width = console.width
    console.width = max(natural.maximum, width)
    try:
        console.print(table)
    finally:
        console.width = width
