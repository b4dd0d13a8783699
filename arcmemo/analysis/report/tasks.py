"""One view per task: its table row and its details section, attempts and steps.

What is common to every benchmark is built here (status, tokens, cost, selection, memory
writes, each step's verdict and text). What only the benchmark knows (ARC's grids, AIME's
reference answer) comes from its report hooks,
:meth:`~arcmemo.benchmarks.base.Benchmark.report_task` and
:meth:`~arcmemo.benchmarks.base.Benchmark.report_step`, as plain data under ``view`` for
the benchmark's template. A benchmark without hooks gets the generic view: the problem text,
and per step what was extracted, what was graded and whether it was right.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from arcmemo.analysis.report.links import MemoryIndex, anchor
from arcmemo.analysis.report.load import RunData
from arcmemo.benchmarks.base import Benchmark
from arcmemo.core.records import Selection, Step, TaskResult
from arcmemo.models.context import PROMPT_TOO_LONG


def task_status(result: TaskResult) -> str:
    if result.error is not None:
        return "error"
    if result.solved:
        return "solved"
    if result.score is None:
        return "unlabelled"
    return "partial" if result.score > 0 else "unsolved"


def display(value: Any, limit: int = 500) -> str:
    """A candidate or prediction as short text: strings as they are, the rest as JSON."""
    if value is None:
        return "–"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text[:limit]


@dataclass
class StepView:
    round: int
    final: bool
    step: Step
    passed: int
    concepts: list[tuple[str, str | None]]
    verdict: str
    view: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class AttemptView:
    index: int
    correct: list[bool]
    steps: list[StepView]
    variant: int = 0
    # What its prompt variant's selector chose (its first prompt's concepts).
    selection: Selection | None = None


@dataclass
class SelectionView:
    """One prompt variant's selection for a task (the only one without ``--variants``)."""

    variant: int
    selection: Selection
    selected: list[tuple[str, str | None]]


@dataclass
class TaskView:
    """One task's section and table row."""

    id: str
    anchor: str
    result: TaskResult
    status: str
    n_steps: int
    max_round: int
    tokens: int
    cost: float | None
    view: Mapping[str, Any] = field(default_factory=dict)
    attempts: list[AttemptView] = field(default_factory=list)
    # Every entry some prompt variant's selector chose, once; each variant's own choice.
    selected: list[tuple[str, str | None]] = field(default_factory=list)
    selections: list[SelectionView] = field(default_factory=list)
    variants: int = 1
    written: list[tuple[str, str | None]] = field(default_factory=list)
    abstraction_notes: list[str] = field(default_factory=list)
    compare_scores: list[float | None] = field(default_factory=list)
    # the benchmark and its task, to describe the task if the page shows it (ARC's does not)
    source: tuple[Benchmark[Any], Any] | None = field(default=None, repr=False)

    @cached_property
    def problem(self) -> str | None:
        """The task as the benchmark describes it (None: no benchmark or no task)."""
        if self.source is None or self.source[1] is None:
            return None
        benchmark, task = self.source
        return benchmark.describe(task)


def step_verdict(step: Step) -> str:
    """What came of a step, and what was cut from its prompt to fit the model's window."""
    return _outcome(step) + _fit_note(step)


def _outcome(step: Step) -> str:
    if step.error_kind == PROMPT_TOO_LONG:
        return "not sent: the prompt is too long for the model's window even with every cut"
    if step.error:
        return "model call failed"
    if step.parse_error:
        return "nothing extracted"
    if step.verified is True:
        return "passes all train pairs"
    if step.verified is False:
        return f"passes {sum(c.correct for c in step.checks)}/{len(step.checks)} train pairs"
    return "answer extracted"


def _fit_note(step: Step) -> str:
    """What was cut from the step's prompt to fit the model's window, if anything."""
    fit = step.prompt_fit
    if fit is None or not fit.cuts:
        return ""
    cuts = ", ".join(f"{cut.part} ({cut.tokens_saved:,} tokens)" for cut in fit.cuts)
    return f" · cut to fit the {fit.context_window:,}-token window: {cuts}"


def _written(run: RunData) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Per task, the memory entries abstraction wrote from it and its conflicts and failures."""
    written: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {}
    for outcome in run.abstraction:
        written.setdefault(outcome.task_id, []).extend(outcome.written)
        notes.setdefault(outcome.task_id, []).extend(
            [f"conflict: {c}" for c in outcome.conflicts]
            + [f"{f.stage} failed: {f.error}" for f in outcome.failures]
        )
    return written, notes


def task_views(run: RunData, index: MemoryIndex) -> list[TaskView]:
    """A view per result, in the run's order."""
    benchmark = run.benchmark
    written, notes = _written(run)
    views = []
    for result in run.results:
        task = run.tasks.get(result.task_id)
        steps = [s for a in result.attempts for s in a.steps]
        view = TaskView(
            id=result.task_id,
            anchor=anchor("task", result.task_id),
            result=result,
            status=task_status(result),
            n_steps=len(steps),
            max_round=max((s.round for s in steps), default=0),
            tokens=result.tokens.prompt_tokens + result.tokens.completion_tokens,
            cost=run.cost_by_task.get(result.task_id),
            selected=index.links(
                list(dict.fromkeys(n for s in result.selections for n in s.selected))
            ),
            selections=[
                SelectionView(variant, selection, index.links(selection.selected))
                for variant, selection in result.variant_selection_pairs
            ],
            variants=1 + len(result.variant_selections),
            written=index.titled_links(written.get(result.task_id, [])),
            abstraction_notes=notes.get(result.task_id, []),
        )
        if benchmark is not None:
            view.source = (benchmark, task)
            view.view = benchmark.report_task(task, result)
        for attempt in result.attempts:
            last = len(attempt.steps) - 1
            view.attempts.append(
                AttemptView(
                    index=attempt.index,
                    correct=attempt.correct,
                    variant=attempt.variant,
                    selection=result.selection_of(attempt.variant),
                    steps=[
                        StepView(
                            round=step.round,
                            final=number == last,
                            step=step,
                            passed=sum(c.correct for c in step.checks),
                            concepts=index.links(step.concepts),
                            verdict=step_verdict(step),
                            view=benchmark.report_step(task, step) if benchmark else {},
                        )
                        for number, step in enumerate(attempt.steps)
                    ],
                )
            )
        views.append(view)
    return views
