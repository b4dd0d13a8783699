"""Renderings: golden files for the four views, determinism, budgeted selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from arcmemo import Memory
from arcmemo.memory.render import VIEWS
from arcmemo.tokens import estimate_tokens

SOLVE_SELECTION = ["Recolor Objects", "lesson 1"]


def _render(memory: Memory, view: str) -> str:
    return memory.render(view, selected=SOLVE_SELECTION if view == "solve" else None)


@pytest.mark.parametrize("view", VIEWS)
def test_views_match_golden_files(small_memory: Memory, golden, view: str) -> None:
    golden(f"render_{view}.txt", _render(small_memory, view))


@pytest.mark.parametrize("view", VIEWS)
def test_rendering_is_deterministic_across_save_and_load(
    small_memory: Memory, tmp_path: Path, view: str
) -> None:
    first = _render(small_memory, view)
    assert _render(small_memory, view) == first
    small_memory.save(tmp_path / "m.json")
    assert _render(Memory.load(tmp_path / "m.json"), view) == first


def test_concept_order_does_not_depend_on_insertion_order(small_memory: Memory) -> None:
    shuffled = small_memory.model_copy(update={"concepts": small_memory.concepts[::-1]})
    for view in VIEWS:
        assert _render(shuffled, view) == _render(small_memory, view)


def test_compressed_view_lists_rarely_used_concepts_by_name(small_memory: Memory) -> None:
    text = small_memory.render("compressed")
    assert "- concept: recolor object" in text  # used by two tasks
    assert "- concept: extract objects" not in text
    assert "- lower-usage concepts: extract objects" in text
    assert "write the new color" not in text  # no implementation notes


def test_solve_view_shows_selected_in_full_and_others_by_title(small_memory: Memory) -> None:
    text = small_memory.render("solve", selected=SOLVE_SELECTION)
    assert "- concept: recolor object" in text
    assert "write the new color at each pixel" in text
    assert "- other concepts: extract objects" in text
    assert "- concept: extract objects" not in text
    assert "simulate gravity" in text  # lesson 1 was selected


def test_budgeted_selection_view_lists_overflow_by_title(small_memory: Memory, golden) -> None:
    unlimited = small_memory.render("selection")
    assert "more concepts" not in unlimited
    budget = estimate_tokens(unlimited) // 2
    text = small_memory.render("selection", budget_tokens=budget)
    full = [line for line in text.splitlines() if line.startswith("- concept: ")]
    titled = [line for line in text.splitlines() if line.startswith("- more concepts: ")]
    assert full and titled
    shown_in_full = {line.removeprefix("- concept: ") for line in full}
    shown_by_title = {n for line in titled for n in line.split(": ", 1)[1].split(", ")}
    assert shown_in_full | shown_by_title == {c.name for c in small_memory.concepts}
    assert not shown_in_full & shown_by_title
    # the most used concept is the one kept in full
    assert "recolor object" in shown_in_full
    golden("render_selection_budgeted.txt", text)


def test_tiny_budget_reports_omitted_concepts(small_memory: Memory) -> None:
    text = small_memory.render("selection", budget_tokens=1)
    assert "- concept: " not in text
    assert "(4 more concepts not shown: memory budget of 1 tokens)" in text


def test_unknown_view_is_rejected(small_memory: Memory) -> None:
    with pytest.raises(ValueError, match="unknown view 'everything'"):
        small_memory.render("everything")
