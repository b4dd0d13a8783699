"""Statistics: the paper's mean (std) convention, the "any of k" estimator, the bootstrap
interval and the exact tests, against hand-computed and independently computed values."""

from __future__ import annotations

import random
import statistics
from itertools import combinations
from math import comb

import numpy as np
import pytest

from arcmemo.core.stats import (
    any_of_k,
    binomial_two_sided,
    bootstrap_ci,
    mcnemar_exact,
    mean_std,
    paired_comparison,
    quantile,
    sign_test,
)

# Every (run0, run1, run2) -> oracle@1 "mean (std)" of the paper's Tables 4 and 5.
PAPER_RUNS = [
    ((46.00, 45.50, 47.50), "46.33 (1.04)"),
    ((48.00, 44.50, 50.00), "47.50 (2.78)"),
    ((49.00, 47.00, 48.00), "48.00 (1.00)"),
    ((49.50, 49.00, 49.50), "49.33 (0.29)"),
    ((57.00, 55.50, 61.00), "57.83 (2.84)"),
    ((56.00, 56.50, 57.50), "56.67 (0.76)"),
    ((59.00, 55.00, 56.00), "56.67 (2.08)"),
    ((58.50, 60.00, 55.50), "58.00 (2.29)"),
    ((59.50, 59.00, 65.00), "61.17 (3.33)"),
    ((65.00, 61.00, 61.00), "62.33 (2.31)"),
    ((62.00, 59.00, 61.00), "60.67 (1.53)"),
    ((60.50, 66.00, 58.50), "61.67 (3.88)"),
    ((46.00, 45.00, 47.00), "46.00 (1.00)"),
    ((48.00, 44.00, 50.00), "47.33 (3.06)"),
    ((49.00, 49.00, 49.00), "49.00 (0.00)"),
    ((57.00, 55.00, 61.00), "57.67 (3.06)"),
    ((56.00, 56.00, 57.00), "56.33 (0.58)"),
    ((58.00, 60.00, 55.00), "57.67 (2.52)"),
    ((59.00, 59.00, 65.00), "61.00 (3.46)"),
    ((60.00, 66.00, 58.00), "61.33 (4.16)"),
]


@pytest.mark.parametrize(("runs", "printed"), PAPER_RUNS)
def test_mean_std_is_the_papers_mean_and_sample_std(runs: tuple, printed: str) -> None:
    mean, std = mean_std(runs)
    assert std is not None
    assert f"{mean:.2f} ({std:.2f})" == printed


def test_mean_std_of_one_value_and_of_none() -> None:
    assert mean_std([46.0]) == (46.0, None)
    with pytest.raises(ValueError):
        mean_std([])


def test_any_of_k_is_the_mean_over_k_subsets() -> None:
    for n in range(1, 8):
        for c in range(n + 1):
            samples = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(combinations(samples, k))
                expected = sum(any(s) for s in subsets) / len(subsets)
                assert any_of_k(n, c, k) == pytest.approx(expected), (n, c, k)
    assert any_of_k(3, 1, 2) == pytest.approx(2 / 3)
    assert any_of_k(10, 3, 1) == pytest.approx(0.3)  # pass@1 = c / n
    for bad in ((3, 4, 1), (3, 1, 0), (3, 1, 4)):
        with pytest.raises(ValueError):
            any_of_k(*bad)


def test_quantile_matches_numpys_linear_method() -> None:
    rng = random.Random(1)
    values = sorted(rng.random() for _ in range(37))
    for q in (0.0, 0.025, 0.5, 0.975, 1.0):
        assert quantile(values, q) == pytest.approx(float(np.percentile(values, 100 * q)))


def test_bootstrap_ci_is_seeded_and_near_the_normal_interval() -> None:
    values = [1.0] * 30 + [0.0] * 70
    low, high = bootstrap_ci(values)
    assert (low, high) == bootstrap_ci(values)  # fixed seed: the same interval every time
    rng = random.Random(2)
    spread = [rng.random() for _ in range(50)]
    assert bootstrap_ci(spread, seed=1) != bootstrap_ci(spread)
    half_width = 1.96 * statistics.pstdev(values) / len(values) ** 0.5  # 0.0898
    assert low == pytest.approx(0.3 - half_width, abs=0.015)
    assert high == pytest.approx(0.3 + half_width, abs=0.015)
    assert bootstrap_ci([0.5] * 10) == (0.5, 0.5)


def test_exact_binomial_tests_by_hand() -> None:
    # 8 wins, 2 losses: 2 * (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 112 / 1024.
    assert sign_test(8, 2) == pytest.approx(112 / 1024)
    assert sign_test(2, 8) == sign_test(8, 2)
    assert sign_test(0, 6) == pytest.approx(2 / 64)
    assert sign_test(5, 5) == 1.0  # capped at 1
    assert sign_test(0, 0) == 1.0
    assert mcnemar_exact(1, 9) == pytest.approx(2 * (1 + 10) / 1024)
    for wins in range(0, 12):
        losses = 11 - wins
        tail = sum(comb(11, i) for i in range(min(wins, losses) + 1)) / 2**11
        assert binomial_two_sided(wins, losses) == pytest.approx(min(1.0, 2 * tail))


def test_paired_comparison_counts_and_tests() -> None:
    first = [(1.0, True), (0.5, False), (1.0, True), (0.0, False), (1.0, True)]
    second = [(0.0, False), (0.5, False), (1.0, True), (0.5, False), (0.0, False)]
    result = paired_comparison(first, second)
    assert result.n_tasks == 5
    assert result.mean_difference == pytest.approx((1 + 0 + 0 - 0.5 + 1) / 5)
    assert (result.wins, result.losses, result.ties) == (2, 1, 2)
    assert result.sign_p == pytest.approx(sign_test(2, 1)) == 1.0
    assert (result.only_first, result.only_second, result.both, result.neither) == (2, 0, 1, 2)
    assert result.mcnemar_p == pytest.approx(0.5)
    assert result.ci_low <= result.mean_difference <= result.ci_high
    assert (result.resamples, result.seed, result.confidence) == (10_000, 0, 0.95)
    with pytest.raises(ValueError, match="same tasks"):
        paired_comparison(first, second[:2])
    with pytest.raises(ValueError, match="no tasks"):
        paired_comparison([], [])
