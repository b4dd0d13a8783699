"""Selectors that need no model: the whole memory (``all``) or nothing (``none``)."""

from __future__ import annotations

from arcmemo.memory.ontology import Memory
from arcmemo.memory.render import lesson_name
from arcmemo.models.client import ModelClient
from arcmemo.records import Selection
from arcmemo.registry import NoOptions
from arcmemo.selection.base import SELECTORS, Selector, render_hint


@SELECTORS.register("all")
class AllSelector(Selector):
    """Every entry in full: the paper's "no selection" ablation."""

    def __init__(self, options: NoOptions | None = None) -> None:
        self.options = options or NoOptions()

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
        model: ModelClient | None,
        previous_attempt: str | None = None,
    ) -> Selection:
        return Selection(selector=self.name)

    def render(self, memory: Memory, selection: Selection) -> str:
        return ""
