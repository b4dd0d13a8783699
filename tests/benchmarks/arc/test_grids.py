import random

import numpy as np
import pytest

from arcmemo.benchmarks.arc.grids import InvalidGridError, _checked_grid, _plain_grid, validate_grid


def test_lists_and_int_arrays_are_grids() -> None:
    assert validate_grid([[1, 2], [3, 4]]) == [[1, 2], [3, 4]]
    assert validate_grid(((0,),)) == [[0]]
    grid = validate_grid(np.array([[9, 0, 1]], dtype=np.uint8))
    assert grid == [[9, 0, 1]] and type(grid[0][0]) is int
    assert validate_grid([np.array([1, 2]), np.array([3, 4])]) == [[1, 2], [3, 4]]
    assert validate_grid([[np.int64(5)]]) == [[5]]
    assert validate_grid([[0] * 30] * 30) == [[0] * 30] * 30


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([[1, 2, 3], [4, 5]], "output row 1 has 2 cells, row 0 has 3"),
        ([[1, 12]], "value 12 at (0, 1) is not a color 0-9"),
        ([[0, -1]], "value -1 at (0, 1) is not a color 0-9"),
        ([[0] * 5] * 31, "output is 31x5, larger than 30x30"),
        ([[0] * 31], "output is 1x31, larger than 30x30"),
        ([], "output is empty"),
        ([[]], "output row 0 is empty"),
        ([1, 2, 3], "output row 0 is int"),
        (5, "output is int 5, not a 2-D grid"),
        (None, "output is NoneType"),
        ("12", "output is str"),
        ([[True, 0]], "value True at (0, 0) is a bool"),
        ([[1.0]], "value 1.0 at (0, 0) is float"),
        (np.zeros((2, 2, 2), dtype=int), "3-D numpy array"),
        (np.zeros((2, 2)), "dtype float64"),
        (np.zeros((2, 2), dtype=bool), "boolean array"),
        (np.zeros(3, dtype=int), "1-D numpy array"),
    ],
)
def test_invalid_grids_are_explained(value: object, message: str) -> None:
    with pytest.raises(InvalidGridError) as caught:
        validate_grid(value)
    assert message in str(caught.value)


class Color(int):
    """An int subclass: a color to the careful check, never to the fast one."""


def _outcome(check: object, value: object) -> object:
    try:
        return check(value)  # type: ignore[operator]
    except InvalidGridError as error:
        return f"error: {error}"


def test_the_fast_path_decides_as_the_cell_by_cell_check() -> None:
    """validate_grid answers, and words its errors, as the careful check alone does."""
    rng = random.Random(0)
    cells: list[object] = [0, 3, 9, 10, -1, True, False, 1.0, Color(2), np.int64(4), "1", None]
    values: list[object] = [[], [[]], [[0] * 31], [[0]] * 31, [(1, 2)], ((1, 2),)]
    for _ in range(3000):
        height, width = rng.choice((1, 2, 5, 30, 31)), rng.choice((1, 3, 30, 31))
        grid = [[rng.randint(0, 9) for _ in range(width)] for _ in range(height)]
        for _ in range(rng.choice((0, 0, 1, 2))):
            row = grid[rng.randrange(height)]
            row[rng.randrange(width)] = rng.choice(cells)  # type: ignore[call-overload]
        if rng.random() < 0.1:
            grid[rng.randrange(height)] = grid[0][:-1] or [5, 5]
        if rng.random() < 0.05:
            grid[rng.randrange(height)] = tuple(grid[0])  # type: ignore[call-overload]
        values.append(grid)
    for value in values:
        assert _outcome(validate_grid, value) == _outcome(_checked_grid, value), value
    valid = [v for v in values if not str(_outcome(validate_grid, v)).startswith("error")]
    assert len(valid) > 500
    assert sum(_plain_grid(v) is not None for v in valid) > 300  # most took the fast path
    for value in valid:
        copy = validate_grid(value)
        assert isinstance(value, (list, tuple))
        assert copy == [[int(c) for c in row] for row in value] and copy is not value
        assert all(type(c) is int for row in copy for c in row)
        assert all(a is not b for a, b in zip(copy, value, strict=True))
