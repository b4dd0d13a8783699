"""The memory-write interface: turn a verified solution into memory entries."""

from __future__ import annotations

import abc
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, Field

from arcmemo import prompting
from arcmemo.files import append_lines
from arcmemo.memory.ontology import Memory
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.records import SolvedItem
from arcmemo.registry import Registry
from arcmemo.structured import Structured, generate_structured
from arcmemo.tokens import Usage

if TYPE_CHECKING:
    from arcmemo.abstraction.pitfall import FailedItem

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


class PitfallOptions(BaseModel):
    """The pitfall option of a memory format (mixed into its options model)."""

    pitfalls: bool = Field(
        default=False,
        description="Also write a pitfall lesson from each task that ends with no confirmed "
        "solution but with train feedback (one aux-model call per such task).",
    )


class Abstractor(abc.ABC):
    """Writes into a memory from one verified solution."""

    name: ClassVar[str]  # set by the registry: the name it is registered under
    # Aux-model calls per verified solution (the dry-run estimate of a run's cost).
    model_calls: ClassVar[int] = 1

    def __init__(self, options: BaseModel | None = None, *, actor: str = "human") -> None:
        self.options = options
        self.actor = actor

    @abc.abstractmethod
    async def abstract(
        self, memory: Memory, item: SolvedItem, model: ModelClient
    ) -> AbstractionOutcome:
        """Update ``memory`` in place from ``item``; never raises on bad model output."""

    @property
    def writes_pitfalls(self) -> bool:
        """Whether failed attempts with train feedback write pitfalls (an option)."""
        return bool(getattr(self.options, "pitfalls", False))

    async def learn_from_failure(
        self, memory: Memory, item: FailedItem, model: ModelClient
    ) -> AbstractionOutcome:
        """Write the pitfall lessons of a failed attempt (:mod:`arcmemo.abstraction.pitfall`)."""
        from arcmemo.abstraction.pitfall import write_pitfalls

        return await write_pitfalls(memory, item, model, fmt=self.name, actor=self.actor)


ABSTRACTORS: Registry[Abstractor] = Registry(
    "memory format",
    modules={
        "ps": "arcmemo.abstraction.ps",
        "oe": "arcmemo.abstraction.oe",
        "cheatsheet": "arcmemo.abstraction.cheatsheet",
    },
)
