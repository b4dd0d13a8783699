"""The memory-write interface: turn a verified solution into memory entries."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import ClassVar

from pydantic import BaseModel, Field

from arcmemo.abstraction.contrast import ContrastPair, write_contrast
from arcmemo.abstraction.outcome import AbstractionOutcome
from arcmemo.abstraction.pitfall import FailedItem, write_pitfalls
from arcmemo.core.records import SolvedItem
from arcmemo.core.registry import ComponentSpec, Registry
from arcmemo.core.roles import ABSTRACT, for_role
from arcmemo.memory.schema import Memory
from arcmemo.models.client import ModelClient


class PitfallOptions(BaseModel):
    """The pitfall option of a memory format (mixed into its options model)."""

    pitfalls: bool = Field(
        default=False,
        description="Also write a pitfall lesson from each task that ends with no confirmed "
        "solution but with train feedback (one aux-model call per such task).",
    )


class Abstractor(abc.ABC):
    """Writes into a memory from one verified solution.

    Its writes are given the run's client of each model role (``clients``, by role name:
    :mod:`arcmemo.core.roles`) and call the abstract role's (:meth:`client`: a role left
    out calls its fallback's).
    """

    name: ClassVar[str]  # set by the registry: the name it is registered under
    # Aux-model calls per verified solution (the dry-run estimate of a run's cost).
    model_calls: ClassVar[int] = 1
    # What a contrastive abstraction writes besides its pitfall ("" : no contrast option).
    contrast_entries: ClassVar[str] = ""

    def __init__(self, options: BaseModel | None = None, *, actor: str = "human") -> None:
        self.options = options
        self.actor = actor

    @abc.abstractmethod
    async def abstract(
        self, memory: Memory, item: SolvedItem, clients: Mapping[str, ModelClient]
    ) -> AbstractionOutcome:
        """Update ``memory`` in place from ``item``; never raises on bad model output."""

    def client(self, clients: Mapping[str, ModelClient]) -> ModelClient:
        """The abstract role's client in ``clients`` (:func:`abstract_client`)."""
        return abstract_client(clients)

    @property
    def writes_pitfalls(self) -> bool:
        """Whether failed attempts with train feedback write pitfalls (an option)."""
        return bool(getattr(self.options, "pitfalls", False))

    async def learn_from_failure(
        self, memory: Memory, item: FailedItem, clients: Mapping[str, ModelClient]
    ) -> AbstractionOutcome:
        """Write the pitfall lessons of a failed attempt (:mod:`arcmemo.abstraction.pitfall`)."""
        return await write_pitfalls(
            memory, item, self.client(clients), fmt=self.name, actor=self.actor
        )

    @property
    def contrasts(self) -> bool:
        """Whether a passing and a failing attempt of a task are contrasted (an option)."""
        return bool(self.contrast_entries and getattr(self.options, "contrast", False))

    @property
    def calls_per_task(self) -> int:
        """Abstract-model calls a written task may cost (the dry run's count): the format's
        steps, and the contrast's one when it is on."""
        return self.model_calls + self.contrasts

    @property
    def contrast_signal(self) -> str | None:
        """The write signal the option ``contrast_signal`` names (None: the run's)."""
        return getattr(self.options, "contrast_signal", None)

    async def learn_from_contrast(
        self, memory: Memory, pair: ContrastPair, clients: Mapping[str, ModelClient]
    ) -> AbstractionOutcome:
        """Write the entries and the pitfall of a contrast (:mod:`arcmemo.abstraction.contrast`)."""
        return await write_contrast(
            memory,
            pair,
            self.client(clients),
            fmt=self.name,
            actor=self.actor,
            entries=self.contrast_entries,
        )


def abstract_client(clients: Mapping[str, ModelClient]) -> ModelClient:
    """The abstract role's client in ``clients`` (else its fallback's); a one-line error
    when none is given."""
    found = for_role(clients, ABSTRACT)
    if found is None:
        raise ValueError(f"writing a memory needs a model (the {ABSTRACT} role's)")
    return found


def create_abstractor(
    memory_format: ComponentSpec | str, clients: Mapping[str, ModelClient]
) -> Abstractor:
    """The abstractor of ``memory_format``, its writes recorded as made by the abstract
    role's model of ``clients``."""
    return ABSTRACTORS.create(memory_format, actor=abstract_client(clients).spec)


ABSTRACTORS: Registry[Abstractor] = Registry(
    "memory format",
    modules={
        "ps": "arcmemo.abstraction.ps",
        "oe": "arcmemo.abstraction.oe",
        "cheatsheet": "arcmemo.abstraction.cheatsheet",
    },
)
