"""Scores of a run over the user's problems: pass@k (unbiased, every k) and maj@n, each with
its std over problems; a sample is right when the checker says so."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.benchmarks.base import RunMetrics
from arcmemo.core.stats import any_of_k, mean_std

# One sample: its answer (None: none found) and whether the checker accepted it.
Sample = tuple[str | None, bool]


def answer_key(answer: str) -> str:
    """Answers that vote together for maj@n: the same text up to spacing and case."""
    return " ".join(answer.split()).lower()


def problem_metrics(samples: Sequence[Sample], n: int) -> dict[str, float]:
    """pass@k for k = 1..n and maj@n of one problem (samples beyond ``len(samples)`` gave no
    answer). maj@n: the most frequent answer (ties to the first seen) was accepted."""
    right = sum(correct for _, correct in samples)
    values = {f"pass@{k}": any_of_k(n, right, k) for k in range(1, n + 1)}
    votes = Counter(answer_key(a) for a, _ in samples if a is not None)
    majority = max(votes, key=lambda key: votes[key]) if votes else None
    accepted = any(correct for a, correct in samples if a is not None and answer_key(a) == majority)
    values[f"maj@{n}"] = float(majority is not None and accepted)
    return values


class MetricCell(BaseModel):
    mean: float
    std: float | None


class TextMetrics(RunMetrics):
    """The part of ``summary.json`` a run over JSONL problems writes."""

    n_tasks: int | None = Field(default=None, description="Problems with a reference.")
    n_samples: int | None = None
    n_solved: int | None = Field(default=None, description="Problems with an accepted sample.")
    no_answer_rate: float | None = None
    by_metric: dict[str, MetricCell] | None = None


def text_metrics(per_task: Sequence[Sequence[Sample]]) -> dict[str, Any]:
    """A run's scores from each problem's samples in order (``score`` is pass@1)."""
    n = max((len(samples) for samples in per_task), default=0)
    per_problem = [problem_metrics(samples, n) for samples in per_task]
    by_metric: dict[str, dict[str, float | None]] = {}
    if n:
        for name in per_problem[0]:
            mean, std = mean_std([values[name] for values in per_problem])
            by_metric[name] = {"mean": mean, "std": std}
    missing = sum(n - len(s) + sum(a is None for a, _ in s) for s in per_task)
    return {
        "n_tasks": len(per_task),
        "n_samples": n,
        **{name: cell["mean"] for name, cell in by_metric.items()},
        "score": by_metric["pass@1"]["mean"] if n else 0.0,
        "n_solved": sum(any(correct for _, correct in s) for s in per_task),
        "no_answer_rate": missing / (n * len(per_task)) if n and per_task else 0.0,
        "by_metric": by_metric,
    }
