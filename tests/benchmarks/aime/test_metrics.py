"""AIME: Grading and metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from arcmemo.benchmarks.aime.metrics import aime_metrics, majority_answer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "aime"
REAL_DATA = Path("/work/shared/data/aime")

# ------------------------------------------------------------------------------------------
# Metrics


def test_majority_answer_ties_go_to_first_occurrence() -> None:
    assert majority_answer([5, 7, 7, 5]) == 5
    assert majority_answer([7, 5, 5, 7]) == 7
    assert majority_answer([None, 3, 4, 4]) == 4
    assert majority_answer([None, None]) is None
    assert majority_answer([]) is None


def test_aime_metrics_hand_computed() -> None:
    per_task = [
        (5, [5, 5, 1]),  # first right; 2/3 right; majority 5 right
        (7, [1, 7, 7]),  # first wrong; 2/3; majority 7 right
        (9, [2, 9, 2]),  # first wrong; 1/3; majority 2 wrong
        (4, [None, None, None]),  # no answers: wrong everywhere
        (3, [3, 8, 8]),  # first right; 1/3; majority 8 wrong
        (0, [0, None, 6]),  # first right; 1/3; tie 0 vs 6 -> 0 (first) right
    ]
    metrics = aime_metrics(per_task)
    assert metrics["n_tasks"] == 6
    assert metrics["k"] == 3
    assert metrics["pass@1"] == pytest.approx(3 / 6)
    assert metrics["avg@k"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 0 + 1 / 3 + 1 / 3) / 6)
    assert metrics["score"] == metrics["avg@k"]
    assert metrics["pass@k"] == pytest.approx(5 / 6)
    assert metrics["n_solved"] == 5
    assert metrics["maj@k"] == pytest.approx(3 / 6)
    assert metrics["no_answer_rate"] == pytest.approx(4 / 18)


def test_aime_metrics_tie_broken_by_first_occurrence() -> None:
    assert aime_metrics([(6, [6, 2, 2, 6])])["maj@k"] == 1.0
    assert aime_metrics([(6, [2, 6, 6, 2])])["maj@k"] == 0.0
    # None answers do not vote: 6 wins over the three Nones.
    assert aime_metrics([(6, [None, None, None, 6])])["maj@k"] == 1.0


def test_aime_metrics_single_attempt_and_empty() -> None:
    metrics = aime_metrics([(1, [1]), (2, [3])])
    assert (metrics["pass@1"], metrics["avg@k"], metrics["pass@k"], metrics["maj@k"]) == (
        0.5,
        0.5,
        0.5,
        0.5,
    )
    assert metrics["k"] == 1
    empty = aime_metrics([])
    assert empty["n_tasks"] == 0
    assert empty["score"] == 0.0
    assert empty["n_solved"] == 0


def test_aime_metrics_uneven_attempts_weigh_tasks_equally() -> None:
    metrics = aime_metrics([(1, [1]), (2, [2, 0, 0, 0]), (3, [])])
    assert metrics["k"] == 4
    assert metrics["avg@k"] == pytest.approx((1 + 1 / 4 + 0) / 3)
    assert metrics["pass@k"] == pytest.approx(2 / 3)
    assert metrics["pass@1"] == pytest.approx(2 / 3)
    assert metrics["maj@k"] == pytest.approx(1 / 3)
