"""One abstraction call and what it left: entries written, conflicts, failures, tokens.

Every memory format (and the pitfall write) asks the aux model through :func:`ask` and
reports an :class:`AbstractionOutcome`, one line of the run's abstraction log.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from arcmemo.core import prompting
from arcmemo.core.files import append_lines
from arcmemo.core.tokens import Usage
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.structured import Structured, generate_structured

T = TypeVar("T")


class Failure(BaseModel):
    """Model output that could not be used, kept with its raw text."""

    stage: str
    error: str
    raw: list[str] = Field(default_factory=list)


class AbstractionOutcome(BaseModel):
    """What one abstraction wrote and what failed."""

    task_id: str
    format: str
    written: list[str] = Field(default_factory=list, description="Entries added or merged.")
    conflicts: list[str] = Field(default_factory=list, description="Merge conflicts reported.")
    failures: list[Failure] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    def account(self, answer: Structured[Any], stage: str) -> bool:
        """Add a structured call's tokens; record it as a failure unless it parsed."""
        self.usage = self.usage + answer.usage
        if not answer.ok:
            self.failures.append(Failure(stage=stage, error=answer.error or "", raw=answer.raw))
        return answer.ok


def append_outcomes(path: Path, outcomes: list[AbstractionOutcome]) -> None:
    """Append outcomes to an abstraction log (JSON Lines), durably."""
    append_lines(path, [outcome.model_dump_json() + "\n" for outcome in outcomes])


async def ask(
    model: ModelClient,
    template: str,
    parse: Callable[[str], T],
    *,
    task_id: str,
    **variables: Any,
) -> Structured[T]:
    """One abstraction call: the rendered ``template`` as the user message, parsed by
    ``parse`` with the usual repair round (stage ``abstract``)."""
    content = prompting.render(template, **variables)
    return await generate_structured(
        model, [Message(role="user", content=content)], parse, stage="abstract", task_id=task_id
    )
