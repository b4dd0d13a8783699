"""ARC's report hooks: grids drawn with the cells that differ from the expected ones marked."""

from __future__ import annotations

from typing import Any

from arcmemo.benchmarks.arc.report import as_grid, grid_view


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
