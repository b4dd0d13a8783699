"""Validation of ARC grids: what a program's output (or a generated puzzle) must look like."""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

Grid = list[list[int]]

MAX_GRID_SIDE = 30
_COLORS = frozenset(range(10))


class InvalidGridError(ValueError):
    """A value is not a valid ARC grid; the message says why, in words fit for feedback."""


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def validate_grid(value: Any) -> Grid:
    """Return ``value`` as a ``list[list[int]]`` if it is a valid ARC grid, else raise.

    A valid grid is a rectangular 2-D grid (a 2-D numpy integer array, or a list/tuple of
    rows) of ints 0-9, between 1x1 and 30x30. numpy integer scalars count as ints; bools
    and floats do not (``True`` or ``2.0`` is almost always a bug in the program).
    """
    if isinstance(value, np.ndarray):
        if value.ndim != 2:
            raise InvalidGridError(
                f"output is a {value.ndim}-D numpy array of shape {value.shape}, "
                "expected a 2-D grid"
            )
        if value.dtype.kind == "b":
            raise InvalidGridError("output is a boolean array; colors must be ints 0-9")
        if value.dtype.kind not in "iu":
            raise InvalidGridError(
                f"output is a numpy array of dtype {value.dtype}; colors must be ints 0-9 "
                "(convert with .astype(int))"
            )
        value = value.tolist()
    plain = _plain_grid(value)
    if plain is not None:
        return plain
    return _checked_grid(value)


def _plain_grid(value: Any) -> Grid | None:
    """A copy of ``value`` when it is a list of equally long lists of plain ints 0-9 within
    the size limits (task data, most program outputs), checked at C speed; else None."""
    if type(value) is not list or not 0 < len(value) <= MAX_GRID_SIDE:
        return None
    # type(), not isinstance: subclasses (of list, of int: bool) take the careful path
    if set(map(type, value)) != {list}:
        return None
    widths = set(map(len, value))
    if len(widths) != 1 or not 0 < next(iter(widths)) <= MAX_GRID_SIDE:
        return None
    cells = list(chain.from_iterable(value))
    if set(map(type, cells)) != {int} or not _COLORS.issuperset(cells):
        return None
    return [row[:] for row in value]


def _checked_grid(value: Any) -> Grid:
    """``value`` checked cell by cell: the grid, or the first reason it is not one."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise InvalidGridError(
            f"output is {type(value).__name__} {_describe(value)}, not a 2-D grid "
            "(a list of rows or a 2-D numpy array)"
        )
    if len(value) == 0:
        raise InvalidGridError("output is empty (0 rows)")
    rows: Grid = []
    width = -1
    for r, row in enumerate(value):
        if isinstance(row, np.ndarray):
            if row.ndim != 1:
                raise InvalidGridError(f"output row {r} is a {row.ndim}-D array, not a row")
            row = row.tolist()
        if not isinstance(row, (list, tuple)):
            raise InvalidGridError(
                f"output row {r} is {type(row).__name__} {_describe(row)}, not a list of "
                "cells (the output must be 2-D)"
            )
        if r == 0:
            width = len(row)
            if width == 0:
                raise InvalidGridError("output row 0 is empty")
            if len(value) > MAX_GRID_SIDE or width > MAX_GRID_SIDE:
                raise InvalidGridError(
                    f"output is {len(value)}x{width}, larger than {MAX_GRID_SIDE}x{MAX_GRID_SIDE}"
                )
        elif len(row) != width:
            raise InvalidGridError(f"output row {r} has {len(row)} cells, row 0 has {width}")
        cells: list[int] = []
        for c, cell in enumerate(row):
            if isinstance(cell, (bool, np.bool_)):
                raise InvalidGridError(f"value {cell!r} at ({r}, {c}) is a bool, not a color 0-9")
            if not isinstance(cell, (int, np.integer)):
                raise InvalidGridError(
                    f"value {_describe(cell)} at ({r}, {c}) is {type(cell).__name__}, "
                    "not an int color 0-9"
                )
            if not 0 <= cell <= 9:
                raise InvalidGridError(f"value {cell} at ({r}, {c}) is not a color 0-9")
            cells.append(int(cell))
        rows.append(cells)
    return rows
