"""Embedding models: texts to unit vectors, for retrieval and near-duplicate search.

``tfidf`` (offline, numpy, fitted on the corpus being searched) or ``openai:MODEL`` (any
OpenAI-compatible embeddings endpoint, ``OPENAI_BASE_URL`` honoured); see
:func:`create_embedder`.
"""

from __future__ import annotations

import abc
import math
import os
import re
from collections import Counter

import numpy as np

from arcmemo.core.registry import RegistryError
from arcmemo.models.base import MissingCredentialError

_TOKEN = re.compile(r"[a-z]+|\d+")


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
