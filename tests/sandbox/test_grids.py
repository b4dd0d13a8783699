import numpy as np
import pytest

from arcmemo.sandbox import InvalidGridError, validate_grid


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
