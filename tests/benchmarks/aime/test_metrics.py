"""AIME: Grading and metrics."""

from __future__ import annotations

import random
import statistics
from itertools import combinations
from pathlib import Path

import pytest

from arcmemo.benchmarks.aime.metrics import aime_metrics, majority_answer, problem_metrics

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "aime"

# ------------------------------------------------------------------------------------------
# Metrics


def test_majority_answer_ties_go_to_first_occurrence() -> None:
    assert majority_answer([5, 7, 7, 5]) == 5
    assert majority_answer([7, 5, 5, 7]) == 7
    assert majority_answer([None, 3, 4, 4]) == 4
    assert majority_answer([None, None]) is None
    assert majority_answer([]) is None


def test_aime_metrics_hand_computed() -> None:
    per_task: list[tuple[int, list[int | None]]] = [
        (5, [5, 5, 1]),  # 2 of 3 right: pass@1 2/3, pass@2 1; majority 5 right
        (7, [1, 7, 7]),  # 2 of 3: 2/3, 1; majority 7 right
        (9, [2, 9, 2]),  # 1 of 3: 1/3, pass@2 = 1 - C(2,2)/C(3,2) = 2/3; majority 2 wrong
        (4, [None, None, None]),  # no answers: wrong everywhere
        (3, [3, 8, 8]),  # 1 of 3: 1/3, 2/3; majority 8 wrong
        (0, [0, None, 6]),  # 1 of 3: 1/3, 2/3; tie 0 vs 6 -> 0 (first) right
    ]
    metrics = aime_metrics(per_task)
    assert metrics["n_tasks"] == 6 and metrics["n_samples"] == 3
    per_problem_pass_1 = [2 / 3, 2 / 3, 1 / 3, 0, 1 / 3, 1 / 3]
    assert metrics["pass@1"] == pytest.approx(7 / 18)  # mean over samples
    assert metrics["score"] == metrics["pass@1"]
    assert metrics["pass@2"] == pytest.approx((1 + 1 + 2 / 3 + 0 + 2 / 3 + 2 / 3) / 6)
    assert metrics["pass@3"] == pytest.approx(5 / 6)
    assert metrics["maj@3"] == pytest.approx(3 / 6)
    assert metrics["n_solved"] == 5
    assert metrics["no_answer_rate"] == pytest.approx(4 / 18)
    by_metric = metrics["by_metric"]
    assert sorted(by_metric) == ["maj@3", "pass@1", "pass@2", "pass@3"]
    assert by_metric["pass@1"]["mean"] == metrics["pass@1"]
    assert by_metric["pass@1"]["std"] == pytest.approx(statistics.stdev(per_problem_pass_1))
    assert by_metric["maj@3"]["std"] == pytest.approx(statistics.stdev([1, 1, 0, 0, 0, 1]))
    # The old names are gone rather than changed in meaning.
    assert not {"avg@k", "pass@k", "maj@k", "k"} & set(metrics)


def test_pass_at_k_is_the_unbiased_estimate_over_k_subsets() -> None:
    rng = random.Random(4)
    for _ in range(50):
        reference = 7
        answers = [rng.choice([7, 3, None]) for _ in range(rng.randint(1, 6))]
        metrics = aime_metrics([(reference, answers)])
        for k in range(1, len(answers) + 1):
            subsets = list(combinations(answers, k))
            expected = sum(reference in subset for subset in subsets) / len(subsets)
            assert metrics[f"pass@{k}"] == pytest.approx(expected), (answers, k)


def test_problem_metrics_of_one_problem() -> None:
    assert problem_metrics(6, [6, 2, 2, 6], 4) == pytest.approx(
        {"pass@1": 0.5, "pass@2": 5 / 6, "pass@3": 1.0, "pass@4": 1.0, "maj@4": 1.0}
    )


def test_aime_metrics_tie_broken_by_first_occurrence() -> None:
    assert aime_metrics([(6, [6, 2, 2, 6])])["maj@4"] == 1.0
    assert aime_metrics([(6, [2, 6, 6, 2])])["maj@4"] == 0.0
    # None answers do not vote: 6 wins over the three Nones.
    assert aime_metrics([(6, [None, None, None, 6])])["maj@4"] == 1.0


def test_aime_metrics_single_sample_and_empty() -> None:
    metrics = aime_metrics([(1, [1]), (2, [3])])
    assert (metrics["pass@1"], metrics["maj@1"], metrics["n_samples"]) == (0.5, 0.5, 1)
    assert "pass@2" not in metrics
    assert metrics["by_metric"]["pass@1"]["std"] == pytest.approx(statistics.stdev([1, 0]))
    one = aime_metrics([(1, [1, 1])])
    assert one["by_metric"]["pass@1"] == {"mean": 1.0, "std": None}  # one problem: no std
    empty = aime_metrics([])
    assert empty["n_tasks"] == 0 and empty["n_samples"] == 0
    assert empty["score"] == 0.0 and empty["n_solved"] == 0 and empty["by_metric"] == {}


def test_aime_metrics_missing_samples_count_as_no_answer() -> None:
    metrics = aime_metrics([(1, [1]), (2, [2, 0, 0, 0]), (3, [])])
    assert metrics["n_samples"] == 4
    assert metrics["pass@1"] == pytest.approx((1 / 4 + 1 / 4 + 0) / 3)
    assert metrics["pass@4"] == pytest.approx(2 / 3)
    assert metrics["maj@4"] == pytest.approx(1 / 3)
    assert metrics["no_answer_rate"] == pytest.approx(7 / 12)
