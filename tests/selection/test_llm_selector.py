"""Reasoning-guided selection: the prompt, name resolution, repair and the memory budget."""

from __future__ import annotations

import asyncio

import pytest

from arcmemo.core.records import Selection
from arcmemo.core.roles import SELECT
from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.render import SOLVE_BUDGET_TOKENS
from arcmemo.memory.schema import Concept, Lesson, Memory
from arcmemo.models.structured import OutputError
from arcmemo.selection import SELECTORS
from arcmemo.selection.llm import (
    LLMSelector,
    LLMSelectorOptions,
    _ids_by_numbers,
    _numbers,
    parse_names,
    resolve_names,
)
from tests.support.selection import Recorder, concept, selection_memory

PROBLEM = "Example 1 input (2x2):\n12\n34\n\nExample 1 output (2x2):\n31\n42\n"


def select(
    selector: LLMSelector, memory: Memory, recorder: Recorder, previous: str | None = None
) -> Selection:
    return asyncio.run(
        selector.select(
            memory,
            PROBLEM,
            task_id="t1",
            clients={SELECT: recorder.client()},
            previous_attempt=previous,
        )
    )


def test_resolve_exact_plural_and_case_variants() -> None:
    memory = selection_memory()
    resolved, unknown, notes = resolve_names(
        ["rotate grid", "Reflect Grids", "COUNT_COLORS", "Lesson 1", "rotate  grids"], memory
    )
    assert resolved == ["rotate grid", "reflect grid", "count colors", "lesson 1"]
    assert unknown == [] and notes == []


def test_resolve_fuzzy_match_only_when_unambiguous() -> None:
    memory = selection_memory()
    resolved, unknown, notes = resolve_names(
        ["enclosures", "enclosre", "fill region", "fill region rite", "teleport objects"], memory
    )
    assert resolved == ["enclosure", "fill region right"]
    assert unknown == ["fill region", "teleport objects"]  # left and right fit equally well
    assert [note.split(" (")[0] for note in notes] == [
        "'enclosre' matched to 'enclosure'",
        "'fill region rite' matched to 'fill region right'",
    ]


def test_fuzzy_matching_never_changes_a_number() -> None:
    memory = selection_memory()
    for index in range(14):
        memory.add_lesson(Lesson(situation=f"case {index}", suggestion="try it"))
    memory.add(concept("rotate 90", description="quarter turn"))
    memory.add(concept("rotate 180", description="half turn"))
    assert len(memory.lessons) == 15
    resolved, unknown, notes = resolve_names(
        ["lesson 20", "lesson 2", "lessons 12", "lesson 0", "rotate 900", "rotat 180"], memory
    )
    assert resolved == ["lesson 2", "lesson 12", "rotate 180"]
    assert unknown == ["lesson 20", "lesson 0", "rotate 900"]
    assert [note.split(" (")[0] for note in notes] == ["'rotat 180' matched to 'rotate 180'"]


def test_ids_are_grouped_by_their_numbers() -> None:
    # Numbered ids first, last and between plain ones: grouped as id by id would.
    names = ["rotate 90", "fill region", "tile 2 by 3", "crop", "rotate 180", "scale 2x3"]
    concepts = [concept(name) for name in names]
    expected: dict[tuple[int, ...], list[str]] = {}
    for c in concepts:
        expected.setdefault(tuple(_numbers(c.id)), []).append(c.id)
    assert _ids_by_numbers(concepts) == expected
    assert expected[(2, 3)] == ["tile-2-by-3", "scale-2x3"]
    assert expected[()] == ["fill-region", "crop"]


def test_parse_names_reads_lists_mappings_and_reason_items() -> None:
    text = (
        "The grid turns.\n```yaml\n- rotate grid: the output is turned\n"
        "- reflect grid\n- name: count colors\n```"
    )
    # A one-key mapping is "name: why", except when its key is `name` itself.
    assert parse_names(text) == ["rotate grid", "reflect grid", "count colors"]
    assert parse_names("```yaml\nconcepts: [rotate grid, enclosure]\n```") == [
        "rotate grid",
        "enclosure",
    ]
    assert parse_names("```yaml\nselected:\n  - 42\n  - ''\n```") == ["42"]
    with pytest.raises(OutputError, match="expected a YAML list of concept names"):
        parse_names("I would pick rotate grid.")


MAPPING_ANSWERS = {
    "yaml mappings with reasons": (
        "Scaling fits.\n```yaml\n- name: rotate grid\n  reason: the output is turned\n"
        "- name: Reflect Grid\n  reason: mirrored halves\n```"
    ),
    "json list of mappings": (
        '```json\n[{"name": "rotate grid", "why": "turned"}, {"name": "reflect grid"}]\n```'
    ),
    "json object holding mappings": (
        '```json\n{"selected_concepts": [{"concept": "rotate grid", "confidence": 0.9}, '
        '{"concept": "reflect grid", "confidence": 0.4}]}\n```'
    ),
    "two names in prose and one mapping": (
        "```yaml\nreasoning: turned, then mirrored\nconcepts:\n  - rotate grid\n"
        "  - name: reflect grid\n```"
    ),
    "json list of strings": '```json\n["rotate grid", "reflect grid"]\n```',
    "plain names, one a line": "```\nrotate grid\nreflect grid\n```",
    "numbered plain names": "```text\n1. rotate grid\n2. reflect grid\n```",
    "names as keys with reasons": (
        "```yaml\nrotate grid: the output is turned\nreflect grid: mirrored halves\n```"
    ),
}


@pytest.mark.parametrize("answer", MAPPING_ANSWERS.values(), ids=MAPPING_ANSWERS.keys())
def test_selection_answers_in_any_reasonable_shape_resolve(answer: str) -> None:
    selection = select(LLMSelector(), selection_memory(), Recorder(answer))
    assert selection.selected == ["rotate grid", "reflect grid"]
    assert selection.unknown == [] and selection.warning is None


def test_a_single_entry_as_a_mapping_is_one_name() -> None:
    assert parse_names("```yaml\nname: rotate grid\nreason: it turns\n```") == ["rotate grid"]
    assert parse_names('```json\n{"concept": "rotate grid"}\n```') == ["rotate grid"]


def test_a_mapping_without_a_name_is_repaired_not_turned_into_a_dict_repr() -> None:
    answer = "```yaml\n- concept_name: rotate grid\n  reason: turned\n```"
    with pytest.raises(OutputError, match=r"item 1 .* mapping without a `name` key"):
        parse_names(answer)
    recorder = Recorder(answer, "```yaml\n- rotate grid\n```")
    assert select(LLMSelector(), selection_memory(), recorder).selected == ["rotate grid"]


def test_a_selection_that_resolves_to_nothing_is_a_warning() -> None:
    unknown = select(LLMSelector(), selection_memory(), Recorder("```yaml\n- warp drive\n```"))
    assert unknown.selected == [] and unknown.warning is not None
    assert "chose nothing: no name resolved (warp drive)" in unknown.warning
    empty = select(LLMSelector(), selection_memory(), Recorder("```yaml\n[]\n```"))
    assert empty.warning == "the llm selection chose nothing: the answer named no entry"
    failed = select(LLMSelector(), selection_memory(), Recorder("rotation", "still"))
    assert failed.warning is not None and "the answer did not parse (expected a YAML" in (
        failed.warning
    )
    chosen = select(LLMSelector(), selection_memory(), Recorder("```yaml\n- rotate grid\n```"))
    assert chosen.warning is None
    nothing_to_choose = select(LLMSelector(), Memory(domain="arc"), Recorder())
    assert nothing_to_choose.warning is None


@pytest.mark.parametrize("view", ["paper", "arcmemo"])
def test_prompt_shows_the_selection_view_and_the_problem(view: str) -> None:
    recorder = Recorder("```yaml\n- rotate grid\n```")
    select(LLMSelector(LLMSelectorOptions(view=view)), selection_memory(), recorder)
    (messages,) = recorder.received
    prompt = messages[0].content
    if view == "paper":  # the default: the puzzle comes last
        assert "decide which of them are relevant" in prompt
        assert prompt.rstrip().endswith(PROBLEM.strip())
    else:
        assert "find what is visible" in prompt
    assert PROBLEM.strip() in prompt
    assert "- concept: rotate grid" in prompt
    assert "the output is the input turned on its side" in prompt  # cues are shown
    assert "np.rot90(grid, k)" in prompt  # and implementation notes (the paper's view)
    assert "situation: the grid is mostly empty" in prompt  # lessons are selectable too
    assert "previous attempt" not in prompt.lower()


@pytest.mark.parametrize("view", ["paper", "arcmemo"])
def test_a_retry_shows_the_failed_attempt(view: str) -> None:
    recorder = Recorder("```yaml\n- rotate grid\n```")
    options = LLMSelectorOptions(view=view)
    select(LLMSelector(options), selection_memory(), recorder, previous="def transform(grid): ...")
    prompt = recorder.received[0][0].content
    heading = (
        "# Your Previous Attempt\n" if view == "paper" else "### A previous attempt that failed\n"
    )
    assert heading in prompt and "def transform(grid): ..." in prompt.split(heading)[1]


def test_selection_records_resolved_unknown_and_trace() -> None:
    answer = (
        "Rotation and a lesson.\n```yaml\n- Rotate Grids: it turns\n- lesson 1\n"
        "- enclosre\n- warp drive\n```"
    )
    recorder = Recorder(answer)
    selection = select(LLMSelector(), selection_memory(), recorder)
    assert selection.selector == "llm"
    assert selection.selected == ["rotate grid", "lesson 1", "enclosure"]
    assert selection.unknown == ["warp drive"]
    assert selection.trace is not None and selection.trace.startswith(answer)
    assert "'enclosre' matched to 'enclosure'" in selection.trace
    assert selection.usage.completion_tokens > 0


def test_an_answer_without_a_yaml_list_gets_one_repair() -> None:
    recorder = Recorder("I think rotation is the key here.", "```yaml\n- rotate grid\n```")
    selection = select(LLMSelector(), selection_memory(), recorder)
    assert selection.selected == ["rotate grid"]
    repair = recorder.received[1]
    assert repair[-2].content == "I think rotation is the key here."
    assert "Your answer could not be used: expected a YAML list of concept names" in (
        repair[-1].content
    )


def test_a_selection_that_stays_unparseable_selects_nothing_and_says_why() -> None:
    recorder = Recorder("rotation", "still rotation")
    selection = select(LLMSelector(), selection_memory(), recorder)
    assert selection.selected == [] and len(recorder.received) == 2
    assert selection.trace is not None
    assert selection.trace.startswith("selection failed: expected a YAML list")
    assert selection.trace.endswith("still rotation")


def test_an_empty_memory_needs_no_model_call() -> None:
    recorder = Recorder()
    selection = select(LLMSelector(), Memory(domain="arc"), recorder)
    assert selection.selected == [] and selection.trace == "memory is empty"
    assert recorder.received == []


def test_the_llm_selector_needs_a_model() -> None:
    with pytest.raises(ValueError, match="needs a model"):
        asyncio.run(LLMSelector().select(selection_memory(), PROBLEM, task_id="t", clients={}))


def preview(selector: LLMSelector, memory: Memory) -> str:
    """The one prompt the selector would send for ``PROBLEM``."""
    (prompt,) = asyncio.run(selector.preview(memory, PROBLEM, task_id="t"))
    return prompt


@pytest.mark.parametrize(
    ("view", "lower_usage"),
    [
        ("paper", "- lower usage concepts: [fill region left, fill region right]"),
        ("arcmemo", "- lower-usage concepts: fill region left, fill region right"),
    ],
)
def test_selection_view_shows_established_concepts_in_full_and_the_rest_by_name(
    view: str, lower_usage: str
) -> None:
    memory = selection_memory()
    # usage: rotate grid 3 sources, reflect grid 2, the rest 1
    prompt = preview(LLMSelector(LLMSelectorOptions(view=view)), memory)
    assert prompt.count("- concept: ") == 2
    assert "- concept: rotate grid" in prompt and "- concept: reflect grid" in prompt
    assert "np.rot90(grid, k)" in prompt  # implementation notes are part of the view
    assert lower_usage in prompt
    options = LLMSelectorOptions(usage_threshold=1, view=view)
    everything = preview(LLMSelector(options), memory)
    assert everything.count("- concept: ") == len(memory.concepts)


def test_memory_budget_keeps_the_most_used_concepts_in_full() -> None:
    memory = selection_memory()
    options = LLMSelectorOptions(usage_threshold=1, view="arcmemo")
    unlimited = preview(LLMSelector(options), memory)
    assert unlimited.count("- concept: ") == len(memory.concepts)
    budget = 200
    options = LLMSelectorOptions(budget_tokens=budget, usage_threshold=1, view="arcmemo")
    prompt = preview(LLMSelector(options), memory)
    assert "- concept: rotate grid" in prompt and "- concept: reflect grid" in prompt
    assert 2 <= prompt.count("- concept: ") < len(memory.concepts)
    section = prompt.split("### Memory\n")[1].split("### Problem")[0].strip() + "\n"
    assert estimate_tokens(section) <= budget
    assert section == memory.render("selection", budget_tokens=budget, usage_threshold=1)
    # the selector sends exactly the previewed prompt
    recorder = Recorder("```yaml\n- rotate grid\n```")
    select(LLMSelector(options), memory, recorder)
    assert recorder.received[0][0].content == prompt
    assert SELECTORS.spec("llm", {"budget_tokens": "150"}).options == {
        "solve_budget_tokens": SOLVE_BUDGET_TOKENS,
        "budget_tokens": 150,
        "usage_threshold": 2,
        "view": "paper",
        "behaviour_top_k": None,
        "behaviour_budget_s": 20.0,
    }


def test_render_shows_selected_in_full_and_the_rest_by_title() -> None:
    memory = selection_memory()
    selector = SELECTORS.create("llm")
    text = selector.render(memory, Selection(selector="llm", selected=["rotate grid", "lesson 1"]))
    assert "- concept: rotate grid" in text and "np.rot90(grid, k)" in text
    assert "- concept: reflect grid" not in text
    titles = " ".join(line for line in text.splitlines() if "other concepts:" in line)
    for name in ("reflect grid", "fill region left", "enclosure", "count colors"):
        assert name in titles
    assert "situation: the grid is mostly empty" in text


def test_fuzzy_match_never_swaps_one_word_of_a_name_for_another() -> None:
    memory = Memory(
        concepts=[
            Concept(name="fill region left", kind="routine"),
            Concept(name="outline object", kind="routine"),
        ]
    )
    resolved, unknown, _ = resolve_names(["fill region centre", "outline objetc"], memory)
    assert resolved == ["outline object"]  # a misspelling still matches
    assert unknown == ["fill region centre"]


def test_the_paper_s_view_is_for_arc_concepts_only() -> None:
    # The published code has prompts for ARC alone: AIME's concept memories keep arcmemo's
    # selection prompt and solve hint under the default view.
    memory = selection_memory().model_copy(update={"domain": "aime"})
    prompt = preview(LLMSelector(), memory)
    assert "Choose the entries that will help" in prompt and "# Your Given Puzzle" not in prompt
    hint = LLMSelector().render(memory, Selection(selector="llm", selected=["rotate grid"]))
    assert "### Concepts from Previously Solved Puzzles" not in hint
    assert "### Concepts from Previously Solved Puzzles" in LLMSelector().render(
        selection_memory(), Selection(selector="llm", selected=["rotate grid"])
    )
