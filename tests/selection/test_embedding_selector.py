"""Embedding selection: TF-IDF offline top-k, and the OpenAI embedder's credential check."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from arcmemo.core.registry import ComponentSpec, RegistryError
from arcmemo.memory.schema import Memory
from arcmemo.models.base import MissingCredentialError
from arcmemo.models.embedding import OpenAIEmbedder, TfidfEmbedder, create_embedder
from arcmemo.selection import SELECTORS
from arcmemo.selection.embedding import EmbeddingSelector, EmbeddingSelectorOptions, entry_texts
from tests.support.selection import selection_memory

PROBLEM = "Each region on the right changes color: the right region is filled."


def select(selector: EmbeddingSelector, memory: Memory, problem: str = PROBLEM):
    return asyncio.run(selector.select(memory, problem, task_id="t1", clients={}))


def test_entry_texts_cover_concepts_and_lessons() -> None:
    texts = entry_texts(selection_memory())
    assert "the output is the input turned on its side" in texts["rotate grid"]
    assert texts["lesson 1"] == "the grid is mostly empty look at the few colored cells"


def test_tfidf_vectors_are_unit_length_and_zero_for_unknown_words() -> None:
    corpus = ["rotate the grid", "fill the region"]
    vectors = asyncio.run(TfidfEmbedder().embed(["rotate grid", "zebra"], corpus=corpus))
    assert np.isclose(np.linalg.norm(vectors[0]), 1.0)
    assert not vectors[1].any()


def test_top_k_by_similarity() -> None:
    selection = select(EmbeddingSelector(EmbeddingSelectorOptions(top_k=2)), selection_memory())
    assert selection.selector == "embedding"
    assert selection.selected == ["fill region right", "fill region left"]
    lines = (selection.trace or "").splitlines()
    assert [line.split(":")[0] for line in lines] == selection.selected
    scores = [float(line.split(": ")[1]) for line in lines]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[1]


def test_selection_is_deterministic_and_ties_break_by_name() -> None:
    memory = selection_memory()
    selector = EmbeddingSelector(EmbeddingSelectorOptions(top_k=8))
    first = select(selector, memory, "nothing in common")
    again = select(selector, memory, "nothing in common")
    assert first == again
    # every score is zero: the order is alphabetical
    assert first.selected == sorted(first.selected)
    assert len(first.selected) == 7  # six concepts and one lesson


def test_selector_options_come_through_the_registry() -> None:
    selector = SELECTORS.create(ComponentSpec(name="embedding", options={"top_k": 1}))
    assert isinstance(selector, EmbeddingSelector)
    selection = select(selector, selection_memory(), "turn the grid by ninety degrees: rotate")
    assert selection.selected == ["rotate grid"]


def test_an_empty_memory_selects_nothing() -> None:
    selection = select(EmbeddingSelector(), Memory(domain="arc"))
    assert selection.selected == [] and selection.trace == "memory is empty"


def test_openai_embedder_without_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    selector = EmbeddingSelector(EmbeddingSelectorOptions(embedder="openai:text-embedding-3-small"))
    assert isinstance(selector.embedder, OpenAIEmbedder)
    with pytest.raises(MissingCredentialError, match="OPENAI_API_KEY") as caught:
        select(selector, selection_memory())
    assert caught.value.variable == "OPENAI_API_KEY"


def test_unknown_embedder_is_a_clear_error() -> None:
    with pytest.raises(RegistryError, match="unknown embedder 'word2vec'"):
        create_embedder("word2vec")
    with pytest.raises(RegistryError, match="use 'tfidf' or 'openai:MODEL'"):
        create_embedder("openai:")
