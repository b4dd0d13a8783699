"""Renderings: golden files for the four views, determinism, budgeted selection."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arcmemo import Concept, Memory, Parameter
from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.paper_view import render_paper
from arcmemo.memory.render import SOLVE_BUDGET_TOKENS, VIEWS
from arcmemo.memory.schema import Lesson, TypeDef
from arcmemo.memory.synthetic import synthetic_memory

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
    assert "write the new color at each pixel" in text  # implementation notes are kept
    assert "Old to new colors" not in text  # parameter descriptions are not


def test_selection_view_applies_the_usage_threshold_per_section(small_memory: Memory) -> None:
    text = small_memory.render("selection")
    assert text.count("- concept: ") == 1
    assert "- concept: recolor object" in text
    assert "write the new color at each pixel" in text  # implementation notes
    assert "scheme (color scheme): Old to new colors." in text
    # every section still says what it holds
    assert "## Structures\n- lower-usage concepts: container\n" in text
    assert "## Routines: intermediate\n- lower-usage concepts: extract objects\n" in text
    everything = small_memory.render("selection", usage_threshold=0)
    assert everything.count("- concept: ") == len(small_memory.concepts)


def test_seed_concepts_count_as_established(small_memory: Memory) -> None:
    small_memory.add(
        Concept(name="draw line", kind="routine", routine_subtype="grid manipulation"),
        task_id="seed",
    )
    for view in ("compressed", "selection"):
        assert "- concept: draw line" in small_memory.render(view)


def test_lesson_and_cheatsheet_memories_carry_no_type_vocabulary(small_memory: Memory) -> None:
    lessons_only = small_memory.model_copy(update={"concepts": []})
    sheet_only = small_memory.model_copy(
        update={"concepts": [], "lessons": [], "cheatsheet": "- rotate when asked"}
    )
    for memory in (lessons_only, sheet_only):
        for view in VIEWS:
            text = memory.render(view, selected=["lesson 1"])
            assert "## Types" not in text and ":=" not in text


def test_solve_view_shows_selected_in_full_and_others_by_title(small_memory: Memory) -> None:
    text = small_memory.render("solve", selected=SOLVE_SELECTION)
    assert "- concept: recolor object" in text
    assert "write the new color at each pixel" in text
    assert "- other concepts: extract objects" in text
    assert "- concept: extract objects" not in text
    assert "simulate gravity" in text  # lesson 1 was selected


def _related_memory() -> Memory:
    """Many concepts, each with a long related line (typed parameters imply relations)."""
    memory = Memory(types=[TypeDef(name="criteria", definition="Callable[[object], bool]")])
    for index in range(12):
        memory.add(
            Concept(
                name=f"criterion number {index}",
                kind="routine",
                routine_subtype="criteria",
                cues=[f"cue {index}"],
            ),
            task_id="seed",
        )
        memory.add(
            Concept(
                name=f"filter by rule {index}",
                kind="routine",
                routine_subtype="intermediate",
                parameters=[Parameter(name="rule", type="criteria")],
                description="Keep what the rule accepts." * (index % 3 + 1),
            ),
            task_id="seed",
        )
    return memory


@pytest.mark.parametrize("memory_name", ["small", "related"])
def test_budget_is_exact_for_every_budget(small_memory: Memory, memory_name: str) -> None:
    memory = small_memory if memory_name == "small" else _related_memory()
    memory.cheatsheet = "keep it short"
    unlimited = memory.render("selection", usage_threshold=0)
    assert "related: " in _related_memory().render("selection")
    ceiling = estimate_tokens(unlimited)
    previous_full = 0
    for budget in range(1, ceiling + 40, 1 if memory_name == "small" else 5):
        text = memory.render("selection", budget_tokens=budget, usage_threshold=0)
        assert estimate_tokens(text) <= budget, budget
        full = text.count("- concept: ")
        assert full >= previous_full or budget < 60, budget  # more room never shows less
        previous_full = full
    assert memory.render("selection", budget_tokens=ceiling + 40, usage_threshold=0) == unlimited


def test_budgeted_selection_view_lists_overflow_by_title(small_memory: Memory, golden) -> None:
    unlimited = small_memory.render("selection", usage_threshold=0)
    assert "not shown" not in unlimited
    budget = estimate_tokens(unlimited) * 2 // 3
    text = small_memory.render("selection", budget_tokens=budget, usage_threshold=0)
    assert estimate_tokens(text) <= budget
    full = [line for line in text.splitlines() if line.startswith("- concept: ")]
    titled = [line for line in text.splitlines() if line.startswith("- lower-usage concepts: ")]
    assert full and titled
    shown_in_full = {line.removeprefix("- concept: ") for line in full}
    shown_by_title = {n for line in titled for n in line.split(": ", 1)[1].split(", ")}
    assert shown_in_full | shown_by_title == {c.name for c in small_memory.concepts}
    assert not shown_in_full & shown_by_title
    # the most used concept is the one kept in full
    assert "recolor object" in shown_in_full
    golden("render_selection_budgeted.txt", text)


def test_tiny_budget_reports_omitted_concepts_when_the_note_fits(small_memory: Memory) -> None:
    assert small_memory.render("selection", budget_tokens=1) == ""
    text = small_memory.render("selection", budget_tokens=30)
    assert "- concept: " not in text
    assert "(4 more concepts and 1 more lesson not shown: memory budget of 30 tokens)" in text
    assert estimate_tokens(text) <= 30


def test_unknown_view_is_rejected(small_memory: Memory) -> None:
    with pytest.raises(ValueError, match="unknown view 'everything'"):
        small_memory.render("everything")


def _shown(text: str, label: str) -> tuple[set[str], set[str]]:
    """(names shown in full, names listed by title under ``label``)."""
    lines = text.splitlines()
    full = {line.removeprefix("- concept: ") for line in lines if line.startswith("- concept: ")}
    titled = {
        name
        for line in lines
        if line.startswith(f"- {label}: ")
        for name in line.split(": ", 1)[1].split(", ")
    }
    return full, titled


@pytest.mark.parametrize("size", [30, 300, 2000])
def test_every_budgeted_view_stays_within_its_budget_at_every_size(size: int) -> None:
    memory = synthetic_memory(size, seed=size, lessons=3)
    memory.cheatsheet = "prefer the simplest rule"
    selected = [c.name for c in memory.concepts[:: max(size // 6, 1)]] + ["lesson 2"]
    related_seen = False
    for budget in (1, 40, 150, 600, 2_000, 8_000, 25_000):
        for view, label in (("selection", "lower-usage concepts"), ("solve", "other concepts")):
            text = memory.render(view, selected=selected, budget_tokens=budget)
            assert estimate_tokens(text) <= budget, (view, budget)
            related_seen |= "  related: " in text
            full, titled = _shown(text, label)
            note = re.search(r"\(([\d,]+) more concepts?( and [\d,]+ more lessons?)? not", text)
            hidden = int(note.group(1).replace(",", "")) if note else 0
            assert len(full) + len(titled) + hidden == size or not text, (view, budget)
            chosen = {n for n in selected if not n.startswith("lesson")}
            if view == "solve" and titled - chosen:  # other titles come after the selected
                assert chosen <= full | titled
    assert related_seen


def test_solve_view_lists_titles_up_to_its_budget_and_counts_the_rest() -> None:
    memory = synthetic_memory(3000, seed=1)
    selected = [memory.concepts[5].name, memory.concepts[77].name]
    text = memory.render("solve", selected=selected, budget_tokens=2000)
    assert estimate_tokens(text) <= 2000
    full, titled = _shown(text, "other concepts")
    assert full == set(selected)
    assert 50 < len(titled) < 3000
    hidden = 3000 - len(full) - len(titled)
    assert text.rstrip().endswith(
        f"({hidden:,} more concepts not listed: memory budget of 2,000 tokens)"
    )
    # the listed titles are the most useful ones
    listed = [c for c in memory.concepts if c.name in titled]
    left_out = [c for c in memory.concepts if c.name not in titled | full]
    assert min(c.usage for c in listed) >= max(c.usage for c in left_out)
    unbudgeted = memory.render("solve", selected=selected)
    assert len(_shown(unbudgeted, "other concepts")[1]) == 2998
    assert "not listed" not in unbudgeted


def test_selectors_cap_the_solve_view_by_default() -> None:
    from arcmemo.core.records import Selection
    from arcmemo.selection import SELECTORS

    memory = synthetic_memory(3000, seed=2)
    chosen = Selection(selector="llm", selected=[memory.concepts[0].name])
    for name, view in (("llm", "paper"), ("embedding", "paper"), ("embedding", "arcmemo")):
        selector = SELECTORS.create(SELECTORS.spec(name, {"view": view}))
        text = selector.render(memory, chosen)
        assert "not listed: memory budget of 8,000 tokens" in text
        if view == "paper":
            body = render_paper(memory, chosen.selected, budget_tokens=SOLVE_BUDGET_TOKENS)
        else:
            body = memory.render(
                "solve", selected=chosen.selected, budget_tokens=SOLVE_BUDGET_TOKENS
            )
        assert body.rstrip() in text and estimate_tokens(body) <= SOLVE_BUDGET_TOKENS
    for view in ("paper", "arcmemo"):
        options = {"solve_budget_tokens": "100000", "view": view}
        wide = SELECTORS.create(SELECTORS.spec("llm", options))
        assert "not listed" not in wide.render(memory, chosen)


def test_the_solve_view_shows_exactly_the_lessons_named() -> None:
    memory = Memory(
        lessons=[
            Lesson(situation=f"situation {n}", suggestion=f"suggestion {n}") for n in range(12)
        ]
    )
    text = memory.render(
        "solve", selected=["lesson 3", "Lesson 11", "lesson 03", "lesson 0", "lesson 13"]
    )
    shown = re.findall(r"^- (lesson \d+)$", text, flags=re.M)
    # "lesson 03", "lesson 0" and "lesson 13" name no lesson of this memory
    assert shown == ["lesson 3", "lesson 11"]


def test_unbudgeted_views_group_the_sections_once_per_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arcmemo.memory import render

    grouped: list[int] = []
    real = render._sections

    def counting(concepts):
        listed = list(concepts)
        grouped.append(len(listed))
        return real(listed)

    monkeypatch.setattr(render, "_sections", counting)
    memory = synthetic_memory(60)
    texts = {view: memory.render(view) for view in VIEWS}
    assert grouped == [60]  # the four views read one grouping of every member
    memory.render("selection", budget_tokens=400)  # a few shown: grouped on their own
    assert len(grouped) == 2 and grouped[1] < 60
    memory.concepts[0].kind = "structure" if memory.concepts[0].kind == "routine" else "routine"
    memory.concepts[0].routine_subtype = None
    memory.render("full")  # an edit moves a concept to another section: grouped again
    assert grouped[2] == 60
    fresh = Memory.model_validate(memory.model_dump())
    assert {view: fresh.render(view) for view in VIEWS} == {
        view: memory.render(view) for view in VIEWS
    }
    assert texts["full"] != memory.render("full")
