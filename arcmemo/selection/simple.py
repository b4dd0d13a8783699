"""Selectors that need no model: the whole memory (``all``) or nothing (``none``)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ConfigDict

from arcmemo.core.records import Selection
from arcmemo.core.registry import NoOptions
from arcmemo.memory.schema import Memory
from arcmemo.models.client import ModelClient
from arcmemo.selection.base import (
    SELECTORS,
    MemoryViewOptions,
    Selector,
    every_name,
    render_hint,
    render_paper_hint,
)


class AllSelectorOptions(MemoryViewOptions):
    """Options of the ``all`` selector."""

    model_config = ConfigDict(extra="forbid")


@SELECTORS.register("all", options=AllSelectorOptions)
class AllSelector(Selector):
    """Every entry in full: the paper's "no selection" ablation."""

    def __init__(self, options: AllSelectorOptions | None = None) -> None:
        self.options = options or AllSelectorOptions()
        self.view = self.options.view

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        clients: Mapping[str, ModelClient],
        previous_attempt: str | None = None,
    ) -> Selection:
        return Selection(selector=self.name, selected=every_name(memory))

    def render(self, memory: Memory, selection: Selection) -> str:
        # Every entry of the memory shown, whatever a selection made earlier recorded.
        if self.shows_paper_view(memory):
            return render_paper_hint(memory, every_name(memory), everything=True)
        return render_hint(memory, memory.render("full"), everything=True)


@SELECTORS.register("none")
class NoSelector(Selector):
    """No memory in the prompt (the baseline)."""

    def __init__(self, options: NoOptions | None = None) -> None:
        self.options = options or NoOptions()

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        clients: Mapping[str, ModelClient],
        previous_attempt: str | None = None,
    ) -> Selection:
        return Selection(selector=self.name)

    def render(self, memory: Memory, selection: Selection) -> str:
        return ""
