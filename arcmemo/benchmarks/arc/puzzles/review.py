"""The aux-model review of a concept routine that has no property test.

When :mod:`arcmemo.benchmarks.arc.puzzles.properties` has no test for a concept, the
``implements_concept`` check is skipped in the sandbox; with an aux model,
:func:`review_routine` asks it whether ``concept_routine`` implements the concept's
definition (``prompts/puzzles/review.j2``) and :func:`apply_review` turns the verdict into
the check's status. The review is stored with the puzzle (``PuzzleMeta.review``) and reused
when the puzzle is re-checked.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from arcmemo.benchmarks.arc.puzzles.verify import UNTESTED, CheckResult, VerificationReport
from arcmemo.core import prompting
from arcmemo.memory.schema import Concept
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.retry import ModelCallError
from arcmemo.models.structured import OutputError, generate_structured, tagged

STAGE = "puzzles-review"


class RoutineReview(BaseModel):
    """An aux model's verdict on whether ``concept_routine`` implements its concept."""

    model: str = Field(description="provider:model of the reviewer.")
    verdict: Literal["yes", "no"] | None = Field(
        description="None when the review failed (no usable answer)."
    )
    reason: str = Field(description="The reviewer's reason, or why the review failed.")


def _parse(text: str) -> tuple[Literal["yes", "no"], str]:
    verdict = (tagged(text, "verdict") or "").strip().lower()
    if verdict not in ("yes", "no"):
        raise OutputError("end with <verdict>yes</verdict> or <verdict>no</verdict>")
    reason = tagged(text, "reason") or ""
    return ("yes" if verdict == "yes" else "no"), reason


async def review_routine(model: ModelClient, concept: Concept, source: str) -> RoutineReview:
    """Ask ``model`` whether the module's ``concept_routine`` implements ``concept``."""
    content = prompting.render(
        "puzzles/review",
        concept=concept.model_dump(mode="json"),
        source=source.rstrip(),
    )
    try:
        answer = await generate_structured(
            model, [Message(role="user", content=content)], _parse, stage=STAGE, task_id=concept.id
        )
    except ModelCallError as error:
        return RoutineReview(model=model.spec, verdict=None, reason=f"review call failed: {error}")
    if answer.value is None:
        return RoutineReview(model=model.spec, verdict=None, reason=answer.error or "no answer")
    verdict, reason = answer.value
    return RoutineReview(model=model.spec, verdict=verdict, reason=reason)


def needs_review(report: VerificationReport) -> bool:
    """The report passed every other check and ``implements_concept`` had no property test."""
    check = report.check("implements_concept")
    return (
        check is not None
        and check.status == "skipped"
        and check.note.startswith(UNTESTED)
        and all(c.status == "passed" for c in report.checks if c is not check)
    )


def apply_review(report: VerificationReport, review: RoutineReview) -> None:
    """Set ``implements_concept`` from ``review`` (a failed review fails the check)."""
    for index, check in enumerate(report.checks):
        if check.name != "implements_concept":
            continue
        note = f"{check.note}; reviewed by {review.model}"
        if review.verdict == "yes":
            report.checks[index] = CheckResult(
                name=check.name, status="passed", note=f"{note}: {review.reason}"
            )
        else:
            why = "does not implement the concept" if review.verdict == "no" else "review failed"
            report.checks[index] = CheckResult(
                name=check.name,
                status="failed",
                details=[f"the reviewer says concept_routine {why}: {review.reason}"],
                note=note,
            )
