"""Snapshots of every prompt of a PS, an OE and a cheatsheet run, reviewable as diffs.

Each file under ``snapshots/`` is one conversation as sent (``=== role ===`` then the text).
A prompt change shows up as a diff of these files; ``ARCMEMO_UPDATE_GOLDEN=1 pytest
tests/prompts`` rewrites them. Besides the byte comparison, each test checks the points the
prompts must make (grid format, hint blocks, few-shot examples, no program-synthesis
material in the baselines).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from arcmemo.abstraction import ABSTRACTORS
from arcmemo.benchmarks import BENCHMARKS
from arcmemo.benchmarks.arc import ArcBenchmark, ArcTask, load_path
from arcmemo.benchmarks.arc.benchmark import ArcOptions
from arcmemo.core.records import Selection, SolvedItem, Step
from arcmemo.core.roles import ABSTRACT, SELECT
from arcmemo.memory.schema import Lesson, Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.selection import SELECTORS

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
TASK_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "arc" / "eval" / "66e6c45b.json"
PROGRAM = (
    "import numpy as np\n\n"
    "def transform(grid):\n"
    "    out = np.zeros_like(grid)\n"
    "    out[0, 0], out[0, -1] = grid[1, 1], grid[1, 2]\n"
    "    out[-1, 0], out[-1, -1] = grid[2, 1], grid[2, 2]\n"
    "    return out\n"
)
PS_WORDS = ("routine", "structure", ":=", "parameters", "concept", "grid manipulation")


def snapshot(name: str, messages: list[Message]) -> str:
    """Compare the conversation with ``snapshots/<name>.txt``; return its text."""
    text = "\n\n".join(f"=== {m.role} ===\n{m.content.rstrip()}" for m in messages) + "\n"
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("ARCMEMO_UPDATE_GOLDEN"):
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"snapshot {path} missing; run with ARCMEMO_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"prompt differs from {path}"
    return text


class Script:
    """Answers in order; keeps every conversation."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.received: list[list[Message]] = []

    def __call__(self, messages: list[Message]) -> str:
        self.received.append(list(messages))
        return self.answers[len(self.received) - 1]

    def client(self) -> ModelClient:
        return ModelClient(ScriptedProvider.from_script(self, model="snapshot"))


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def task() -> ArcTask:
    (loaded,) = load_path(TASK_FILE)
    return loaded


@pytest.fixture(scope="module")
def arc() -> Iterator[ArcBenchmark]:
    bench = BENCHMARKS.create("arc-agi-1")
    assert isinstance(bench, ArcBenchmark)
    yield bench
    bench.close()


def solved(arc: ArcBenchmark, task: ArcTask) -> SolvedItem:
    return SolvedItem(task_id=task.id, domain="arc", problem=arc.describe(task), solution=PROGRAM)


def lesson_memory() -> Memory:
    memory = Memory(domain="arc")
    for situation, suggestion in [
        ("colored cells sit in the middle of an empty border", "move them to the corners"),
        ("the output is the input upside down", "reverse the rows"),
        ("shapes fall toward one edge", "simulate gravity column by column"),
    ]:
        memory.add_lesson(Lesson(situation=situation, suggestion=suggestion), task_id="older")
    return memory


# -- ArcMemo-PS --------------------------------------------------------------------------


def test_ps_run_prompts(arc: ArcBenchmark, task: ArcTask) -> None:
    # The default structure: the paper's (layout=paper, view=paper).
    memory = load_seed("arc")
    selector = SELECTORS.create("llm")
    (select_prompt,) = asyncio.run(selector.preview(memory, arc.describe(task), task_id="t"))
    text = snapshot("ps_select", [Message(role="user", content=select_prompt)])
    assert "# Instructions" in text and text.index("# Instructions") < text.index("# Your Given")
    assert "Example 1 input (4x4):\n[[0, 0, 0, 0],\n [0, 3, 4, 0]," in text  # the puzzle, last
    assert "  implementation:\n" in text  # the selection view keeps implementation notes

    chosen = Selection(selector="llm", selected=["extract objects", "move object until collision"])
    messages = arc.prompt(task, concepts=selector.render(memory, chosen), previous=None)
    text = snapshot("ps_solve", messages)
    assert [m.role for m in messages] == ["system", "user"]
    assert "Entries carry fields such as:" in text and "pieces combine in many ways" in text
    assert "a quick first analysis" in text  # the selection is imperfect
    assert "- other concepts: [" in text  # every other concept by title
    assert "Input:\n[[0, 0, 0, 0]," in text
    assert text.index("### Instructions") < text.index("### Concepts from Previously Solved")

    answer = "It keeps the grid.\n```python\ndef transform(grid):\n    return grid\n```"
    step = Step(**dict(arc.check(task, answer)), round=0, completion=answer)
    text = snapshot("ps_retry", arc.prompt(task, concepts="", previous=step))
    assert "It keeps the grid." in text and "**Output Mismatches**" in text

    # Today's structure stays as the named alternative (layout=arcmemo, view=arcmemo).
    arcmemo = ArcBenchmark(ArcOptions(layout="arcmemo"))
    try:
        old = SELECTORS.create(SELECTORS.spec("llm", {"view": "arcmemo"}))
        (select_prompt,) = asyncio.run(old.preview(memory, arcmemo.describe(task), task_id="t"))
        snapshot("ps_select_arcmemo", [Message(role="user", content=select_prompt)])
        hint = old.render(memory, chosen)
        text = snapshot("ps_solve_arcmemo", arcmemo.prompt(task, concepts=hint, previous=None))
        assert "How to read an entry:" in text and "Compositions that solved other puzzles" in text
        assert "Test 1 input (4x4):\n[[0, 0, 0, 0]," in text
        snapshot("ps_retry_arcmemo", arcmemo.prompt(task, concepts="", previous=step))
    finally:
        arcmemo.close()

    script = Script(
        "<pseudocode>\ncells = the four middle cells\nmove each to its nearest corner\n"
        "</pseudocode>\n<summary>the middle 2x2 moves to the corners</summary>",
        "```yaml\n- name: move object until collision\n```",
    )
    abstractor = ABSTRACTORS.create("ps", actor="scripted:snapshot")
    asyncio.run(abstractor.abstract(memory, solved(arc, task), {ABSTRACT: script.client()}))
    text = snapshot("ps_abstract_pseudocode", script.received[0])
    assert "## Example 12" in text and "def transform(grid):" in text
    text = snapshot("ps_abstract_concepts", script.received[1])
    assert "## Example 12" in text and "### Memory\n## Types" in text


# -- ArcMemo-OE --------------------------------------------------------------------------


def test_oe_run_prompts(arc: ArcBenchmark, task: ArcTask) -> None:
    memory = lesson_memory()
    selector = SELECTORS.create("describe")
    script = Script(
        "<observations>The four middle cells move.<summary>The middle 2x2 block of colors "
        "goes to the four corners.</summary></observations>"
        "<speculation>Each cell moves to its nearest corner.</speculation>",
        "```yaml\n- 1\n```",
    )
    selection = asyncio.run(
        selector.select(
            memory, arc.describe(task), task_id=task.id, clients={SELECT: script.client()}
        )
    )
    assert selection.selected == ["lesson 1"]
    describe = snapshot("oe_describe", script.received[0])
    choose = snapshot("oe_select", script.received[1])
    solve = snapshot(
        "oe_solve", arc.prompt(task, concepts=selector.render(memory, selection), previous=None)
    )
    assert "### A description of the puzzle" in solve and "may be incomplete or wrong" in solve
    assert "at most 5" in choose
    for text in (describe, choose, solve.split("=== user ===", 1)[1]):
        for word in PS_WORDS:
            assert word not in text, word

    script = Script(
        "<thought_process>\n- o 1: the middle cells reappear in the corners\n"
        "- t 1: each moves to its nearest corner\n</thought_process>",
        "```yaml\n- situation: a small block sits in the middle\n"
        "  suggestion: send each cell to its nearest corner\n```",
    )
    abstractor = ABSTRACTORS.create("oe", actor="scripted:snapshot")
    asyncio.run(abstractor.abstract(memory, solved(arc, task), {ABSTRACT: script.client()}))
    for name, conversation in zip(
        ("oe_abstract_thought_process", "oe_abstract_lessons"), script.received, strict=True
    ):
        text = snapshot(name, conversation)
        for word in ("routine", ":=", "typed"):
            assert word not in text, (name, word)


# -- Dynamic Cheatsheet baseline ---------------------------------------------------------


def test_cheatsheet_run_prompts(arc: ArcBenchmark, task: ArcTask) -> None:
    memory = Memory(domain="arc", cheatsheet="- corners: check whether cells move outward")
    selector = SELECTORS.create("all")
    everything = asyncio.run(selector.select(memory, "", task_id=task.id, clients={}))
    solve = snapshot(
        "cheatsheet_solve",
        arc.prompt(task, concepts=selector.render(memory, everything), previous=None),
    )
    assert "### Notes from previously solved puzzles" in solve
    for word in PS_WORDS:
        assert word not in solve.split("=== user ===", 1)[1], word
    script = Script("<cheatsheet>\n- corners: move the middle block outward\n</cheatsheet>")
    abstractor = ABSTRACTORS.create("cheatsheet", actor="scripted:snapshot")
    asyncio.run(abstractor.abstract(memory, solved(arc, task), {ABSTRACT: script.client()}))
    text = snapshot("cheatsheet_abstract", script.received[0])
    for word in ("routine", ":=", "typed"):
        assert word not in text, word
