"""Selectors that need no model: the whole memory (``all``) or nothing (``none``)."""

from __future__ import annotations

from arcmemo.benchmarks.base import Selection
from arcmemo.memory.ontology import Memory
from arcmemo.memory.render import lesson_name
from arcmemo.models.client import ModelClient
from arcmemo.selection.base import Selector, register_selector


@register_selector("all")
class AllSelector(Selector):
    """Every entry in full: the paper's "no selection" ablation."""

    name = "all"

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        model: ModelClient | None,
        previous_attempt: str | None = None,
    ) -> Selection:
        names = [c.name for c in memory.concepts]
        names += [lesson_name(i) for i in range(len(memory.lessons))]
        return Selection(selector=self.name, selected=names)

    def render(self, memory: Memory, selection: Selection) -> str:
        return memory.render("full")


@register_selector("none")
class NoSelector(Selector):
    """No memory in the prompt (the baseline)."""

    name = "none"

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        model: ModelClient | None,
        previous_attempt: str | None = None,
    ) -> Selection:
        return Selection(selector=self.name)

    def render(self, memory: Memory, selection: Selection) -> str:
        return ""
