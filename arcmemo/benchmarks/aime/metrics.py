"""AIME grading (exact integer match) and run metrics: pass@1 (mean over samples), unbiased
pass@k for every k, maj@n, each with its std over problems."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.benchmarks.aime.answers import ExtractedAnswer
from arcmemo.benchmarks.base import RunMetrics
from arcmemo.core.stats import any_of_k, mean_std


class AttemptGrade(BaseModel):
    """One attempt's parsed answer and whether it matches the reference."""

    model_config = ConfigDict(frozen=True)

    answer: int | None = Field(description="The parsed integer answer; None when none was found.")
    correct: bool = Field(description="True when the answer equals the reference answer.")


def grade_answer(extracted: ExtractedAnswer, reference: int) -> AttemptGrade:
    """Grade one attempt by exact integer match; no answer is never correct."""
    return AttemptGrade(
        answer=extracted.value, correct=extracted.value is not None and extracted.value == reference
    )


def majority_answer(answers: Sequence[int | None]) -> int | None:
    """The most frequent non-None answer; ties go to the one that appeared first."""
    counts = Counter(answer for answer in answers if answer is not None)
    if not counts:
        return None
    # Counter keeps first-insertion order and max() returns the first maximal item.
    return max(counts, key=lambda answer: counts[answer])


def problem_metrics(reference: int, answers: Sequence[int | None], n: int) -> dict[str, float]:
    """One problem's ``pass@k`` (k = 1..n) and ``maj@n`` from its answers, the samples
    beyond ``len(answers)`` counted as giving no answer.

    ``pass@k`` is the unbiased estimator of Chen et al. (2021), ``1 - C(n-c, k) / C(n, k)``
    with ``c`` of the ``n`` samples right (``pass@1`` = c / n); ``maj@n`` is 1 when the
    majority answer of the samples (ties to the first seen) is right.
    """
    right = sum(answer is not None and answer == reference for answer in answers)
    values = {f"pass@{k}": any_of_k(n, right, k) for k in range(1, n + 1)}
    majority = majority_answer(answers)
    values[f"maj@{n}"] = float(majority is not None and majority == reference)
    return values


class MetricCell(BaseModel):
    """One metric's mean over problems and its sample std (None for fewer than two)."""

    mean: float
    std: float | None


class AimeMetrics(RunMetrics):
    """The AIME part of ``summary.json`` (:func:`aime_metrics`); the flat ``pass@k`` and
    ``maj@n`` means are kept as extra keys."""

    n_tasks: int | None = Field(default=None, description="Problems with answers.")
    n_samples: int | None = None
    n_solved: int | None = Field(default=None, description="Problems with a right sample.")
    no_answer_rate: float | None = None
    by_metric: dict[str, MetricCell] | None = None


def aime_metrics(
    per_task_answers: Sequence[tuple[int, Sequence[int | None]]],
) -> dict[str, Any]:
    """Score an AIME run from ``(reference answer, sample answers in order)`` per problem.

    Keys (rates are fractions 0..1; problems weigh equally; ``n`` is the largest number of
    samples of any problem, and a problem with fewer counts the missing ones as no answer):

    - ``n_tasks``: number of problems; ``n_samples``: n.
    - ``pass@1``: the fraction of samples that are right, averaged over problems (the mean
      accuracy of one sample; what some papers call avg@n).
    - ``pass@k`` for every k = 2..n: the chance that some of k samples is right, estimated
      without bias from all n (Chen et al. 2021), averaged over problems.
    - ``maj@n`` (e.g. ``maj@4``): fraction of problems whose majority answer over the n
      samples (among samples that gave one; ties to the first seen) is right.
    - ``score``: the headline number, equal to ``pass@1``.
    - ``n_solved``: problems with at least one right sample.
    - ``no_answer_rate``: fraction of all samples without an integer answer, so that
      extraction failures can be told apart from wrong answers.
    - ``by_metric``: ``{"pass@1": {"mean", "std"}, ..., "maj@n": {...}}``, the std being the
      sample std of the per-problem values over problems (None for fewer than two).
    """
    n = max((len(answers) for _, answers in per_task_answers), default=0)
    per_problem = [problem_metrics(ref, answers, n) for ref, answers in per_task_answers]
    by_metric: dict[str, dict[str, float | None]] = {}
    if n:
        for name in per_problem[0]:
            mean, std = mean_std([values[name] for values in per_problem])
            by_metric[name] = {"mean": mean, "std": std}
    n_missing = sum(
        n - len(answers) + sum(a is None for a in answers) for _, answers in per_task_answers
    )
    return {
        "n_tasks": len(per_task_answers),
        "n_samples": n,
        **{name: cell["mean"] for name, cell in by_metric.items()},
        "score": by_metric["pass@1"]["mean"] if n else 0.0,
        "n_solved": sum(
            any(a is not None and a == ref for a in answers) for ref, answers in per_task_answers
        ),
        "no_answer_rate": n_missing / (n * len(per_task_answers)) if n else 0.0,
        "by_metric": by_metric,
    }
