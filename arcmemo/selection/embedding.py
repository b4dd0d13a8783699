"""Embedding retrieval: cosine similarity between the problem and each entry, top-k.

Embedders are pluggable: ``tfidf`` (offline, numpy, fitted on the memory's own texts) or
``openai:MODEL`` (any OpenAI-compatible embeddings endpoint, ``OPENAI_BASE_URL`` honoured).
The paper reports that embedding retrieval hurts on ARC (section 4.3); this selector exists
as that baseline.
"""

from __future__ import annotations

import abc
import copy
import math
import os
import re
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
from pydantic import ConfigDict, Field

from arcmemo.memory.ontology import Memory
from arcmemo.memory.render import lesson_name
from arcmemo.models.base import MissingCredentialError
from arcmemo.models.client import ModelClient
from arcmemo.records import Selection
from arcmemo.registry import RegistryError
from arcmemo.selection.base import SELECTORS, Selector, SolveViewOptions

if TYPE_CHECKING:
    from typing_extensions import Self

_TOKEN = re.compile(r"[a-z]+|\d+")


def entry_texts(memory: Memory) -> dict[str, str]:
    """The text each selectable entry is matched on, by its name."""
    texts = {
        c.name: " ".join([c.name, c.description, *c.cues, *(p.name for p in c.parameters)])
        for c in memory.concepts
    }
    for index, lesson in enumerate(memory.lessons):
        texts[lesson_name(index)] = f"{lesson.situation} {lesson.suggestion}"
    return texts


class Embedder(abc.ABC):
    """Turns texts into unit vectors."""

    @abc.abstractmethod
    async def embed(self, texts: list[str], *, corpus: list[str]) -> np.ndarray:
        """Vectors for ``texts``; ``corpus`` is the collection being searched (for fitting)."""

    async def nearest(
        self, query: str, documents: dict[str, str], top_k: int
    ) -> list[tuple[str, float]]:
        """The ``top_k`` documents most similar to ``query`` with their cosine, most similar
        first (ties by name, so the order is deterministic)."""
        names = list(documents)
        if not names:
            return []
        corpus = [documents[n] for n in names]
        vectors = await self.embed([query, *corpus], corpus=corpus)
        scores = vectors[1:] @ vectors[0]
        order = sorted(range(len(names)), key=lambda i: (-scores[i], names[i]))[:top_k]
        return [(names[i], float(scores[i])) for i in order]


class TfidfEmbedder(Embedder):
    """Bag-of-words TF-IDF fitted on the corpus; no network, no model."""

    async def embed(self, texts: list[str], *, corpus: list[str]) -> np.ndarray:
        documents = [Counter(_TOKEN.findall(t.lower())) for t in corpus]
        vocabulary = sorted({w for d in documents for w in d})
        index = {w: i for i, w in enumerate(vocabulary)}
        df = Counter(w for d in documents for w in d)
        idf = np.array([math.log((1 + len(documents)) / (1 + df[w])) + 1 for w in vocabulary])
        vectors = np.zeros((len(texts), len(vocabulary)))
        for row, text in enumerate(texts):
            for word, count in Counter(_TOKEN.findall(text.lower())).items():
                if word in index:
                    vectors[row, index[word]] = count
        vectors *= idf
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


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


class OpenAIEmbedder(Embedder):
    """An OpenAI-compatible ``/embeddings`` endpoint."""

    def __init__(self, model: str, base_url: str | None = None) -> None:
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")

    async def embed(self, texts: list[str], *, corpus: list[str]) -> np.ndarray:
        import openai

        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            raise MissingCredentialError("OPENAI_API_KEY", "openai embeddings")
        client = openai.AsyncOpenAI(api_key=key, base_url=self.base_url)
        try:
            response = await client.embeddings.create(model=self.model, input=texts)
        finally:
            await client.close()
        vectors = np.array([item.embedding for item in response.data], dtype=float)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


def create_embedder(spec: str) -> Embedder:
    """``tfidf`` or ``openai:MODEL``."""
    if spec == "tfidf":
        return TfidfEmbedder()
    provider, _, model = spec.partition(":")
    if provider == "openai" and model:
        return OpenAIEmbedder(model)
    raise RegistryError(f"unknown embedder {spec!r}; use 'tfidf' or 'openai:MODEL'")


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
        self.embedder = create_embedder(options.embedder)

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        model: ModelClient | None,
        previous_attempt: str | None = None,
    ) -> Selection:
        texts = entry_texts(memory)
        if not texts:
            return Selection(selector=self.name, trace="memory is empty")
        nearest = await self.embedder.nearest(problem, texts, self.top_k)
        trace = "\n".join(f"{name}: {score:.3f}" for name, score in nearest)
        return Selection(selector=self.name, selected=[name for name, _ in nearest], trace=trace)
