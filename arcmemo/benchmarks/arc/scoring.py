"""ARC scores as the ArcMemo paper defines them: oracle@k over attempts, at every retry
depth, and its strict variant (paper App. B; ``docs/method.md``, section 2).

A run's attempts are the paper's runs: attempt ``j`` of every task is the paper's run ``j``
(arcmemo calls it **attempt index** ``j``, a run being a run directory). For a set
``C`` of attempts, a task's credit is the mean over its test inputs of "some attempt in
``C`` is right on it" (half points on a two-test task); under **strict** scoring it is 1
when one attempt in ``C`` is right on every test input and 0 otherwise. The run-level
score of ``C`` is the mean credit over tasks (per-task averaging, as the ARC Prize code
does). **oracle@k** is the mean over all k-subsets of the attempts of that run-level score,
with the sample standard deviation over those subsets: oracle@1 is the mean and std over the
single attempts, oracle@2 over the pairs, oracle@n is one subset and has no std.

The mean is computed in closed form: per test input with ``c`` of ``n`` attempts right, the
mean credit over k-subsets is ``1 - C(n-c, k) / C(n, k)`` (per task under strict scoring,
with ``c`` the attempts right on every test input); a run's mean is the mean of its tasks'.
The std needs every subset's run-level score, so subsets are enumerated when there are at
most :data:`MAX_SUBSETS` of them; above that the std and the subset list are None.

At retry depth ``r`` an attempt counts by its program after at most ``r`` retries
(``steps[min(r, len(steps) - 1)]``), so an attempt that stopped early keeps its last program.

A run's ``score`` is oracle@2 at the final retry depth (oracle@1 when there is one attempt):
the official ARC metric as the paper reports it. A task's score is its own oracle@min(2, n),
so the run's ``score`` is the mean of its tasks' scores.

**The code convention** (``code_*`` keys) reads attempts as the paper's published
code does (``official_score`` with ``step_selection="all"`` and ``strict_score`` with
``include_train=True, step_selection="last"`` in its ``score_tree.py``, the figures its
notebooks report): at depth ``r`` an attempt is right on a test input when *any* of its steps
up to ``r`` is (not only the last), and under strict scoring its program at depth ``r`` must
also be right on every train pair. oracle@k over the attempts is computed the same way. The
convention needs per-step records (each step's test correctness and train verification);
results without them have ``None`` there ("not recorded").

**Prompt variants** (``--variants``): the published code scores a puzzle over every path
of every prompt variant together (its ``score_trace`` ORs them). Here attempt ``j`` of each
variant belongs to attempt index ``j``, and its row is right on a test input when one of
its attempts is (strict: when one of its attempts is right on every test input), so
oracle@k is over attempt indices, and with one attempt per variant every score is the
published oracle over all variants.
"""

from __future__ import annotations

import functools
from collections import Counter
from itertools import combinations
from math import comb
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.benchmarks.base import RunMetrics
from arcmemo.core.records import Attempt, TaskResult
from arcmemo.core.stats import any_of_k, mean_std

SCORE_K = 2  # the official ARC metric: two attempts per test input
MAX_SUBSETS = 2000  # subsets enumerated for a std; above this the std is None
Matrix = list[list[bool]]  # correct[attempt][test input]
Signature = tuple[int, ...]  # per credited unit (a test input, or the task when strict), the
# bitmask of the attempts that are right on it


def _width(correct: Matrix) -> int:
    widths = {len(row) for row in correct}
    if len(widths) > 1:
        raise ValueError(f"attempts disagree on the number of test inputs: {sorted(widths)}")
    return widths.pop() if widths else 0


def _signature(correct: Matrix, *, strict: bool) -> Signature:
    """The bitmasks of right attempts: one per test input, or one for the whole task when
    ``strict`` (the attempts right on every test input; none on a task without tests)."""
    tests = _width(correct)
    if strict:
        return (sum(1 << a for a, row in enumerate(correct) if tests and all(row)),)
    return tuple(sum(1 << a for a, row in enumerate(correct) if row[t]) for t in range(tests))


def _mean_credit(signature: Signature, n: int, k: int) -> float:
    """A task's credit averaged over all k-subsets of its n attempts (closed form)."""
    if not signature:
        return 0.0
    return sum(any_of_k(n, mask.bit_count(), k) for mask in signature) / len(signature)


def oracle_at_k(correct: Matrix, k: int, *, strict: bool = False) -> float:
    """A task's oracle@k: its credit averaged over the k-subsets of its attempts (k capped at
    their number; 0 with no attempts)."""
    n = len(correct)
    if n == 0:
        return 0.0
    return _mean_credit(_signature(correct, strict=strict), n, min(k, n))


def task_score(correct: Matrix, *, strict: bool = False) -> float:
    """A task's score: its oracle@min(2, n) (the run's ``score`` is the mean of these)."""
    return oracle_at_k(correct, SCORE_K, strict=strict)


def task_solved(correct: Matrix, *, strict: bool = False) -> bool:
    """Every test input is right in some attempt (strict: one attempt is right on all)."""
    return oracle_at_k(correct, len(correct), strict=strict) == 1.0


def attempt_row(attempt: Attempt, depth: int | None) -> list[bool]:
    """Per test input, whether the attempt's program after at most ``depth`` retries (None:
    its final one) is right; an attempt without steps, or a step never judged, is wrong."""
    if depth is None or not attempt.steps:
        return list(attempt.correct)
    step = attempt.steps[min(depth, len(attempt.steps) - 1)]
    return list(step.correct) if step.correct is not None else [False] * len(attempt.correct)


def code_row(attempt: Attempt, depth: int | None, *, strict: bool) -> list[bool] | None:
    """Per test input, whether the attempt counts under the published code's convention at
    retry ``depth`` (None: all its steps): some step up to ``depth`` is right on it; when
    ``strict``, the step at ``depth`` is right on it and on every train pair. None when a
    step lacks its record (test correctness, or train verification when ``strict``)."""
    if not attempt.steps:
        return [False] * len(attempt.correct)
    steps = attempt.steps if depth is None else attempt.steps[: depth + 1]
    if strict:
        last = steps[-1]
        if last.correct is None or last.verified is None:
            return None
        return list(last.correct) if last.verified else [False] * len(last.correct)
    rows = [step.correct for step in steps]
    if any(row is None for row in rows):
        return None
    return [any(column) for column in zip(*rows, strict=True)]


def by_attempt_index(attempts: list[Attempt], rows: Matrix, *, strict: bool) -> Matrix:
    """``rows`` (one per attempt) as one row per attempt index: attempt ``j`` of every
    prompt variant together (the module docstring); unchanged without variants."""
    if all(a.variant == 0 for a in attempts):
        return rows
    indices: list[Matrix] = []
    seen: Counter[int] = Counter()
    for attempt, row in zip(attempts, rows, strict=True):
        j = seen[attempt.variant]
        seen[attempt.variant] += 1
        if j == len(indices):
            indices.append([])
        indices[j].append(row)
    width = _width(rows)
    if strict:
        return [[any(all(row) for row in same)] * width for same in indices]
    return [[any(column) for column in zip(*same, strict=True)] for same in indices]


def n_attempt_indices(result: TaskResult) -> int:
    """How many attempt indices the task's attempts make (its attempts per prompt variant)."""
    return max(Counter(a.variant for a in result.attempts).values(), default=0)


def task_rows(attempts: list[Attempt], *, strict: bool = False) -> Matrix:
    """Per attempt index, whether its final programs are right on each test input
    (:func:`by_attempt_index`)."""
    return by_attempt_index(attempts, [list(a.correct) for a in attempts], strict=strict)


def _pad(rows: Matrix, attempts: int) -> Matrix:
    """``rows`` with missing attempts (fewer than ``attempts``) wrong everywhere."""
    width = _width(rows)
    return rows + [[False] * width for _ in range(attempts - len(rows))]


def task_matrix(
    result: TaskResult, depth: int | None, attempts: int, *, strict: bool = False
) -> Matrix:
    """The task's correctness per attempt index at retry ``depth`` (None: the final one),
    with missing attempt indices (fewer than ``attempts``) counted as wrong everywhere."""
    rows = [attempt_row(a, depth) for a in result.attempts]
    return _pad(by_attempt_index(result.attempts, rows, strict=strict), attempts)


def code_matrix(
    result: TaskResult, depth: int | None, attempts: int, *, strict: bool
) -> Matrix | None:
    """:func:`task_matrix` under the code convention (:func:`code_row`); None
    when the task's steps were not recorded."""
    rows = [code_row(a, depth, strict=strict) for a in result.attempts]
    known = [row for row in rows if row is not None]
    if len(known) < len(rows):
        return None
    return _pad(by_attempt_index(result.attempts, known, strict=strict), attempts)


def _unit_weights(signatures: Counter[Signature], n_tasks: int) -> dict[int, float]:
    """Each bitmask of right attempts with the share of the run-level score it carries (a
    task weighs 1 / n_tasks, split evenly over its credited units)."""
    weights: dict[int, float] = {}
    for signature, count in signatures.items():
        for mask in signature:
            weights[mask] = weights.get(mask, 0.0) + count / (len(signature) * n_tasks)
    return weights


@functools.lru_cache(maxsize=256)
def _subset_masks(n: int, k: int) -> tuple[int, ...]:
    """The bitmask of every k-subset of n attempts, in ``combinations`` order (the same for
    every retry depth and for plain and strict scoring, so computed once)."""
    return tuple(sum(1 << a for a in s) for s in combinations(range(n), k))


def _subset_scores(weights: dict[int, float], n: int, k: int) -> list[float]:
    """The run-level score of every k-subset of the n attempts, in ``combinations`` order:
    the weight of the units that some attempt of the subset gets right."""
    import numpy as np

    if not weights:
        return [0.0] * comb(n, k)
    dtype = np.int64 if n < 63 else object  # masks of many attempts stay Python ints
    masks = np.array(list(weights), dtype=dtype)
    shares = np.array(list(weights.values()), dtype=float)
    subsets = np.array(_subset_masks(n, k), dtype=dtype)
    hit = (subsets[:, None] & masks[None, :]) != 0
    return [float(v) for v in hit.astype(float) @ shares]


def oracle_cells(matrices: list[Matrix], n: int, *, strict: bool) -> dict[str, dict[str, Any]]:
    """``{"oracle@k": {"mean", "std", "subsets"}}`` for k = 1..n over the tasks' matrices.

    ``subsets`` lists the run-level score of each k-subset of attempt indices in
    :func:`itertools.combinations` order (for k = 1: attempt 0, 1, ...; for k = 2: (0, 1),
    (0, 2), (1, 2), ...); ``std`` is their sample std (None for one subset). Both are None
    when there are more than :data:`MAX_SUBSETS` subsets.
    """
    signatures = Counter(_signature(m, strict=strict) for m in matrices)
    weights = _unit_weights(signatures, len(matrices))
    # The mean only depends on how many attempts get each unit right: n + 1 terms per k.
    by_count: dict[int, float] = {}
    for mask, weight in weights.items():
        by_count[mask.bit_count()] = by_count.get(mask.bit_count(), 0.0) + weight
    cells: dict[str, dict[str, Any]] = {}
    for k in range(1, n + 1):
        mean = sum(weight * any_of_k(n, c, k) for c, weight in sorted(by_count.items()))
        subsets = _subset_scores(weights, n, k) if comb(n, k) <= MAX_SUBSETS else None
        std = mean_std(subsets)[1] if subsets else None
        cells[f"oracle@{k}"] = {"mean": mean, "std": std, "subsets": subsets}
    return cells


class OracleCell(BaseModel):
    """oracle@k at one retry depth: :func:`oracle_cells`."""

    mean: float
    std: float | None = Field(description="Sample std over the k-subsets; None for one subset.")
    subsets: list[float] | None = Field(
        description="Run-level score of each k-subset; None above MAX_SUBSETS subsets."
    )


class ArcMetrics(RunMetrics):
    """The ARC part of ``summary.json`` (:func:`run_scores`); the flat ``oracle@k`` means
    are kept as extra keys."""

    labels: bool = Field(default=True, description="False in inference mode (no test outputs).")
    n_unlabelled: int | None = Field(default=None, description="Tasks without test outputs.")
    strict_score: float | None = None
    score_metric: str | None = Field(default=None, description="The oracle@k of score.")
    score_retry_depth: int | None = None
    n_scored: int | None = Field(
        default=None, description="Tasks these figures come from (the scored results)."
    )
    n_attempts: int | None = None
    by_retry: dict[str, dict[str, OracleCell]] | None = Field(
        default=None, description="Per retry depth reached, oracle@k for k = 1..n."
    )
    strict_by_retry: dict[str, dict[str, OracleCell]] | None = None
    code_score: float | None = Field(
        default=None,
        description="score under the published code's convention (any step up to the depth); "
        "None: not recorded.",
    )
    code_strict_score: float | None = Field(
        default=None,
        description="strict_score under the published code's convention (train pairs too).",
    )
    code_by_retry: dict[str, dict[str, OracleCell]] | None = Field(
        default=None,
        description="by_retry under the published code's convention; None (or absent in "
        "summaries before it) when results.jsonl has no per-step records.",
    )
    code_strict_by_retry: dict[str, dict[str, OracleCell]] | None = None


def _code_by_retry(
    results: list[TaskResult], n: int, depths: int, *, strict: bool
) -> dict[str, dict[str, dict[str, Any]]] | None:
    """Per retry depth, :func:`oracle_cells` under the code convention; None when a
    task's steps were not recorded."""
    by_retry: dict[str, dict[str, dict[str, Any]]] = {}
    for depth in range(depths if results else 0):
        matrices = [code_matrix(r, depth, n, strict=strict) for r in results]
        known = [m for m in matrices if m is not None]
        if len(known) < len(matrices):
            return None
        by_retry[str(depth)] = oracle_cells(known, n, strict=strict)
    return by_retry


def _code_scores(results: list[TaskResult], n: int, depths: int, metric: str) -> dict[str, Any]:
    """The ``code_*`` keys of :func:`run_scores` (None where not recorded)."""
    scores: dict[str, Any] = {}
    for strict, name in ((False, "code"), (True, "code_strict")):
        by_retry = _code_by_retry(results, n, depths, strict=strict)
        final = by_retry.get(str(depths - 1), {}) if by_retry is not None else None
        scores[f"{name}_score"] = (
            None if final is None else (final[metric]["mean"] if final else 0.0)
        )
        scores[f"{name}_by_retry"] = by_retry
    return scores


def run_scores(results: list[TaskResult], attempts: int) -> dict[str, Any]:
    """The ARC part of ``summary.json``.

    Keys: ``score`` and ``strict_score`` (oracle@min(2, n) at the final retry depth, plain
    and strict), ``score_metric`` (that oracle@k), ``score_retry_depth`` (the final depth),
    ``n_scored`` (the tasks these figures come from), ``n_attempts``, ``oracle@k`` for
    k = 1..n (means at the final depth, flat for tables), and ``by_retry`` /
    ``strict_by_retry``: per retry depth reached (``"0"``, ``"1"``, ...), :func:`oracle_cells`;
    ``code_score``, ``code_strict_score``, ``code_by_retry`` and
    ``code_strict_by_retry``: the same under the published code's convention (None when
    the results have no per-step records).
    """
    unscored = sum(r.score is None for r in results)
    if results and unscored == len(results):
        # Inference mode (no test outputs): no score at all rather than a score of 0.
        return {"labels": False, "n_unlabelled": unscored}
    results = [r for r in results if r.score is not None]
    n = max([attempts, *(n_attempt_indices(r) for r in results)])
    depths = max((len(a.steps) for r in results for a in r.attempts), default=1)
    by_retry: dict[str, dict[str, dict[str, Any]]] = {}
    strict_by_retry: dict[str, dict[str, dict[str, Any]]] = {}
    if results:
        for depth in range(depths):
            for strict, cells in ((False, by_retry), (True, strict_by_retry)):
                matrices = [task_matrix(r, depth, n, strict=strict) for r in results]
                cells[str(depth)] = oracle_cells(matrices, n, strict=strict)
    final, strict_final = by_retry.get(str(depths - 1), {}), strict_by_retry.get(str(depths - 1))
    metric = f"oracle@{min(SCORE_K, n)}"
    return {
        "score": final[metric]["mean"] if final else 0.0,
        "strict_score": strict_final[metric]["mean"] if strict_final else 0.0,
        "score_metric": metric,
        "score_retry_depth": depths - 1,
        "n_scored": len(results),
        "n_attempts": n,
        **{key: cell["mean"] for key, cell in final.items()},
        "by_retry": by_retry,
        "strict_by_retry": strict_by_retry,
        **_code_scores(results, n, depths, metric),
        **({"n_unlabelled": unscored} if unscored else {}),
    }
