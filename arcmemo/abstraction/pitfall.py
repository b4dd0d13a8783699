"""Pitfalls: lessons from failed attempts (ReasoningBank-style), an opt-in memory write.

With the memory-format option ``pitfalls`` (``--memory-format-arg pitfalls=true``, ``ps`` and
``oe``), a task that ends with no confirmed solution but with train feedback (an attempt
whose final step was checked on the visible examples and failed) is shown to the aux model
with that feedback (``prompts/abstraction/pitfall.j2``); what it answers is stored as
lessons of kind ``pitfall``, apart from the concepts, and rendered with a ``Pitfall:`` mark.
A task without train feedback (AIME answers, a model-call error) writes nothing.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from arcmemo.abstraction.lessons import parse_lessons
from arcmemo.abstraction.outcome import AbstractionOutcome, ask
from arcmemo.core.records import Step, TaskResult
from arcmemo.memory.schema import Lesson, Memory
from arcmemo.models.client import ModelClient

_ERROR_CHARS = 300


class FailedItem(BaseModel):
    """A failed attempt with its train feedback, ready for a pitfall write."""

    task_id: str
    domain: str
    problem: str = Field(description="The problem as text (never hidden labels).")
    attempt: str = Field(description="The failed program or answer.")
    feedback: str = Field(description="What checking it on the visible examples showed.")


def feedback_text(step: Step) -> str:
    """One line per visible example the step was checked on (and its parse error)."""
    lines = [f"no program could be extracted: {step.parse_error}"] if step.parse_error else []
    for check in step.checks:
        if check.correct:
            lines.append(f"example {check.index + 1}: correct")
        elif check.error:
            kind = f" ({check.error_kind})" if check.error_kind else ""
            lines.append(f"example {check.index + 1}: error{kind}: {check.error[:_ERROR_CHARS]}")
        else:
            lines.append(f"example {check.index + 1}: wrong output")
    return "\n".join(lines)


def failed_step(result: TaskResult) -> Step | None:
    """The last failed final step with train feedback (None when no attempt has one)."""
    finals = [a.steps[-1] for a in result.attempts if a.steps]
    failed = [s for s in finals if s.verified is False and s.answered]
    return failed[-1] if failed else None


def failed_item(result: TaskResult, *, domain: str, problem: str) -> FailedItem | None:
    """What a pitfall write reads from ``result``; None without train feedback."""
    step = failed_step(result)
    if step is None:
        return None
    return FailedItem(
        task_id=result.task_id,
        domain=domain,
        problem=problem,
        attempt=step.candidate or step.completion,
        feedback=feedback_text(step),
    )


async def write_pitfalls(
    memory: Memory, item: FailedItem, model: ModelClient, *, fmt: str, actor: str
) -> AbstractionOutcome:
    """Ask for the pitfalls of ``item`` and add them to ``memory`` as ``pitfall`` lessons."""
    outcome = AbstractionOutcome(task_id=item.task_id, format=fmt)
    answer = await ask(
        model,
        "abstraction/pitfall",
        parse_lessons,
        task_id=item.task_id,
        domain=item.domain,
        problem=item.problem,
        attempt=item.attempt,
        feedback=item.feedback,
    )
    if not outcome.account(answer, "pitfall"):
        return outcome
    for lesson in answer.value:
        pitfall = Lesson(situation=lesson.situation, suggestion=lesson.suggestion, kind="pitfall")
        if memory.add_lesson(pitfall, task_id=item.task_id, actor=actor):
            outcome.written.append(f"pitfall lesson {len(memory.lessons)}")
    return outcome
