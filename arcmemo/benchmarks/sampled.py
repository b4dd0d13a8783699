"""Runs scored by sampled answers (AIME, your own problems, Game of 24): each problem's
samples as ``(vote key, right)`` pairs, the run's pass@k and maj@n with their std over
problems, and the ``arcmemo table`` layout of such runs. A problem's samples are its
attempts' answers, under the word the definitions below use (``n_samples``: attempts per
problem).

``pass@k`` is the unbiased estimator of Chen et al. (2021), ``1 - C(n-c, k) / C(n, k)`` with
``c`` of the ``n`` samples right (``pass@1`` = c / n, the mean accuracy of one sample, what
some papers call avg@n); ``maj@n`` is 1 when the most frequent answer among the samples that
gave one (ties to the first seen) is right.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.benchmarks.base import RunMetrics
from arcmemo.benchmarks.outputs import Cell, Column, OrderRows, ScoredRun, Table, over_tasks
from arcmemo.core.stats import any_of_k, mean_std

# One sample: the key its answer votes under for maj@n (None: no answer) and whether it is
# right.
Sample = tuple[Hashable | None, bool]


def majority(keys: Sequence[Hashable | None]) -> Hashable | None:
    """The most frequent key that is not None; ties go to the one seen first."""
    counts = Counter(key for key in keys if key is not None)
    # Counter keeps first-insertion order and max() returns the first maximal item.
    return max(counts, key=lambda key: counts[key]) if counts else None


def problem_metrics(samples: Sequence[Sample], n: int) -> dict[str, float]:
    """One problem's ``pass@k`` (k = 1..n) and ``maj@n``, the samples beyond
    ``len(samples)`` counted as giving no answer."""
    right = sum(correct for _, correct in samples)
    values = {f"pass@{k}": any_of_k(n, right, k) for k in range(1, n + 1)}
    top = majority([key for key, _ in samples])
    values[f"maj@{n}"] = float(
        top is not None and any(correct for key, correct in samples if key == top)
    )
    return values


class MetricCell(BaseModel):
    """One metric's mean over problems and its sample std (None for fewer than two)."""

    mean: float
    std: float | None


class SampledMetrics(RunMetrics):
    """The part of ``summary.json`` a run scored by sampled answers writes; the flat
    ``pass@k`` and ``maj@n`` means are kept as extra keys."""

    n_tasks: int | None = Field(default=None, description="Problems scored.")
    n_samples: int | None = None
    n_solved: int | None = Field(default=None, description="Problems with a right sample.")
    no_answer_rate: float | None = None
    by_metric: dict[str, MetricCell] | None = None


def sampled_metrics(per_task: Sequence[Sequence[Sample]]) -> dict[str, Any]:
    """A run's scores from each problem's samples in order.

    Keys (rates are fractions 0..1; problems weigh equally; ``n`` is the largest number of
    samples of any problem, and a problem with fewer counts the missing ones as no answer):
    ``n_tasks``; ``n_samples`` (n); ``pass@1`` .. ``pass@n`` and ``maj@n`` (means over
    problems); ``score`` (= ``pass@1``); ``n_solved`` (problems with a right sample);
    ``no_answer_rate`` (samples without an answer, so that extraction failures can be told
    apart from wrong answers); ``by_metric`` (``{"pass@1": {"mean", "std"}, ...}``, the std
    being the sample std of the per-problem values).
    """
    n = max((len(samples) for samples in per_task), default=0)
    per_problem = [problem_metrics(samples, n) for samples in per_task]
    by_metric: dict[str, dict[str, float | None]] = {}
    if n:
        for name in per_problem[0]:
            mean, std = mean_std([values[name] for values in per_problem])
            by_metric[name] = {"mean": mean, "std": std}
    missing = sum(n - len(s) + sum(key is None for key, _ in s) for s in per_task)
    return {
        "n_tasks": len(per_task),
        "n_samples": n,
        **{name: cell["mean"] for name, cell in by_metric.items()},
        "score": by_metric["pass@1"]["mean"] if n else 0.0,
        "n_solved": sum(any(correct for _, correct in s) for s in per_task),
        "no_answer_rate": missing / (n * len(per_task)) if n and per_task else 0.0,
        "by_metric": by_metric,
    }


# -- arcmemo table: one row per run, pass@1 .. pass@n and maj@n ------------------------------


def has_table(summary: dict[str, Any]) -> bool:
    return isinstance(summary.get("by_metric"), dict)


def table(runs: Sequence[ScoredRun], *, title: str, noun: str) -> Table:
    """One row per run: pass@1..pass@n and maj@n, each with its std over problems (the
    summary's ``by_metric``); ``title`` names the scores in the notes ("AIME scores")."""
    names = [f"pass@{k}" for k in range(1, max(int(r.summary["n_samples"]) for r in runs) + 1)]
    names += list(dict.fromkeys(f"maj@{r.summary['n_samples']}" for r in runs))
    rows = []
    for run in runs:
        by_metric = run.summary["by_metric"]
        cells = [
            Cell(by_metric[name]["mean"], by_metric[name]["std"])
            if name in by_metric
            else Cell(None)
            for name in names
        ]
        rows.append(([run.label], cells))
    notes = [
        f"{title} in percent {over_tasks(runs, noun)} (std over {noun} in brackets). pass@1: "
        "mean over samples; pass@k: unbiased estimate from all samples; maj@n: majority "
        "answer of the n samples."
    ]
    return Table(
        keys=["setting"], columns=[Column(name, True) for name in names], rows=rows, notes=notes
    )


def order_rows(runs: Sequence[ScoredRun]) -> OrderRows:
    """Per metric of the first run, each run's mean."""
    names = list(runs[0].summary["by_metric"])
    rows = []
    for name in names:
        values = [(r.summary["by_metric"].get(name) or {}).get("mean") for r in runs]
        rows.append(([name], values))
    return OrderRows(keys=["metric"], rows=rows)


def task_values(per_task: dict[str, Sequence[Sample]]) -> dict[str, tuple[float, bool]]:
    """Per problem, its pass@1 and whether some sample is right (no samples: 0, unsolved)."""
    values: dict[str, tuple[float, bool]] = {}
    for task_id, samples in per_task.items():
        pass_1 = problem_metrics(samples, len(samples))["pass@1"] if samples else 0.0
        values[task_id] = (pass_1, pass_1 > 0)
    return values
