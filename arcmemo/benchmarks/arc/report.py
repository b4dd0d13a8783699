"""How the run report draws an ARC task (the benchmark's report hooks).

The task's train and test pairs as grids; per step the train pairs a program failed, its
output next to the expected one, and its test outputs against the expected ones with the
differing cells marked. Everything here is plain data; ``report.html.j2`` next to this
module lays it out (it extends the report's generic page), a grid as a compact string of its
cells that the page's script draws when the task is opened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from itertools import chain
from typing import Any

from arcmemo.benchmarks.arc.data import ArcTask
from arcmemo.records import Step


def as_grid(value: Any) -> list[list[int]] | None:
    """``value`` as a rectangular grid of ints, or None when it is not one."""
    if not isinstance(value, list) or not value:
        return None
    # Whole-grid checks at C speed; type(), not isinstance: a bool is an int but not a cell.
    if set(map(type, value)) != {list} or len(set(map(len, value))) != 1 or not value[0]:
        return None
    if set(map(type, chain.from_iterable(value))) != {int}:
        return None
    return value


# One character per cell: the color 0-9, a letter a-j for that color where the cell differs
# from the expected grid, z (Z where it differs) for a value outside the palette. The page's
# script draws these when the grid comes into view (arcmemo/report/templates/_base.html.j2).
_PLAIN = "0123456789"
_DIFFERS = "abcdefghij"
# The same, for a row of cells 0-255 as bytes (bytes.translate runs at C speed).
_PLAIN_BYTES = bytes(ord(_PLAIN[v]) if v <= 9 else ord("z") for v in range(256))


def _cell(value: int, differs: bool) -> str:
    if 0 <= value <= 9:
        return (_DIFFERS if differs else _PLAIN)[value]
    return "Z" if differs else "z"


def _row(row: list[int], truth: list[int] | None) -> tuple[str, int]:
    """A row's cells and how many differ from ``truth`` (None: nothing to compare with)."""
    if truth is None or truth == row:
        try:
            return bytes(row).translate(_PLAIN_BYTES).decode("ascii"), 0
        except ValueError:  # a value below 0 or above 255: cell by cell below
            pass
    width = len(truth) if truth is not None else 0
    cells = [
        _cell(value, truth is not None and (c >= width or truth[c] != value))
        for c, value in enumerate(row)
    ]
    n_diff = sum(cell not in _PLAIN and cell != "z" for cell in cells)
    return "".join(cells), n_diff


@dataclass
class GridView:
    """A grid to draw: its rows of cells, one character each (see ``_cell``), comma-joined."""

    cells: str
    shape: str
    n_diff: int = 0
    note: str = ""


def grid_view(value: Any, expected: Any = None) -> GridView | None:
    """Draw ``value``, marking cells that differ from ``expected`` (when given)."""
    grid = as_grid(value)
    if grid is None:
        return None
    truth = as_grid(expected)
    rows: list[str] = []
    n_diff = 0
    for r, row in enumerate(grid):
        # a row below the expected grid differs everywhere: compared with an empty row
        cells, differing = _row(row, None if truth is None else truth[r] if r < len(truth) else [])
        rows.append(cells)
        n_diff += differing
    shape = f"{len(grid)}×{len(grid[0])}"
    note = ""
    if truth is not None and (len(truth), len(truth[0])) != (len(grid), len(grid[0])):
        note = f"shape {shape}, expected {len(truth)}×{len(truth[0])}"
    return GridView(cells=",".join(rows), shape=shape, n_diff=n_diff, note=note)


@dataclass
class CheckView:
    """A program on one train pair: what it produced against the expected output."""

    index: int
    correct: bool
    error: str | None
    output: GridView | None
    expected: GridView | None


@dataclass
class PredictionView:
    """A program's output for one test input against the expected one."""

    index: int
    correct: bool | None
    produced: GridView | None
    expected: GridView | None
    raw: str  # the output as JSON when it is not a grid


def task_view(task: ArcTask | None) -> dict[str, Any]:
    """The task's train pairs and test pairs (input, expected output) as grids."""
    if task is None:
        return {"train": [], "tests": []}
    return {
        "train": [(grid_view(p.input), grid_view(p.output)) for p in task.train],
        "tests": [
            (grid_view(i), grid_view(o))
            for i, o in zip(task.test_inputs, task.expected, strict=True)
        ],
    }


def step_view(task: ArcTask | None, step: Step) -> dict[str, Any]:
    """A step's train-pair checks and test outputs, each next to the expected grid."""
    checks = []
    for check in step.checks:
        expected = (
            task.train[check.index].output if task and check.index < len(task.train) else None
        )
        checks.append(
            CheckView(
                index=check.index,
                correct=check.correct,
                error=check.error,
                output=grid_view(check.output, expected),
                expected=grid_view(expected),
            )
        )
    predictions = []
    produced = step.prediction if isinstance(step.prediction, list) else []
    n_tests = len(task.test_inputs) if task else len(produced)
    for t in range(n_tests):
        value = produced[t] if t < len(produced) else None
        expected = task.expected[t] if task else None
        predictions.append(
            PredictionView(
                index=t,
                correct=step.correct[t] if step.correct and t < len(step.correct) else None,
                produced=grid_view(value, expected),
                expected=grid_view(expected),
                raw="" if value is None or as_grid(value) else json.dumps(value)[:500],
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
