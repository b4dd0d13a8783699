"""Dynamic Cheatsheet, retrieval-synthesis variant (DC-RS): a cheatsheet per problem.

DC-Cu (the ``cheatsheet`` memory format with any selector) shows the one global sheet.
DC-RS retrieves the ``top_k`` solved problems most similar to the current one from the
memory's stored solutions (the cheatsheet format keeps each solved problem's text with its
program) and asks the model to synthesise a cheatsheet for this problem from them and the
global sheet (``prompts/selection/dcrs.j2``). The synthesised sheet is the selection's
``trace`` and goes into the solve prompt in the cheatsheet hint block; ``selected`` lists the
retrieved task ids.

Similarity is the embedding selector's: ``tfidf`` by default, a deterministic lexical
similarity (cosine of TF-IDF vectors of the problems' words and numbers, fitted on the
stored problems; on ARC the numbers are the grid cells, so it also compares color counts
and sizes), or ``openai:MODEL``. The task's own stored solution is never retrieved
(leave-one-out). With nothing retrievable and no global sheet, no model call is made.

Differences from the published DC-RS: only solutions confirmed by the run's write signal are
retrieved (DC retrieves every past input/output pair), and the global sheet stays the one
the ``cheatsheet`` format curates after each such solution (DC carries the synthesised sheet
forward as the next query's previous sheet).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.core import prompting
from arcmemo.core.inlined_library import without_library
from arcmemo.core.records import Selection
from arcmemo.memory.schema import Memory
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.embedding import create_embedder
from arcmemo.models.structured import OutputError, generate_structured, tagged
from arcmemo.selection.base import SELECTORS, render_hint
from arcmemo.selection.embedding import RetrievingSelector

STAGE = "select"


class DcrsSelectorOptions(BaseModel):
    """Options of the ``dcrs`` selector."""

    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=3, ge=1, description="Solved problems retrieved.")
    embedder: str = Field(default="tfidf", description="tfidf (offline) or openai:MODEL.")


def _parse(text: str) -> str:
    sheet = tagged(text, "cheatsheet")
    if not sheet:
        raise OutputError("expected the cheatsheet inside <cheatsheet></cheatsheet> tags")
    return sheet


@SELECTORS.register("dcrs", options=DcrsSelectorOptions)
class DcrsSelector(RetrievingSelector):
    """Retrieve the most similar solved problems; the model writes this problem's sheet."""

    uses_model = True

    def __init__(self, options: DcrsSelectorOptions | None = None) -> None:
        options = options or DcrsSelectorOptions()
        self.top_k = options.top_k
        self.embedder = create_embedder(options.embedder)

    async def retrieve(self, memory: Memory, problem: str, *, task_id: str) -> list[str]:
        """Task ids of the ``top_k`` stored problems most similar to ``problem``."""
        problems = {
            t: s.problem
            for t, s in sorted(memory.solutions.items())
            if s.problem.strip() and t != task_id
        }
        return [t for t, _ in await self.embedder.nearest(problem, problems, self.top_k)]

    async def preview(self, memory: Memory, problem: str, *, task_id: str) -> list[str]:
        retrieved = await self.retrieve(memory, problem, task_id=task_id)
        if not retrieved and not memory.cheatsheet.strip():
            return []
        return [self._prompt(memory, problem, retrieved)]

    def _prompt(self, memory: Memory, problem: str, retrieved: list[str]) -> str:
        examples = [
            {
                "task_id": t,
                "problem": memory.solutions[t].problem.strip(),
                "solution": without_library(memory.solutions[t].program).strip(),
            }
            for t in retrieved
        ]
        return prompting.render(
            "selection/dcrs",
            problem=problem.strip(),
            cheatsheet=memory.cheatsheet.strip(),
            examples=examples,
        )

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        clients: Mapping[str, ModelClient],
        previous_attempt: str | None = None,
    ) -> Selection:
        retrieved = await self.retrieve(memory, problem, task_id=task_id)
        if not retrieved and not memory.cheatsheet.strip():
            return Selection(selector=self.name, trace=None)
        answer = await generate_structured(
            self.client(clients),
            [Message(role="user", content=self._prompt(memory, problem, retrieved))],
            _parse,
            stage=STAGE,
            task_id=task_id,
        )
        # A sheet that could not be read falls back to the global sheet (DC-Cu's view).
        sheet = answer.value if answer.value is not None else memory.cheatsheet.strip()
        return Selection(selector=self.name, selected=retrieved, trace=sheet, usage=answer.usage)

    def render(self, memory: Memory, selection: Selection) -> str:
        return render_hint(memory, selection.trace or "", fmt="cheatsheet")
