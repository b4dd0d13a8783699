"""The model-free selectors (all, none) and the selector registry."""

from __future__ import annotations

import asyncio

import pytest

from arcmemo.registry import RegistryError
from arcmemo.selection import SELECTORS
from tests.selection.selection_helpers import selection_memory


def test_registry_lists_every_selector() -> None:
    assert SELECTORS.names() == ["all", "behaviour", "dcrs", "describe", "embedding", "llm", "none"]
    with pytest.raises(
        RegistryError, match=r"unknown selector .best.*; known: all, behaviour, dcrs, describe"
    ):
        SELECTORS.create("best")


def test_all_selects_every_entry_and_renders_the_full_memory() -> None:
    memory = selection_memory()
    selector = SELECTORS.create("all")
    selection = asyncio.run(selector.select(memory, "p", task_id="t", model=None))
    assert selection.selected == [c.name for c in memory.concepts] + ["lesson 1"]
    text = selector.render(memory, selection)
    assert text.endswith(memory.render("full"))
    assert text.startswith("### Concepts from previously solved puzzles\n")
    assert "Every concept of the memory is shown in full" in text
    assert "A first analysis of this puzzle picked" not in text
    assert "np.rot90(grid, k)" in text and "- other concepts:" not in text
    assert asyncio.run(selector.preview(memory, "p", task_id="t")) == []


def test_none_selects_and_renders_nothing() -> None:
    memory = selection_memory()
    selector = SELECTORS.create("none")
    selection = asyncio.run(selector.select(memory, "p", task_id="t", model=None))
    assert selection.selected == [] and selection.selector == "none"
    assert selector.render(memory, selection) == ""
