"""The selector interface: which memory entries a task's solve prompt shows in full.

Selectors are registered in :data:`SELECTORS` (``--select NAME``, ``--select-arg k=v``);
each declares its options model.
"""

from __future__ import annotations

import abc
from typing import ClassVar

from arcmemo.memory.ontology import Memory
from arcmemo.models.client import ModelClient
from arcmemo.records import Selection
from arcmemo.registry import Registry


class Selector(abc.ABC):
    """Picks memory entries for one task."""

    name: ClassVar[str]
    # True when select() calls a model (the run then needs the selector's model).
    uses_model: ClassVar[bool] = False

    @abc.abstractmethod
    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        model: ModelClient | None,
        previous_attempt: str | None = None,
    ) -> Selection:
        """Choose entries of ``memory`` for ``problem`` (``previous_attempt`` on retries)."""

    def preview(self, memory: Memory, problem: str) -> str | None:
        """The prompt a model-based selector would send (dry runs); None for the others."""
        return None

    def render(self, memory: Memory, selection: Selection) -> str:
        """The concepts section of the solve prompt for ``selection``."""
        return memory.render("solve", selected=selection.selected)


SELECTORS: Registry[Selector] = Registry(
    "selector",
    modules={
        "llm": "arcmemo.selection.llm",
        "embedding": "arcmemo.selection.embedding",
        "all": "arcmemo.selection.simple",
        "none": "arcmemo.selection.simple",
    },
)
