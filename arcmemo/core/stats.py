"""Statistics for run numbers: mean and sample std, unbiased "any of k" estimates, a
bootstrap confidence interval of a mean, and exact paired tests.

Pure Python and deterministic: the bootstrap draws from :class:`random.Random` with a fixed
seed, so the same numbers give the same interval on every machine.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0


def mean_std(values: Sequence[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (n - 1 in the denominator; None for fewer than two
    values), as the ArcMemo paper reports runs: 46.00, 45.50, 47.50 give 46.33 (1.04)."""
    if not values:
        raise ValueError("mean of no values")
    mean = statistics.fmean(values)
    return mean, (statistics.stdev(values) if len(values) > 1 else None)


def any_of_k(n: int, c: int, k: int) -> float:
    """The mean over all k-subsets of n samples, c of them right, of "some sample in the
    subset is right": ``1 - C(n - c, k) / C(n, k)``.

    This is the unbiased pass@k estimator of Chen et al. (2021) and, per ARC test input,
    the ArcMemo paper's oracle@k credit. Needs ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"any_of_k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    return 1.0 - comb(n - c, k) / comb(n, k)


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolating linearly between order statistics
    (numpy's default ``linear`` method)."""
    if not sorted_values:
        raise ValueError("quantile of no values")
    position = q * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def bootstrap_ci(
    values: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values``: ``resamples``
    resamples with replacement of the same size, drawn with a fixed ``seed``."""
    if not values:
        raise ValueError("bootstrap of no values")
    rng = random.Random(seed)
    size = len(values)
    means = sorted(sum(rng.choices(values, k=size)) / size for _ in range(resamples))
    tail = (1.0 - confidence) / 2
    return quantile(means, tail), quantile(means, 1.0 - tail)


def binomial_two_sided(successes: int, failures: int) -> float:
    """Exact two-sided p-value of ``successes`` against ``failures`` under p = 1/2:
    twice the smaller tail, at most 1 (1.0 when there are no trials)."""
    trials = successes + failures
    if trials == 0:
        return 1.0
    smaller = min(successes, failures)
    tail = sum(comb(trials, i) for i in range(smaller + 1))
    return min(1.0, 2 * tail / 2**trials)


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test on paired differences (ties left out)."""
    return binomial_two_sided(wins, losses)


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Exact McNemar test: the binomial test on the discordant pairs (solved by one run
    only), which is what the exact form of McNemar's test is."""
    return binomial_two_sided(only_first, only_second)


@dataclass(frozen=True)
class PairedComparison:
    """Two runs task by task: the differences ``first - second`` and the tests on them."""

    n_tasks: int
    mean_difference: float
    ci_low: float
    ci_high: float
    confidence: float
    resamples: int
    seed: int
    wins: int
    losses: int
    ties: int
    sign_p: float
    only_first: int
    only_second: int
    both: int
    neither: int
    mcnemar_p: float


def paired_comparison(
    first: Sequence[tuple[float, bool]],
    second: Sequence[tuple[float, bool]],
    *,
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> PairedComparison:
    """Compare per-task ``(score, solved)`` pairs of two runs on the same tasks, in the same
    order: bootstrap CI of the mean score difference, sign test on wins and losses, exact
    McNemar on solved and unsolved."""
    if len(first) != len(second):
        raise ValueError(f"paired runs need the same tasks ({len(first)} vs {len(second)})")
    if not first:
        raise ValueError("no tasks to compare")
    differences = [a - b for (a, _), (b, _) in zip(first, second, strict=True)]
    low, high = bootstrap_ci(differences, confidence=confidence, resamples=resamples, seed=seed)
    wins = sum(d > 0 for d in differences)
    losses = sum(d < 0 for d in differences)
    solved = [(a, b) for (_, a), (_, b) in zip(first, second, strict=True)]
    only_first = sum(a and not b for a, b in solved)
    only_second = sum(b and not a for a, b in solved)
    return PairedComparison(
        n_tasks=len(differences),
        mean_difference=statistics.fmean(differences),
        ci_low=low,
        ci_high=high,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        wins=wins,
        losses=losses,
        ties=len(differences) - wins - losses,
        sign_p=sign_test(wins, losses),
        only_first=only_first,
        only_second=only_second,
        both=sum(a and b for a, b in solved),
        neither=sum(not a and not b for a, b in solved),
        mcnemar_p=mcnemar_exact(only_first, only_second),
    )
