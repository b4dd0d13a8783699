"""The paper's structure, arcmemo's default (--benchmark-arg layout=paper, --select-arg
view=paper unless told otherwise): parity of each template with the published code's layout,
checked by messages, sections, their order and what they include, on a task and a memory
written here in the paper's formats (no text of the paper's prompts is compared). Today's
structure stays as the named alternative (layout=arcmemo, view=arcmemo)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark, ArcOptions
from arcmemo.benchmarks.arc.data import ArcPair, ArcTask
from arcmemo.core.records import PairCheck, Selection, Step
from arcmemo.memory.importers import import_arc_memo
from arcmemo.memory.schema import Memory
from arcmemo.selection.llm import LLMSelector, LLMSelectorOptions

TASK = ArcTask(
    id="f0f0f0f0",
    train=[
        ArcPair(input=[[8, 0], [0, 8]], output=[[1, 0], [0, 1]]),
        ArcPair(input=[[8, 8], [0, 0]], output=[[2, 2], [0, 0]]),
    ],
    test_inputs=[[[0, 8], [8, 8]]],
    test_outputs=[[[0, 3], [3, 3]]],
)

# A small memory in the rendered format of the paper's selection memory (written here).
RENDERED = """\
## structure concepts
- concept: hole
  description: an empty cell enclosed by an object
  cues:
    - objects with cavities
- lower usage concepts: [frame]

## types
- direction := Literal["up", "down"]

## grid manipulation routines
- concept: recolor object
  description: give an object a new color
  output_typing: grid
  parameters:
    - color scheme (type: color scheme := color | Callable[[object], color])
  cues:
    - shapes keep their place but change color
- lower usage concepts: [draw line]

## other routines
### intermediate
- concept: count holes
  output_typing: int
  parameters:
    - object (type: object)
  cues:
    - never shown in this section
- lower usage concepts: [sort objects]"""

COMPLETION = (
    "The 8s are recolored by their count.\n\n"
    "```python\ndef transform(input_grid):\n    return input_grid  # FIRST DRAFT\n```\n\n"
    "Actually:\n\n```python\ndef transform(input_grid):\n    return input_grid * 0  # FINAL\n```\n"
)


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    (tmp_path / "barc_init_mem.txt").write_text(RENDERED)
    return import_arc_memo([tmp_path / "barc_init_mem.txt"])[0]


@pytest.fixture
def paper() -> ArcBenchmark:
    return ArcBenchmark()  # the default layout


def test_the_paper_s_structure_is_the_default() -> None:
    assert ArcOptions().layout == "paper" and ArcBenchmark().layout == "paper"
    assert LLMSelectorOptions().view == "paper"


def _order(text: str, *markers: str) -> list[int]:
    positions = [text.index(marker) for marker in markers]
    assert positions == sorted(positions), markers
    return positions


def _hint(memory: Memory) -> str:
    selector = LLMSelector()  # the default view
    return selector.render(memory, Selection(selector="llm", selected=["recolor object"]))


def test_solve_prompt_is_a_persona_and_one_message_with_the_hint_last(
    memory: Memory, paper: ArcBenchmark
) -> None:
    messages = paper.prompt(TASK, concepts=_hint(memory), previous=None)
    assert [m.role for m in messages] == ["system", "user"]
    assert "\n" not in messages[0].content.strip()  # a one-line persona
    user = messages[1].content
    _order(user, "### Introduction", "### Your Puzzle Grids", "Example 1\nInput:\n[[8, 0],",
           "Example 2", "[[0, 8],\n [8, 8]]", "### Instructions", "def transform(input_grid",
           "### Concepts from Previously Solved Puzzles", "## structure concepts",
           "## types", "## grid manipulation routines", "## other routines")  # fmt: skip
    assert user.rstrip().endswith("- other concepts: [count holes, sort objects]")  # the end
    assert "[[0, 3]" not in user  # never a test output
    # The paper's solve view: the selection in full with typed lines, the rest by title.
    assert "- concept: recolor object\n  description: give an object a new color\n" in user
    assert "  output_typing: grid\n" in user
    assert "    - color scheme (type: color scheme := color | Callable[[object], color])" in user
    assert "- other concepts: [frame, hole]" in user and "- other concepts: [draw line]" in user
    assert "related:" not in user and ":= Any" not in user and "## Types" not in user
    # The guide: four field bullets, five pieces of advice, five compositions.
    guide = user.split("### Concepts from Previously Solved Puzzles")[1].split("## structure")[0]
    assert len(re.findall(r"^- (cues|implementation|output typing|parameters):", guide, re.M)) == 4
    assert len(re.findall(r"^  - \[`", guide, re.M)) == 5


def test_arcmemo_layout_is_kept_as_it_was(memory: Memory) -> None:
    messages = ArcBenchmark(ArcOptions(layout="arcmemo")).prompt(
        TASK, concepts="HINT", previous=None
    )
    assert [m.role for m in messages] == ["system", "user", "user"]
    assert messages[1].content.strip() == "HINT" and "### Examples" in messages[2].content


def test_selection_prompt_has_the_paper_s_sections_and_the_puzzle_last(memory: Memory) -> None:
    selector = LLMSelector()  # the default view
    problem = ArcBenchmark().describe(TASK)
    (prompt,) = asyncio.run(selector.preview(memory, problem, task_id=TASK.id))
    _order(prompt, "# Introduction", "solving step", "# Concepts from Previously Solved Puzzles",
           "- cues:", "## structure concepts", "## types", "## grid manipulation routines",
           "## other routines", "### intermediate", "# Instructions", "```yaml",
           "# Your Given Puzzle", "Example 1 input (2x2)")  # fmt: skip
    assert prompt.rstrip().endswith(problem.rstrip())
    concepts = prompt.split("# Concepts from Previously Solved Puzzles")[1].split("# Instructions")[
        0
    ]
    advice = concepts.split("## structure concepts")[0].split("\n- parameters:")[1]
    assert len(re.findall(r"^- ", advice, re.M)) == 5  # the five recommendations
    # The paper's selection view: established concepts in full, others by name; cues are
    # never shown among the other routines; no relation lines or declared types.
    assert "- lower usage concepts: [frame]" in concepts
    assert "- lower usage concepts: [sort objects]" in concepts
    assert "never shown in this section" not in concepts
    assert "related:" not in concepts and ":= Any" not in concepts
    assert "## types\n- direction := Literal" in concepts


def test_retry_is_the_initial_prompt_then_the_answer_outcomes_and_new_instructions(
    memory: Memory, paper: ArcBenchmark
) -> None:
    hint = _hint(memory)
    initial = paper.prompt(TASK, concepts=hint, previous=None)[1].content.rstrip()
    previous = Step(
        round=0,
        completion=COMPLETION,
        candidate="def transform(input_grid):\n    return input_grid\n",
        checks=[
            PairCheck(index=0, correct=False, output=[[7, 7], [7, 7]]),
            PairCheck(index=1, correct=True, output=[[2, 2], [0, 0]]),
        ],
        verified=False,
    )
    messages = paper.prompt(TASK, concepts=hint, previous=previous)
    assert [m.role for m in messages] == ["system", "user"]
    retry = messages[1].content
    assert retry.startswith(initial)  # the first prompt, hint included, unchanged
    tail = retry[len(initial) :]
    _order(tail, "### Your Previous Response and Its Outcome", "#### Attempt 1",
           "FIRST DRAFT", "FINAL", "**Output Mismatches**", "Example 1:\n[[7, 7],",
           "### New Instructions")  # fmt: skip
    assert "Example 2:" not in tail  # only the examples that did not match
    assert "[[1, 0],\n [0, 1]]" not in tail  # the expected output is not repeated
    reselected = paper.retry_prompt(
        TASK, concepts=hint, reselected="NEWLY CHOSEN BLOCK", previous=previous
    )[1].content
    assert reselected.startswith(initial)  # the first hint is kept ...
    _order(reselected, "### New Instructions", "NEWLY CHOSEN BLOCK")  # ... the new one after
    assert reselected.rstrip().endswith("NEWLY CHOSEN BLOCK")
    # The arcmemo layout replaces the block instead.
    arcmemo = ArcBenchmark(ArcOptions(layout="arcmemo"))
    replaced = arcmemo.retry_prompt(
        TASK, concepts=hint, reselected="NEWLY CHOSEN BLOCK", previous=previous
    )
    assert "NEWLY CHOSEN BLOCK" in replaced[1].content
    assert "### Concepts from Previously Solved Puzzles" not in replaced[1].content


def test_the_paper_layout_runs_the_first_python_block(paper: ArcBenchmark) -> None:
    try:
        assert "FIRST DRAFT" in (paper.check(TASK, COMPLETION).candidate or "")
    finally:
        paper.close()
    today = ArcBenchmark(ArcOptions(layout="arcmemo"))
    try:
        assert "FINAL" in (today.check(TASK, COMPLETION).candidate or "")
    finally:
        today.close()


def test_retry_lists_errors_apart_and_shows_only_the_grids_that_did_not_match(
    paper: ArcBenchmark,
) -> None:
    previous = Step(
        round=1,
        completion=COMPLETION,
        candidate="def transform(input_grid):\n    return input_grid\n",
        checks=[
            PairCheck(
                index=0, correct=False, error="ZeroDivisionError: boom", error_kind="exception"
            ),
            PairCheck(index=1, correct=False, output=[[5, 5], [5, 5]]),
        ],
        verified=False,
    )
    retry = paper.prompt(TASK, concepts="", previous=previous)[1].content
    tail = retry.split("### Your Previous Response and Its Outcome", 1)[1]
    _order(tail, "#### Attempt 2", COMPLETION.strip(), "**Execution Errors**",
           "- Example 1: ZeroDivisionError: boom", "**Output Mismatches**",
           "Example 2:\n[[5, 5],\n [5, 5]]", "### New Instructions")  # fmt: skip
    assert tail.count("Example 1") == 1  # the crashed example has no grid
    assert "[[2, 2]," not in tail and "[[1, 0]," not in tail  # no expected output
