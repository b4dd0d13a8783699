"""The main run against other runs: per-task wins and losses on the tasks they share."""

from __future__ import annotations

from dataclasses import dataclass

from arcmemo.analysis.report.load import RunData
from arcmemo.analysis.report.tasks import TaskView


@dataclass
class Comparison:
    """The main run against one other run."""

    label: str
    wins: list[str]
    losses: list[str]
    both: list[str]
    neither: list[str]
    only_here: list[str]
    only_there: list[str]


def compare(main: RunData, other: RunData) -> Comparison:
    """Per-task wins (better score here) and losses (better there) on the shared tasks."""
    here, there = main.result_by_id, other.result_by_id
    shared = [tid for tid in here if tid in there]
    # Tasks without labels (inference mode) have no score to compare.
    scores = {
        t: (a, b)
        for t in shared
        if (a := here[t].score) is not None and (b := there[t].score) is not None
    }
    return Comparison(
        label=other.label,
        wins=[t for t, (a, b) in scores.items() if a > b],
        losses=[t for t, (a, b) in scores.items() if a < b],
        both=[t for t in shared if here[t].solved and there[t].solved],
        neither=[t for t in shared if here[t].score == there[t].score == 0],
        only_here=[t for t in here if t not in there],
        only_there=[t for t in there if t not in here],
    )


def add_compare_scores(tasks: list[TaskView], others: list[RunData]) -> None:
    """Give each task row the other runs' scores of the same task (None where absent)."""
    for task in tasks:
        task.compare_scores = [
            other.result_by_id[task.id].score if task.id in other.result_by_id else None
            for other in others
        ]
