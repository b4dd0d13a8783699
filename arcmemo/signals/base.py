"""Write signals: what confirms a task's solution before it is written to memory.

Registered in :data:`WRITE_SIGNALS` (``--write-signal NAME``): ``train`` (a program that
passes every visible example: ARC), ``consistency`` (an answer given by a majority of the
attempts: AIME), ``oracle`` (the hidden test labels, which leaks them: only for reproducing
published numbers, and flagged as such in ``config.json`` and ``summary.json``).
"""

from __future__ import annotations

import abc
import json
from collections import Counter
from typing import ClassVar

from arcmemo.core.records import Step, TaskResult
from arcmemo.core.registry import NoOptions, Registry


class WriteSignal(abc.ABC):
    """Decides which step of a finished task, if any, may be written to memory."""

    name: ClassVar[str]  # set by the registry: the name it is registered under
    # True when the signal looks at hidden test labels (scores become optimistic).
    leaks_test_labels: ClassVar[bool] = False

    def __init__(self, options: NoOptions | None = None) -> None:
        self.options = options or NoOptions()

    @abc.abstractmethod
    def confirmed_step(self, result: TaskResult) -> Step | None:
        """The step whose solution the signal confirms, or None."""

    def split(self, result: TaskResult) -> tuple[list[Step], list[Step]]:
        """The final steps this signal counts as passing and as failing (contrastive
        abstraction reads them); a signal that cannot tell them apart splits none."""
        return [], []


WRITE_SIGNALS: Registry[WriteSignal] = Registry("write signal")


def _final_steps(result: TaskResult) -> list[Step]:
    return [a.steps[-1] for a in result.attempts if a.steps]


def _others(steps: list[Step], taken: list[Step]) -> list[Step]:
    # By identity: two attempts may have written equal steps.
    ids = {id(s) for s in taken}
    return [s for s in steps if id(s) not in ids]


@WRITE_SIGNALS.register("train")
class TrainSignal(WriteSignal):
    """A program that passes every visible example (train pairs)."""

    def confirmed_step(self, result: TaskResult) -> Step | None:
        return next((s for s in _final_steps(result) if s.verified), None)

    def split(self, result: TaskResult) -> tuple[list[Step], list[Step]]:
        finals = _final_steps(result)
        failing = [s for s in finals if s.verified is False and s.answered]
        return [s for s in finals if s.verified], failing


@WRITE_SIGNALS.register("consistency")
class ConsistencySignal(WriteSignal):
    """An answer given by a strict majority of the attempts."""

    def confirmed_step(self, result: TaskResult) -> Step | None:
        finals = _final_steps(result)
        answers = [s.prediction for s in finals if s.prediction is not None]
        if not answers:
            return None
        counts = Counter(json.dumps(a, sort_keys=True) for a in answers)
        top, votes = counts.most_common(1)[0]
        if votes * 2 <= len(result.attempts):
            return None
        return next(s for s in finals if json.dumps(s.prediction, sort_keys=True) == top)

    def split(self, result: TaskResult) -> tuple[list[Step], list[Step]]:
        """The majority answer's samples against the samples of any other answer."""
        confirmed = self.confirmed_step(result)
        if confirmed is None:
            return [], []
        top = json.dumps(confirmed.prediction, sort_keys=True)
        answered = [s for s in _final_steps(result) if s.prediction is not None]
        passing = [s for s in answered if json.dumps(s.prediction, sort_keys=True) == top]
        return passing, _others(answered, passing)


@WRITE_SIGNALS.register("oracle")
class OracleSignal(WriteSignal):
    """The hidden test labels: leaks them (reproduction of published numbers only)."""

    leaks_test_labels = True

    def confirmed_step(self, result: TaskResult) -> Step | None:
        return next((s for s in _final_steps(result) if s.correct and all(s.correct)), None)

    def split(self, result: TaskResult) -> tuple[list[Step], list[Step]]:
        graded = [s for s in _final_steps(result) if s.correct and s.answered]
        passing = [s for s in graded if all(s.correct or [])]
        return passing, _others(graded, passing)
