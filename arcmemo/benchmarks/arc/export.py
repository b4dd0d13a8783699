"""A finished ARC run as an ARC Prize / Kaggle ``submission.json``.

The format: ``{task_id: [{"attempt_1": grid, "attempt_2": grid}, ...]}``, one entry per test
input in order. A run may hold more than two attempts per task: the two submitted are chosen
without looking at any label: attempts whose program passed every train pair first, then
the others, each in attempt order, identical grids counted once. A test input with fewer
than two distinct predictions is padded with ``[[0]]`` (the format requires both keys).
"""

from __future__ import annotations

import json
from typing import Any

from arcmemo.benchmarks.arc.data import as_grid_or_none
from arcmemo.benchmarks.outputs import Exporter
from arcmemo.core.records import Attempt, TaskResult

PLACEHOLDER: list[list[int]] = [[0]]


def ranked_candidates(result: TaskResult, test_index: int) -> list[tuple[list[list[int]], Attempt]]:
    """The distinct grids predicted for test input ``test_index`` with the attempt that
    predicted each: train-verified final programs first, then the others, in attempt order."""
    finals = [a for a in result.attempts if a.steps]
    ranked = [a for a in finals if a.steps[-1].verified] + [
        a for a in finals if not a.steps[-1].verified
    ]
    found: list[tuple[list[list[int]], Attempt]] = []
    for attempt in ranked:
        prediction = attempt.steps[-1].prediction
        predictions = prediction if isinstance(prediction, list) else []
        grid = as_grid_or_none(predictions[test_index]) if test_index < len(predictions) else None
        if grid is not None and all(grid != g for g, _ in found):
            found.append((grid, attempt))
    return found


def _candidates(result: TaskResult, test_index: int) -> list[list[list[int]]]:
    return [grid for grid, _ in ranked_candidates(result, test_index)]


def n_test_inputs(result: TaskResult) -> int:
    """How many test inputs the task has, from what its attempts predicted or were judged."""
    counts = [len(a.correct) for a in result.attempts if a.correct]
    counts += [
        len(a.steps[-1].prediction)
        for a in result.attempts
        if a.steps and isinstance(a.steps[-1].prediction, list)
    ]
    return max(counts, default=1)


def submission(results: list[TaskResult]) -> dict[str, list[dict[str, Any]]]:
    """The submission object for ``results`` (every task, even ones that produced nothing)."""
    entries: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        tests = []
        for index in range(n_test_inputs(result)):
            chosen = [*_candidates(result, index), PLACEHOLDER, PLACEHOLDER][:2]
            tests.append({"attempt_1": chosen[0], "attempt_2": chosen[1]})
        entries[result.task_id] = tests
    return entries


def submission_text(results: list[TaskResult]) -> str:
    return json.dumps(submission(results)) + "\n"


SUBMISSION = Exporter(
    name="submission",
    help="RUN's predictions as an ARC Prize / Kaggle submission.json (attempt_1, attempt_2 per "
    "test input; train-verified attempts first when a task has more than two).",
    default_file="submission.json",
    label="ARC Prize submissions",
    runs="arc-agi",
    write=submission_text,
)
