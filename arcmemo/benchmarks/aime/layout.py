"""AIME runs as a table: one row per run, columns ``pass@1 ... pass@n`` and ``maj@n``, each
with its std over problems (the summary's ``by_metric``, from
:func:`~arcmemo.benchmarks.aime.metrics.aime_metrics`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arcmemo.benchmarks.aime.metrics import problem_metrics
from arcmemo.benchmarks.outputs import Cell, Column, OrderRows, ScoredRun, Table, over_tasks
from arcmemo.core.records import TaskResult


def has_table(summary: dict[str, Any]) -> bool:
    return isinstance(summary.get("by_metric"), dict)


def table(runs: Sequence[ScoredRun]) -> Table:
    """One row per AIME run: pass@1..pass@n and maj@n, each with its std over problems."""
    names = [f"pass@{k}" for k in range(1, max(int(r.summary["n_samples"]) for r in runs) + 1)]
    names += list(dict.fromkeys(f"maj@{r.summary['n_samples']}" for r in runs))
    rows = []
    for run in runs:
        by_metric = run.summary["by_metric"]
        rows.append(
            (
                [run.label],
                [
                    Cell(by_metric[name]["mean"], by_metric[name]["std"])
                    if name in by_metric
                    else Cell(None)
                    for name in names
                ],
            )
        )
    notes = [
        f"AIME scores in percent {over_tasks(runs, 'problems')} (std over problems in "
        "brackets). pass@1: mean over samples; pass@k: unbiased estimate from all samples; "
        "maj@n: majority answer of the n samples."
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


def task_values(results: list[TaskResult]) -> dict[str, tuple[float, bool]]:
    """Per problem, its pass@1 and whether some sample is right."""
    values: dict[str, tuple[float, bool]] = {}
    for r in results:
        answers, reference = r.metrics.get("answers") or [], r.metrics.get("answer")
        if reference is None or not answers:
            values[r.task_id] = (0.0, False)
            continue
        pass_1 = problem_metrics(int(reference), answers, len(answers))["pass@1"]
        values[r.task_id] = (pass_1, pass_1 > 0)
    return values
