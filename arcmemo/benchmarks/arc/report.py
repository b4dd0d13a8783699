"""How the run report draws an ARC task (the benchmark's report hooks).

The task's train and test pairs as grids; per step the train pairs a program failed, its
output next to the expected one, and its test outputs against the expected ones with the
differing cells marked. Everything here is plain data (a step's grids drawn when the page
first reads them); ``report.html.j2`` next to this
module lays it out (it extends the report's generic page), a grid as a compact string of its
cells that the page's script draws when the task is opened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from itertools import chain, repeat
from operator import add, mul, ne
from typing import Any

from arcmemo.benchmarks.arc.data import ArcTask
from arcmemo.core.records import Step


def _flat(value: Any) -> list[int] | None:
    """The cells of ``value`` row after row when it is a rectangular grid of ints, else None."""
    if not isinstance(value, list) or not value:
        return None
    # Whole-grid checks at C speed; type(), not isinstance: a bool is an int but not a cell.
    if set(map(type, value)) != {list} or len(set(map(len, value))) != 1 or not value[0]:
        return None
    cells = list(chain.from_iterable(value))
    return cells if set(map(type, cells)) == {int} else None


def as_grid(value: Any) -> list[list[int]] | None:
    """``value`` as a rectangular grid of ints, or None when it is not one."""
    return value if _flat(value) is not None else None


# One character per cell: the color 0-9, a letter a-j for that color where the cell differs
# from the expected grid, z (Z where it differs) for a value outside the palette. The page's
# script draws these when the grid comes into view
# (arcmemo/analysis/report/templates/_base.html.j2).
_PLAIN = "0123456789"
_DIFFERS = "abcdefghij"
# The same for a grid's cells as bytes, with 10 added where a cell differs: 0-9 plain,
# 10-19 differing (bytes.translate runs at C speed).
_COLOR_BYTES = bytes(range(10))
_CODES = bytes(
    ord(_PLAIN[v]) if v <= 9 else ord(_DIFFERS[v - 10]) if v <= 19 else ord("z") for v in range(256)
)


def _cell(value: int, differs: bool) -> str:
    if 0 <= value <= 9:
        return (_DIFFERS if differs else _PLAIN)[value]
    return "Z" if differs else "z"


def _row(row: list[int], truth: list[int] | None) -> tuple[str, int]:
    """A row's cells and how many differ from ``truth`` (None: nothing to compare with)."""
    width = len(truth) if truth is not None else 0
    cells = [
        _cell(value, truth is not None and (c >= width or truth[c] != value))
        for c, value in enumerate(row)
    ]
    n_diff = sum(cell not in _PLAIN and cell != "z" for cell in cells)
    return "".join(cells), n_diff


def _row_cells(grid: list[list[int]], truth: list[list[int]] | None) -> tuple[str, int]:
    """The cells of any grid, row by row, and how many differ from ``truth``."""
    rows: list[str] = []
    n_diff = 0
    for r, row in enumerate(grid):
        # a row below the expected grid differs everywhere: compared with an empty row
        drawn, differing = _row(row, None if truth is None else truth[r] if r < len(truth) else [])
        rows.append(drawn)
        n_diff += differing
    return ",".join(rows), n_diff


def _rows(flat: bytes, width: int) -> str:
    """Cells of a grid, one character each, a comma between rows."""
    text = flat.translate(_CODES).decode("ascii")
    return ",".join([text[start : start + width] for start in range(0, len(text), width)])


def _fast_cells(
    grid: list[list[int]], flat: list[int], truth: list[list[int]] | None, truth_flat: Any
) -> tuple[str, int] | None:
    """The cells of a grid of colors 0-9 (``flat``: its cells row after row) shaped as
    ``truth`` (or without one) and how many differ, a whole grid at a time; None for other
    grids (drawn row by row)."""
    try:
        codes = bytes(flat)
    except ValueError:  # a value below 0 or above 255
        return None
    if codes.translate(None, _COLOR_BYTES):  # what is left once colors are removed
        return None
    width = len(grid[0])
    if truth is None:
        return _rows(codes, width), 0
    if len(truth) != len(grid) or len(truth[0]) != width:
        return None
    differs = list(map(ne, flat, truth_flat))
    n_diff = sum(differs)
    if not n_diff:
        return _rows(codes, width), 0
    return _rows(bytes(map(add, flat, map(mul, differs, repeat(10)))), width), n_diff


@dataclass
class GridView:
    """A grid to draw: its rows of cells, one character each (see ``_cell``), comma-joined."""

    cells: str
    shape: str
    n_diff: int = 0
    note: str = ""


def grid_view(value: Any, expected: Any = None) -> GridView | None:
    """Draw ``value``, marking cells that differ from ``expected`` (when given)."""
    return _drawn(value, expected, _flat(expected))


def _drawn(value: Any, expected: Any, truth_flat: list[int] | None) -> GridView | None:
    """:func:`grid_view`, given the cells of ``expected`` (None: it is no grid)."""
    flat = _flat(value)
    if flat is None:
        return None
    grid: list[list[int]] = value
    truth: list[list[int]] | None = expected if truth_flat is not None else None
    cells, n_diff = _fast_cells(grid, flat, truth, truth_flat) or _row_cells(grid, truth)
    shape = f"{len(grid)}×{len(grid[0])}"
    note = ""
    if truth is not None and (len(truth), len(truth[0])) != (len(grid), len(grid[0])):
        note = f"shape {shape}, expected {len(truth)}×{len(truth[0])}"
    return GridView(cells=cells, shape=shape, n_diff=n_diff, note=note)


class _Expected:
    """Plain views of one task's grids, each drawn once: every step of the task shows its
    expected outputs again. Keyed by the grid's identity, which holding the task keeps."""

    def __init__(self, task: ArcTask | None) -> None:
        self.task = task
        self.views: dict[int, GridView | None] = {}
        self.cells: dict[int, list[int] | None] = {}

    def view(self, grid: Any) -> GridView | None:
        if grid is None:
            return None
        key = id(grid)
        if key not in self.views:
            self.views[key] = grid_view(grid)
        return self.views[key]

    def compared(self, value: Any, grid: Any) -> GridView | None:
        """``value`` drawn against the task's ``grid``, whose cells are read once."""
        key = id(grid)
        if key not in self.cells:
            self.cells[key] = _flat(grid)
        return _drawn(value, grid, self.cells[key])


# The task drawn last: the report draws a task's heading and then its steps, one task after
# another, and never changes a task while drawing it.
_last = _Expected(None)


def _expected(task: ArcTask | None) -> _Expected:
    global _last
    if _last.task is not task:
        _last = _Expected(task)
    return _last


@dataclass
class _Compared:
    """A program's output against the expected grid, each drawn when the page first shows
    it (the ARC page shows failed train pairs only)."""

    value: Any = field(repr=False)  # what the program returned (None: nothing)
    truth: Any = field(repr=False)  # the expected output (None: unknown, unlabelled)
    drawn: _Expected = field(repr=False, compare=False)

    @cached_property
    def value_view(self) -> GridView | None:
        return self.drawn.compared(self.value, self.truth)

    @cached_property
    def expected(self) -> GridView | None:
        return self.drawn.view(self.truth)


@dataclass
class CheckView(_Compared):
    """A program on one train pair: what it produced against the expected output."""

    index: int
    correct: bool
    error: str | None

    @property
    def output(self) -> GridView | None:
        return self.value_view


@dataclass
class PredictionView(_Compared):
    """A program's output for one test input against the expected one."""

    index: int
    correct: bool | None

    @property
    def produced(self) -> GridView | None:
        return self.value_view

    @cached_property
    def raw(self) -> str:
        """The output as JSON when it is not a grid."""
        return "" if self.value is None or as_grid(self.value) else json.dumps(self.value)[:500]


def task_view(task: ArcTask | None) -> dict[str, Any]:
    """The task's train pairs and test pairs (input, expected output) as grids."""
    if task is None:
        return {"train": [], "tests": []}
    drawn = _expected(task)
    return {
        "train": [(grid_view(p.input), drawn.view(p.output)) for p in task.train],
        "tests": [
            (grid_view(i), drawn.view(o))
            for i, o in zip(task.test_inputs, task.expected, strict=True)
        ],
    }


def step_view(task: ArcTask | None, step: Step) -> dict[str, Any]:
    """A step's train-pair checks and test outputs, each next to the expected grid."""
    drawn = _expected(task)
    checks = [
        CheckView(
            index=check.index,
            correct=check.correct,
            error=check.error,
            value=check.output,
            truth=task.train[check.index].output
            if task and check.index < len(task.train)
            else None,
            drawn=drawn,
        )
        for check in step.checks
    ]
    predictions = []
    produced = step.prediction if isinstance(step.prediction, list) else []
    n_tests = len(task.test_inputs) if task else len(produced)
    for t in range(n_tests):
        predictions.append(
            PredictionView(
                index=t,
                correct=step.correct[t] if step.correct and t < len(step.correct) else None,
                value=produced[t] if t < len(produced) else None,
                truth=task.expected[t] if task else None,
                drawn=drawn,
            )
        )
    return {"checks": checks, "predictions": predictions}


def template() -> str:
    """The ARC report page (``report.html.j2`` of this package)."""
    return (
        resources.files("arcmemo.benchmarks.arc")
        .joinpath("report.html.j2")
        .read_text(encoding="utf-8")
    )
