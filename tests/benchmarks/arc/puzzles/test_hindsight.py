"""Hindsight puzzles: a failed program's own outputs, kept only when they make a puzzle.

The end-to-end path (``library build --hindsight --puzzles``, ``puzzles show`` and
``puzzles verify``) is in ``tests/library/test_hindsight.py``.
"""

from __future__ import annotations

from arcmemo.benchmarks.arc.puzzles.hindsight import hindsight_puzzle_id, hindsight_report


def test_an_output_equal_to_its_input_or_of_one_color_fails_the_report() -> None:
    same = hindsight_report([([[1, 2]], [[1, 2]]), ([[1]], [[3, 3]])], "mirror")
    assert not same.passed
    assert same.failed()[0].details == [
        "pair 1: the output equals its input",
        "pair 2: the output is all one color",
    ]
    made = hindsight_report([([[1, 2]], [[2, 1]])], "mirror")
    assert made.passed
    exercised = made.check("exercises_concept")
    assert exercised is not None and "mirror" in exercised.note
    crux = made.check("concept_is_crux")
    assert crux is not None and crux.status == "skipped"


def test_a_hindsight_puzzle_id_names_the_concept_and_the_task() -> None:
    assert hindsight_puzzle_id("mirror-grid", "66e6c45b") == "mirror-grid-hindsight-66e6c45b"
