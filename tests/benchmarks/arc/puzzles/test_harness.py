"""The harness' neutral substitute and grid test, exercised in-process (it is plain Python)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from arcmemo.benchmarks.arc.puzzles.verify import harness_source


@pytest.fixture(scope="module")
def harness() -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "harness_under_test"}
    exec(compile(harness_source(), "<harness>", "exec"), namespace)
    return namespace


GRID = {"grid_params": ["grid"], "returns_grid": True}


def paint(cells: list, grid: list) -> list:
    return grid


def test_identity_uses_the_parameter_the_ontology_types_grid(harness: dict[str, Any]) -> None:
    # `cells` is a list of positions, which also looks like a 2x2 grid of small ints; the
    # substitute must return the `grid` argument because the ontology types it `grid`.
    cells, grid = [(1, 2), (3, 4)], [[0, 5, 0], [0, 0, 0]]
    substitute = harness["_arcmemo_neutral"](paint, [[[1, 5, 0], [0, 0, 0]]], GRID)
    result = substitute(cells, grid)
    assert result == grid and result is not grid  # a copy: later edits leave the input alone
    fallback = harness["_arcmemo_neutral"](paint, [[[1, 5, 0], [0, 0, 0]]], {})
    assert fallback(cells, grid) == [[1, 2], [3, 4]]  # no hint: the first valid grid


def test_identity_keeps_numpy_arrays_as_arrays(harness: dict[str, Any]) -> None:
    grid = np.array([[1, 2], [3, 4]])
    substitute = harness["_arcmemo_neutral"](lambda g: g, [grid[::-1]], GRID)
    result = substitute(grid)
    assert isinstance(result, np.ndarray) and (result == grid).all() and result is not grid


def test_a_grid_result_without_grid_argument_becomes_a_blank_grid(
    harness: dict[str, Any],
) -> None:
    def draw(height: int, width: int, color: int) -> list:
        return [[color] * width for _ in range(height)]

    substitute = harness["_arcmemo_neutral"](draw, [draw(2, 3, 4)], {"returns_grid": True})
    assert substitute(2, 3, 4) == [[0, 0, 0], [0, 0, 0]]


@pytest.mark.parametrize(
    ("real", "blank"),
    [(7, 0), (2.5, 0.0), ("abc", ""), ([(1, 2)], []), ({"a": 1}, {}), (None, None), (True, False)],
)
def test_other_results_become_a_constant_of_their_type(
    harness: dict[str, Any], real: object, blank: object
) -> None:
    substitute = harness["_arcmemo_neutral"](lambda g: real, [real], {"returns_grid": False})
    result = substitute([[1]])
    assert result == blank and type(result) is type(blank)


def test_without_an_output_type_the_real_value_decides(harness: dict[str, Any]) -> None:
    # A list of positions looks like a grid; with output_type unknown it is taken as one.
    substitute = harness["_arcmemo_neutral"](lambda g: [(1, 2)], [[(1, 2)]], {})
    assert substitute([[3, 3]]) == [[3, 3]]
    declared = harness["_arcmemo_neutral"](lambda g: [(1, 2)], [[(1, 2)]], {"returns_grid": False})
    assert declared([[3, 3]]) == []


def test_later_calls_follow_the_type_of_the_matching_real_call(harness: dict[str, Any]) -> None:
    substitute = harness["_arcmemo_neutral"](lambda g: g, [3, [[1, 1]]], {})
    assert substitute([[1, 2]]) == 0
    assert substitute([[1, 2]]) == [[1, 2]]
    assert substitute([[1, 2]]) == [[1, 2]]  # past the real calls: like the last one


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ([[1, 2], [3, 4]], None),
        (np.zeros((2, 2), dtype=int), None),
        ([[1, 2], [3]], "not rectangular"),
        ([[True]], "not an int"),
        ([[1.0]], "not an int"),
        ([[12]], "not a color"),
        ([], "not a non-empty list"),
        (np.zeros((2, 2, 2), dtype=int), "3-D"),
        ([[0] * 31], "larger than 30x30"),
    ],
)
def test_grid_problem_matches_the_sandbox_grid_rules(
    harness: dict[str, Any], value: object, problem: str | None
) -> None:
    found = harness["_arcmemo_grid_problem"](value)
    assert (found is None) if problem is None else (problem in found)


def test_the_harness_appends_cleanly_to_a_module() -> None:
    program = "def transform(grid):\n    return grid\n" + harness_source()
    compile(program, "<program>", "exec")  # e.g. no __future__ import after module code
