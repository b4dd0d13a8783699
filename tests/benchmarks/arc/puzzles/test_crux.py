"""Rival explanations of a puzzle: the trivial baselines and the scoring rule."""

from __future__ import annotations

from arcmemo.benchmarks.arc.puzzles.crux import baselines, changed_cells, crux_problems, wrong_cells


def test_changed_and_wrong_cells_count_a_shape_change_as_every_cell() -> None:
    assert changed_cells([[1, 2], [3, 4]], [[1, 0], [3, 4]]) == 1
    assert changed_cells([[1, 2], [3, 4]], [[1, 2, 3]]) == 3
    assert wrong_cells(None, [[1, 2]]) == 2
    assert wrong_cells([[1]], [[1, 2]]) == 2


def test_the_baselines_are_identity_constant_halves_and_the_most_common_output() -> None:
    inputs = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]
    outputs = [[[9, 9], [9, 1]], [[2, 2], [2, 1]]]
    rivals = baselines(inputs, outputs)
    assert rivals["identity"] == inputs
    # each example's constant and most common output come from the other example
    assert rivals["constant"] == [[[2, 2], [2, 2]], [[9, 9], [9, 9]]]
    assert rivals["most common output"] == [outputs[1], outputs[0]]
    assert rivals["top half"] == [[[1, 2]], [[5, 6]]]
    assert rivals["bottom half"] == [[[3, 4]], [[7, 8]]]
    assert rivals["left half"] == [[[1], [3]], [[5], [7]]]
    assert rivals["right half"] == [[[2], [4]], [[6], [8]]]


def test_a_puzzle_with_one_fixed_output_is_explained_by_the_most_common_output() -> None:
    inputs = [[[1, 0], [0, 0]], [[0, 2], [0, 0]], [[0, 0], [3, 0]]]
    outputs = [[[5, 6], [7, 8]]] * 3
    problems, _ = crux_problems(inputs, outputs, {}, tolerance=0.1)
    assert len(problems) == 1 and "'most common output' alone reproduces" in problems[0]


def test_a_puzzle_whose_output_is_its_left_half_is_explained_by_that_half() -> None:
    inputs = [[[1, 2, 3, 4], [5, 6, 7, 8]], [[4, 3, 2, 1], [8, 7, 6, 5]]]
    outputs = [[[1, 2], [5, 6]], [[4, 3], [8, 7]]]
    problems, _ = crux_problems(inputs, outputs, {}, tolerance=0.1)
    assert any("'left half'" in line for line in problems)


def test_a_rival_within_the_tolerance_reproduces_and_one_beyond_it_does_not() -> None:
    inputs = [[[0] * 10 for _ in range(2)]]
    outputs = [[[1] * 10, [2] * 10]]  # 20 changed cells
    close = [[[1] * 10, [2] * 8 + [0, 0]]]  # 2 wrong: 10% of 20
    far = [[[1] * 10, [2] * 7 + [0, 0, 0]]]  # 3 wrong
    problems, note = crux_problems(
        inputs, outputs, {"close rule": close, "far rule": far}, tolerance=0.1
    )
    assert [line.split(" alone")[0] for line in problems] == ["the concept 'close rule'"]
    assert "2 rival rules from 2 other concept(s)" in note
