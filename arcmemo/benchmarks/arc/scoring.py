"""ARC scores from a task's correctness matrix.

``correct[a][t]`` says whether attempt ``a``'s final prediction for test input ``t`` is
exactly right. Conventions (see ``shared/reference/peers.md`` section 4.1):

* official: per test input, solved when one of the first two attempts is right; task score
  = mean over its test inputs; run score = mean over tasks (per-task averaging, as the ARC
  Prize benchmarking code does);
* strict: a task counts only when one attempt (of the first two) is right on every test input;
* oracle@k (ArcMemo paper, App. B): the mean over all k-subsets of the attempts of the
  per-test "any attempt in the subset is right" credit.
"""

from __future__ import annotations

import statistics
from itertools import combinations

OFFICIAL_ATTEMPTS = 2
Matrix = list[list[bool]]


def _width(correct: Matrix) -> int:
    widths = {len(row) for row in correct}
    if len(widths) > 1:
        raise ValueError(f"attempts disagree on the number of test inputs: {sorted(widths)}")
    return widths.pop() if widths else 0


def any_credit(correct: Matrix) -> float:
    """Mean over test inputs of "some attempt in ``correct`` is right" (0 with no attempts)."""
    tests = _width(correct)
    if not correct or tests == 0:
        return 0.0
    return sum(any(row[t] for row in correct) for t in range(tests)) / tests


def official_score(correct: Matrix, attempts_allowed: int = OFFICIAL_ATTEMPTS) -> float:
    """The official per-task score: credit of the first ``attempts_allowed`` attempts."""
    return any_credit(correct[:attempts_allowed])


def strict_solved(correct: Matrix, attempts_allowed: int = OFFICIAL_ATTEMPTS) -> bool:
    """True when one of the first attempts is right on every test input."""
    return any(row and all(row) for row in correct[:attempts_allowed])


def oracle_at_k(correct: Matrix, k: int) -> float:
    """Mean credit over all k-subsets of the attempts (k is capped at their number)."""
    if not correct:
        return 0.0
    k = min(k, len(correct))
    subsets = list(combinations(correct, k))
    return sum(any_credit(list(subset)) for subset in subsets) / len(subsets)


def run_scores(matrices: list[Matrix], attempts: int) -> dict[str, object]:
    """Run-level ARC scores over tasks: ``score``, ``strict_score`` and ``oracle``."""
    n = len(matrices)
    if n == 0:
        return {"score": 0.0, "strict_score": 0.0, "oracle": {}}
    return {
        "score": sum(official_score(m) for m in matrices) / n,
        "strict_score": sum(strict_solved(m) for m in matrices) / n,
        "oracle": {
            str(k): sum(oracle_at_k(m, k) for m in matrices) / n for k in range(1, attempts + 1)
        },
    }


def mean_and_std(values: list[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (None for fewer than two values), as the paper
    reports runs (46.00, 45.50, 47.50 -> 46.33, 1.04)."""
    mean = statistics.fmean(values)
    return mean, (statistics.stdev(values) if len(values) > 1 else None)
