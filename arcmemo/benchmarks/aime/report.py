"""How the run report shows an AIME problem (the benchmark's report hooks).

The problem text comes from the generic view; this adds the reference answer, each
attempt's extracted answer and whether the majority vote was right. ``report.html.j2`` next
to this module draws it (it extends the report's generic page).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from arcmemo.benchmarks.aime.data import AimeProblem
from arcmemo.core.records import TaskResult


def task_view(task: AimeProblem | None, result: TaskResult) -> dict[str, Any]:
    """The reference answer (from the result's grade when the problem was not reloaded),
    the final answer of each attempt and whether the majority vote was right (or None)."""
    return {
        "answer": task.answer if task is not None else result.metrics.get("answer"),
        "answers": result.metrics.get("answers", []),
        "majority_correct": result.metrics.get("majority_correct"),
    }


def template() -> str:
    """The AIME report page (``report.html.j2`` of this package)."""
    return (
        resources.files("arcmemo.benchmarks.aime")
        .joinpath("report.html.j2")
        .read_text(encoding="utf-8")
    )
