"""Task results built by hand, for the tests of what is computed from results."""

from __future__ import annotations

from arcmemo.core.records import TaskResult


def aime_result(task_id: str, answer: int, answers: list[int | None]) -> TaskResult:
    return TaskResult(task_id=task_id, metrics={"answer": answer, "answers": answers})
