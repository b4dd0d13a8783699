"""Embedding retrieval: cosine similarity between the problem and each entry, top-k.

Embedders are pluggable (:mod:`arcmemo.models.embedding`): ``tfidf`` (offline, numpy,
fitted on the memory's own texts) or ``openai:MODEL`` (any OpenAI-compatible embeddings
endpoint, ``OPENAI_BASE_URL`` honoured).
The paper reports that embedding retrieval hurts on ARC (section 4.3); this selector exists
as that baseline.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import ConfigDict, Field

from arcmemo.core.records import Selection
from arcmemo.memory.render import lesson_name
from arcmemo.memory.schema import Memory
from arcmemo.models.client import ModelClient
from arcmemo.models.embedding import Embedder, TfidfEmbedder, create_embedder
from arcmemo.selection.base import SELECTORS, Selector, SolveViewOptions

if TYPE_CHECKING:
    from typing_extensions import Self


def entry_texts(memory: Memory) -> dict[str, str]:
    """The text each selectable entry is matched on, by its name."""
    texts = {
        c.name: " ".join([c.name, c.description, *c.cues, *(p.name for p in c.parameters)])
        for c in memory.concepts
    }
    for index, lesson in enumerate(memory.lessons):
        texts[lesson_name(index)] = f"{lesson.situation} {lesson.suggestion}"
    return texts


class RetrievingSelector(Selector):
    """A selector that ranks entries with an :class:`Embedder`."""

    embedder: Embedder

    def offline(self) -> Self:
        # A dry run calls no API: TF-IDF stands in for a remote embedder and picks as many
        # entries, so the prompts it yields are about as long.
        if isinstance(self.embedder, TfidfEmbedder):
            return self
        copied = copy.copy(self)
        copied.embedder = TfidfEmbedder()
        return copied


class EmbeddingSelectorOptions(SolveViewOptions):
    """Options of the ``embedding`` selector."""

    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=8, ge=1, description="Entries kept.")
    embedder: str = Field(default="tfidf", description="tfidf (offline) or openai:MODEL.")


@SELECTORS.register("embedding", options=EmbeddingSelectorOptions)
class EmbeddingSelector(RetrievingSelector):
    """The ``top_k`` entries most similar to the problem."""

    def __init__(self, options: EmbeddingSelectorOptions | None = None) -> None:
        options = options or EmbeddingSelectorOptions()
        self.top_k = options.top_k
        self.solve_budget_tokens = options.solve_budget_tokens
        self.view = options.view
        self.embedder = create_embedder(options.embedder)

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        clients: Mapping[str, ModelClient],
        previous_attempt: str | None = None,
    ) -> Selection:
        texts = entry_texts(memory)
        if not texts:
            return Selection(selector=self.name, trace="memory is empty")
        nearest = await self.embedder.nearest(problem, texts, self.top_k)
        trace = "\n".join(f"{name}: {score:.3f}" for name, score in nearest)
        return Selection(selector=self.name, selected=[name for name, _ in nearest], trace=trace)
