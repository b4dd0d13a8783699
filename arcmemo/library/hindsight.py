"""Hindsight programs: a failed ARC program that runs is right for the task it defines.

A program that failed its task's train pairs, yet ran on every train and test input and
returned a valid grid for each, solves the *hindsight task* whose outputs are its own
outputs. Its helpers may then enter the executable library like those of a verified
program (``arcmemo library build --from RUN --hindsight``): traced and tested on the
hindsight task's pairs. They never claim the original task: the hindsight task has its own
id, :func:`hindsight_id` (``hindsight:<task id>``), which is what the function's
``sources`` and a concept proposed for it record, and :attr:`LibraryFunction.hindsight`
names the original task (the provenance); the run's results are not touched, so the task's
solved count stays as the run scored it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arcmemo.core.records import Step
from arcmemo.library.modules import memory_functions
from arcmemo.library.trace import Pair
from arcmemo.memory.schema import Memory

PREFIX = "hindsight:"
MAX_SIDE = 30


def hindsight_id(task_id: str) -> str:
    """The id of the hindsight task a failed program of ``task_id`` defines."""
    return PREFIX + task_id


def original_task(source: str) -> str | None:
    """The task a hindsight id was made from (None for an ordinary task id)."""
    return source[len(PREFIX) :] if source.startswith(PREFIX) else None


def valid_grid(value: Any) -> bool:
    """A rectangular list of 1-30 rows of 1-30 integers 0-9."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_SIDE:
        return False
    width = len(value[0]) if isinstance(value[0], list) else 0
    return 1 <= width <= MAX_SIDE and all(
        isinstance(row, list)
        and len(row) == width
        and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 9 for c in row)
        for row in value
    )


def hindsight_pairs(
    step: Step, train_inputs: Sequence[Any], test_inputs: Sequence[Any]
) -> list[Pair] | None:
    """The hindsight task of a failed step: every train and test input with what the
    step's program returned for it; None unless the step failed its train pairs and its
    program returned a valid grid for every input."""
    if step.verified is not False or not step.candidate or step.parse_error:
        return None
    outputs = [check.output for check in step.checks if check.error is None]
    if len(step.checks) != len(train_inputs) or len(outputs) != len(train_inputs):
        return None
    predictions = step.prediction
    if not isinstance(predictions, list) or len(predictions) != len(test_inputs):
        return None
    outputs += predictions
    if not all(valid_grid(output) for output in outputs):
        return None
    return list(zip([*train_inputs, *test_inputs], outputs, strict=True))


def mark_hindsight(memory: Memory) -> int:
    """Record on every library function the original tasks of its hindsight sources
    (:attr:`LibraryFunction.hindsight`); returns how many functions came only from
    hindsight."""
    only = 0
    for function in memory_functions(memory).values():
        originals = [t for t in map(original_task, function.sources) if t is not None]
        if originals:
            function.hindsight = sorted(set(originals))
        only += bool(originals) and len(originals) == len(function.sources)
    return only
