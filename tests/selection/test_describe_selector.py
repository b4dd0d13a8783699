"""Description-based top-k lesson selection (ArcMemo-OE's read)."""

from __future__ import annotations

import asyncio
import re

import pytest

from arcmemo.core.records import Selection
from arcmemo.core.roles import SELECT
from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.schema import Concept, Lesson, Memory
from arcmemo.models.structured import OutputError
from arcmemo.selection import SELECTORS
from arcmemo.selection.describe import (
    DescribeSelector,
    DescribeSelectorOptions,
    description_of,
    parse_description,
    parse_lesson_numbers,
)
from tests.support.selection import Recorder

PROBLEM = (
    "Example 1 input (2x2):\n[[1, 2],\n [3, 4]]\n\nExample 1 output (2x2):\n[[3, 1],\n [4, 2]]\n"
)
DESCRIPTION = (
    "<observations>Example 1: the grid turns.<summary>Every output is its input turned a "
    "quarter clockwise.</summary></observations>\n"
    "<speculation>A rotation by 90 degrees.<details>maybe 270?</details></speculation>"
)


def lesson_memory(n: int = 8) -> Memory:
    memory = Memory(domain="arc")
    for index in range(1, n + 1):
        memory.add_lesson(
            Lesson(situation=f"situation {index}", suggestion=f"suggestion {index}"),
            task_id=f"t{index}",
        )
    return memory


def select(selector: DescribeSelector, memory: Memory, recorder: Recorder, previous=None):
    return asyncio.run(
        selector.select(
            memory,
            PROBLEM,
            task_id="t",
            clients={SELECT: recorder.client()},
            previous_attempt=previous,
        )
    )


def test_describe_then_select_the_top_k_lessons() -> None:
    recorder = Recorder(DESCRIPTION, "```yaml\n- 3\n- lesson 7\n- 3\n- 1\n- 2\n- 4\n- 5\n```")
    selection = select(DescribeSelector(), lesson_memory(), recorder)
    assert selection.selected == ["lesson 3", "lesson 7", "lesson 1", "lesson 2", "lesson 4"]
    assert selection.unknown == []
    describe_prompt, select_prompt = (m[0].content for m in recorder.received)
    assert "Describe the puzzle" in describe_prompt and PROBLEM.strip() in describe_prompt
    assert "lesson" not in describe_prompt.lower()  # the description sees no memory
    assert "at most 5, the most useful first" in select_prompt
    assert "Observations: Every output is its input turned a quarter clockwise." in select_prompt
    assert "Speculation: A rotation by 90 degrees." in select_prompt
    assert "maybe 270" not in select_prompt  # <details> are left out
    assert "- lesson 8\n  situation: situation 8\n  suggestion: suggestion 8" in select_prompt
    assert PROBLEM.strip() not in select_prompt  # the paper selects from the description
    assert description_of(selection).startswith("Observations: Every output")


def test_top_k_is_an_option_and_numbers_are_never_fuzzy() -> None:
    assert SELECTORS.spec("describe").options == {"top_k": 5, "budget_tokens": None}
    recorder = Recorder(DESCRIPTION, "```yaml\n- 20\n- 2\n- 0\n- 12\n```")
    selector = SELECTORS.create(SELECTORS.spec("describe", {"top_k": "2"}))
    assert isinstance(selector, DescribeSelector)
    selection = select(selector, lesson_memory(15), recorder)
    assert selection.selected == ["lesson 2", "lesson 12"]
    assert selection.unknown == ["lesson 20", "lesson 0"]  # out of range: never lesson 2
    assert "at most 2" in recorder.received[1][0].content


def test_lessons_that_resolve_to_nothing_are_a_warning() -> None:
    recorder = Recorder(DESCRIPTION, "```yaml\n- 20\n- 0\n```")
    selection = select(DescribeSelector(), lesson_memory(15), recorder)
    assert selection.selected == [] and selection.warning == (
        "the describe selection chose nothing: no name resolved (lesson 20, lesson 0)"
    )
    broken = select(DescribeSelector(), lesson_memory(), Recorder("no tags", "still none"))
    assert (broken.warning or "").startswith(
        "the describe selection chose nothing: the description did not parse"
    )
    chosen = select(DescribeSelector(), lesson_memory(), Recorder(DESCRIPTION, "```yaml\n- 1\n```"))
    assert chosen.warning is None
    assert select(DescribeSelector(), Memory(), Recorder()).warning is None


def test_solve_prompt_shows_the_description_and_only_the_chosen_lessons() -> None:
    memory = lesson_memory()
    memory.add(Concept(name="recolor object", kind="routine"), task_id="x")  # never shown
    recorder = Recorder(DESCRIPTION, "```yaml\n- 2\n```")
    selector = DescribeSelector()
    selection = select(selector, memory, recorder)
    text = selector.render(memory, selection)
    assert text.startswith("### A description of the puzzle\n")
    assert "It may be incomplete or wrong" in text
    assert "Observations: Every output is its input turned" in text
    assert "### Lessons from previously solved puzzles" in text
    assert "- lesson 2\n  situation: situation 2" in text
    assert "situation 3" not in text
    for ps_word in ("recolor object", "concept", "routine", ":="):
        assert ps_word not in text


def test_a_retry_shows_the_failed_attempt_and_failures_say_why() -> None:
    recorder = Recorder(DESCRIPTION, "```yaml\n- 1\n```")
    select(DescribeSelector(), lesson_memory(), recorder, previous="def transform(g): ...")
    assert "### A previous attempt that failed\ndef transform(g): ..." in (
        recorder.received[1][0].content
    )
    broken = Recorder("no tags", "still none")
    selection = select(DescribeSelector(), lesson_memory(), broken)
    assert selection.selected == [] and (selection.trace or "").startswith("description failed")
    empty = Recorder()
    assert select(DescribeSelector(), Memory(), empty).trace == "memory has no lessons"
    assert empty.received == []
    with pytest.raises(ValueError, match="needs a model"):
        asyncio.run(DescribeSelector().select(lesson_memory(), PROBLEM, task_id="t", clients={}))


def test_parsers() -> None:
    assert parse_lesson_numbers("```yaml\n- 4\n- 'lesson 5'\n- {6: why}\n```") == [4, 5, 6]
    with pytest.raises(OutputError, match="not a lesson number"):
        parse_lesson_numbers("```yaml\n- rotate grid\n```")
    with pytest.raises(OutputError, match="<speculation>"):
        parse_description("just prose")
    assert parse_description("<speculation>idea</speculation>") == "Speculation: idea"
    assert description_of(Selection(selector="llm", trace="anything")) == ""


def test_options_model() -> None:
    with pytest.raises(ValueError):
        DescribeSelectorOptions(top_k=0)


def test_a_budget_caps_the_lesson_list_the_model_picks_from() -> None:
    memory = lesson_memory(60)
    recorder = Recorder(DESCRIPTION, "```yaml\n- 2\n```")
    select(DescribeSelector(DescribeSelectorOptions(budget_tokens=200)), memory, recorder)
    listed = recorder.received[1][0].content
    shown = [int(n) for n in re.findall(r"^- lesson (\d+)$", listed, flags=re.M)]
    assert shown == list(range(1, len(shown) + 1)) and 3 < len(shown) < 60
    assert f"({60 - len(shown)} more lessons not shown: memory budget of 200 tokens)" in listed
    lessons = listed[listed.index("## Lessons") : listed.index("tokens)") + len("tokens)")]
    assert estimate_tokens(lessons) <= 200
    # without a budget every lesson is listed, as the paper does
    recorder = Recorder(DESCRIPTION, "```yaml\n- 2\n```")
    select(DescribeSelector(), memory, recorder)
    assert "- lesson 60\n" in recorder.received[1][0].content
    assert "not shown" not in recorder.received[1][0].content


def test_the_memory_budget_flag_reaches_the_describe_selector() -> None:
    from arcmemo.cli.options import selector_args

    options = selector_args((), memory_budget=500, top_k=None, embedder=None)
    selector = SELECTORS.create(SELECTORS.spec("describe", options))
    assert isinstance(selector, DescribeSelector) and selector.budget_tokens == 500
