"""The model-free selectors (all, none) and the selector registry."""

from __future__ import annotations

import asyncio

import pytest

from arcmemo.core.records import Selection
from arcmemo.core.registry import RegistryError
from arcmemo.memory.paper_view import render_paper
from arcmemo.selection import SELECTORS
from tests.support.selection import selection_memory


def test_registry_lists_every_selector() -> None:
    assert SELECTORS.names() == ["all", "behaviour", "dcrs", "describe", "embedding", "llm", "none"]
    with pytest.raises(
        RegistryError, match=r"unknown selector .best.*; known: all, behaviour, dcrs, describe"
    ):
        SELECTORS.create("best")


def test_all_selects_every_entry_and_shows_each_in_full_in_the_paper_s_view() -> None:
    memory = selection_memory()
    selector = SELECTORS.create("all")  # the default view, the paper's
    selection = asyncio.run(selector.select(memory, "p", task_id="t", clients={}))
    assert selection.selected == [c.name for c in memory.concepts] + ["lesson 1"]
    text = selector.render(memory, Selection(selector="all"))  # every entry, whatever chosen
    assert text.rstrip().endswith(render_paper(memory, selection.selected))
    assert text.startswith("### Concepts from Previously Solved Puzzles\n")
    assert "The list holds every concept seen in puzzles solved before, each in full" in text
    assert "The list is not complete" not in text and "- other concepts:" not in text
    assert text.count("- concept: ") == len(memory.concepts)
    assert "np.rot90(grid, k)" in text and "- lesson 1\n" in text
    assert "related:" not in text and "## Types" not in text  # arcmemo's view's own lines
    assert asyncio.run(selector.preview(memory, "p", task_id="t")) == []


def test_all_with_arcmemo_s_view_renders_the_full_memory() -> None:
    memory = selection_memory()
    selector = SELECTORS.create(SELECTORS.spec("all", {"view": "arcmemo"}))
    selection = asyncio.run(selector.select(memory, "p", task_id="t", clients={}))
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
    selection = asyncio.run(selector.select(memory, "p", task_id="t", clients={}))
    assert selection.selected == [] and selection.selector == "none"
    assert selector.render(memory, selection) == ""


@pytest.mark.parametrize("name", ["all", "embedding", "behaviour", "llm"])
def test_every_selector_shows_the_paper_s_view_of_arc_concepts_only(name: str) -> None:
    # The published code has prompts for ARC alone: an AIME concept memory and a memory of
    # lessons alone keep arcmemo's solve hint under every selector's default view.
    selector = SELECTORS.create(name)
    chosen = Selection(selector=name, selected=["rotate grid", "lesson 1"])
    arc = selection_memory()
    assert selector.render(arc, chosen).startswith("### Concepts from Previously Solved Puzzles")
    aime = arc.model_copy(update={"domain": "aime"})
    # prompts/aime/hints/ps.j2 over arcmemo's solve (or full) view
    assert selector.render(aime, chosen).startswith("### Techniques from previously solved")
    lessons = arc.model_copy(update={"concepts": []})
    shown = selector.render(lessons, chosen)
    assert "Previously Solved Puzzles" not in shown and "the grid is mostly empty" in shown
