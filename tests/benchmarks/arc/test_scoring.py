"""ARC scores against hand-computed cases: official, strict, oracle@k, run totals, mean/std."""

from __future__ import annotations

import pytest

from arcmemo.benchmarks.arc.scoring import (
    any_credit,
    mean_and_std,
    official_score,
    oracle_at_k,
    run_scores,
    strict_solved,
)

T, F = True, False


def test_any_credit_is_per_test_input() -> None:
    assert any_credit([[T, F], [F, T]]) == 1.0
    assert any_credit([[T, F], [T, F]]) == 0.5
    assert any_credit([[F, F, T]]) == pytest.approx(1 / 3)
    assert any_credit([]) == 0.0


def test_official_score_gives_half_points_on_two_test_inputs() -> None:
    assert official_score([[T, F], [F, F]]) == 0.5
    assert official_score([[T, F], [F, T]]) == 1.0
    assert official_score([[F, F], [F, F]]) == 0.0


def test_official_score_counts_only_the_first_two_attempts() -> None:
    assert official_score([[F], [F], [T]]) == 0.0
    assert official_score([[F], [T], [F]]) == 1.0
    assert official_score([[F], [F], [T]], attempts_allowed=3) == 1.0


def test_strict_needs_one_attempt_right_on_every_test_input() -> None:
    split = [[T, F], [F, T]]
    assert official_score(split) == 1.0
    assert strict_solved(split) is False  # official and strict differ here
    assert strict_solved([[F, F], [T, T]]) is True
    assert strict_solved([[F, F], [F, F], [T, T]]) is False  # third attempt is not counted
    assert strict_solved([]) is False


def test_oracle_at_k_averages_over_k_subsets_of_three_attempts() -> None:
    one_test = [[T], [F], [F]]
    assert oracle_at_k(one_test, 1) == pytest.approx(1 / 3)
    assert oracle_at_k(one_test, 2) == pytest.approx(2 / 3)  # {01, 02, 12} -> 1, 1, 0
    assert oracle_at_k(one_test, 3) == 1.0
    two_tests = [[T, F], [F, T], [F, F]]
    assert oracle_at_k(two_tests, 1) == pytest.approx((0.5 + 0.5 + 0) / 3)
    assert oracle_at_k(two_tests, 2) == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert oracle_at_k(two_tests, 3) == 1.0
    assert oracle_at_k(two_tests, 5) == 1.0  # k is capped at the number of attempts
    assert oracle_at_k([], 1) == 0.0


def test_attempts_must_agree_on_the_number_of_test_inputs() -> None:
    with pytest.raises(ValueError, match="number of test inputs"):
        any_credit([[T], [T, F]])


def test_run_scores_average_per_task() -> None:
    matrices = [
        [[T], [F], [F]],  # official 1, strict 1, oracle 1/3, 2/3, 1
        [[T, F], [F, T], [F, F]],  # official 1, strict 0, oracle 1/3, 2/3, 1
        [[F, F], [F, F], [T, T]],  # official 0, strict 0, oracle 1/3, 2/3, 1
        [[F], [F], [F]],  # nothing
    ]
    scores = run_scores(matrices, attempts=3)
    assert scores["score"] == pytest.approx(2 / 4)
    assert scores["strict_score"] == pytest.approx(1 / 4)
    oracle = scores["oracle"]
    assert isinstance(oracle, dict) and sorted(oracle) == ["1", "2", "3"]
    assert oracle["1"] == pytest.approx(1 / 4)
    assert oracle["2"] == pytest.approx(2 / 4)
    assert oracle["3"] == pytest.approx(3 / 4)


def test_run_scores_of_no_tasks() -> None:
    assert run_scores([], attempts=2) == {"score": 0.0, "strict_score": 0.0, "oracle": {}}


def test_mean_and_std_reproduce_the_papers_table_4() -> None:
    mean, std = mean_and_std([46.00, 45.50, 47.50])
    assert round(mean, 2) == 46.33
    assert std is not None and round(std, 2) == 1.04  # sample standard deviation
    assert mean_and_std([46.0]) == (46.0, None)
