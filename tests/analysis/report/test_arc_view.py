"""ARC's report hooks: grids drawn with the cells that differ from the expected ones marked."""

from __future__ import annotations

import random
from typing import Any

from arcmemo.benchmarks.arc.report import _fast_cells, _flat, _row_cells, as_grid, grid_view


def test_grid_view_marks_differing_cells() -> None:
    view = grid_view([[1, 2], [3, 4]], [[1, 0], [3, 4]])
    assert view is not None
    assert view.cells == "1c,34"  # 2 differs: the letter c
    assert view.n_diff == 1 and view.shape == "2×2" and view.note == ""


def test_grid_view_of_another_shape_marks_cells_outside_and_says_so() -> None:
    view = grid_view([[1, 1, 1]], [[1], [1]])
    assert view is not None
    assert view.cells == "1bb"
    assert view.note == "shape 1×3, expected 2×1"


def test_values_outside_the_palette_are_drawn_as_such() -> None:
    view = grid_view([[10, -1, 3]], [[10, 0, 3]])
    assert view is not None
    assert view.cells == "zZ3" and view.n_diff == 1


def test_non_grids_are_not_drawn() -> None:
    values: list[Any] = [None, [], [[]], [[1], [1, 2]], [["a"]], [[True]], "12"]
    for value in values:
        assert as_grid(value) is None
        assert grid_view(value) is None


def test_whole_grid_drawing_matches_drawing_row_by_row() -> None:
    """The fast path (a whole grid at C speed) draws every grid it takes as the row by row
    path does: same characters, same count of differing cells."""
    rng = random.Random(0)
    taken = 0
    for _ in range(2000):
        height, width = rng.randint(1, 6), rng.randint(1, 6)
        grid = [[rng.choice((0, 1, 5, 9)) for _ in range(width)] for _ in range(height)]
        if rng.random() < 0.1:
            grid[0][0] = rng.choice((-1, 10, 300))
        truth: list[list[int]] | None = None
        if rng.random() < 0.8:
            shape = (height, width) if rng.random() < 0.8 else (rng.randint(1, 6), width)
            truth = [[rng.choice((0, 1, 5, 12)) for _ in range(shape[1])] for _ in range(shape[0])]
        fast = _fast_cells(grid, _flat(grid) or [], truth, _flat(truth))
        if fast is not None:
            taken += 1
            assert fast == _row_cells(grid, truth), (grid, truth)
    assert taken > 1000
