"""The DC-RS selector: retrieval of the most similar solved problems, the synthesis call,
its rendering, and a whole ``arcmemo run`` with it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from arcmemo.cli.main import cli
from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import ABSTRACT, SELECT
from arcmemo.memory.schema import Memory, Solution
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.selection.base import SELECTORS
from arcmemo.selection.dcrs import DcrsSelector, DcrsSelectorOptions
from tests.support.paths import ARC_EVAL, SCRIPTS


def sheet_memory() -> Memory:
    memory = Memory(domain="arc", cheatsheet="GLOBAL: check the grid size first.")
    problems = {
        "mirror": "the output mirrors the grid left to right; colors red blue",
        "mirror2": "mirror the grid top to bottom; colors red green",
        "count": "count the objects and output a bar of that length",
        "fill": "fill the enclosed holes with yellow",
        "blank": "",  # solved, but its problem text was not kept: never retrieved
    }
    for task_id, problem in problems.items():
        memory.solutions[task_id] = Solution(program=f"# {task_id}\n", problem=problem)
    return memory


def test_dcrs_is_registered_with_its_options() -> None:
    selector = SELECTORS.create(ComponentSpec(name="dcrs", options={"top_k": 2}))
    assert isinstance(selector, DcrsSelector) and selector.top_k == 2 and selector.uses_model


def test_it_retrieves_the_most_similar_solved_problems_leaving_the_task_out() -> None:
    selector = DcrsSelector(DcrsSelectorOptions(top_k=2))
    memory = sheet_memory()
    problem = "mirror the grid left to right"
    # TF-IDF cosine: both mirror problems share 'mirror', 'grid', 'left'/'to'...
    assert asyncio.run(selector.retrieve(memory, problem, task_id="new")) == ["mirror", "mirror2"]
    # the task's own stored solution is left out
    assert asyncio.run(selector.retrieve(memory, problem, task_id="mirror"))[0] == "mirror2"
    assert "blank" not in asyncio.run(
        DcrsSelector(DcrsSelectorOptions(top_k=9)).retrieve(memory, problem, task_id="new")
    )


def test_the_model_synthesises_a_sheet_from_the_retrieved_problems() -> None:
    seen: list[list[Message]] = []

    def respond(messages: list[Message]) -> str:
        seen.append(list(messages))
        return "thinking...<cheatsheet>PER-PROBLEM: flip with grid[:, ::-1]</cheatsheet>"

    model = ModelClient(ScriptedProvider.from_script(respond))
    selector = DcrsSelector(DcrsSelectorOptions(top_k=2))
    memory = sheet_memory()
    selection = asyncio.run(
        selector.select(
            memory, "mirror the grid left to right", task_id="new", clients={SELECT: model}
        )
    )
    assert selection.selector == "dcrs" and selection.selected == ["mirror", "mirror2"]
    prompt = seen[0][-1].content
    assert prompt.index("(mirror)") < prompt.index("(mirror2)")
    assert "count the objects" not in prompt and "GLOBAL: check the grid size" in prompt
    rendered = selector.render(memory, selection)
    assert "PER-PROBLEM: flip with grid[:, ::-1]" in rendered
    assert "### Notes from previously solved" in rendered  # the cheatsheet hint block
    assert "GLOBAL" not in rendered  # the per-problem sheet replaces the global one


def test_an_empty_memory_makes_no_model_call() -> None:
    selector = DcrsSelector()
    selection = asyncio.run(selector.select(Memory(), "anything", task_id="t", clients={}))
    assert selection.selected == [] and selector.render(Memory(), selection) == ""


def test_arcmemo_run_with_dcrs_shows_the_synthesised_sheet(tmp_path: Path) -> None:
    tasks = {p.stem: json.loads(p.read_text()) for p in sorted(ARC_EVAL.glob("*.json"))}
    target = "66e6c45b"
    memory = Memory(domain="arc", cheatsheet="GLOBAL sheet")
    # Stored problems: the target's own text under another id is the nearest neighbour.
    memory.solutions["twin"] = Solution(program="# twin\n", problem=json.dumps(tasks[target]))
    for task_id in sorted(tasks)[:3]:
        if task_id != target:
            memory.solutions[task_id] = Solution(
                program=f"# {task_id}\n", problem=json.dumps(tasks[task_id])
            )
    memory.save(tmp_path / "memory.json")
    out = tmp_path / "run"
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "arc-agi-1",
            "--data",
            str(ARC_EVAL),
            "--tasks",
            target,
            "--model",
            f"scripted:{SCRIPTS / 'dcrs_script.py'}",
            "--memory",
            str(tmp_path / "memory.json"),
            "--select",
            "dcrs",
            "--select-arg",
            "top_k=2",
            "--attempts",
            "1",
            "--feedback-rounds",
            "0",
            "--out",
            str(out),
        ],
        env={"COLUMNS": "300", "DCRS_SCRIPT_SOLVE_LOG": str(tmp_path / "solve.txt")},
    )
    assert result.exit_code == 0, result.output
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["selection"]["selector"] == "dcrs"
    assert row["selection"]["selected"][0] == "twin" and len(row["selection"]["selected"]) == 2
    stages = [json.loads(line)["stage"] for line in (out / "calls.jsonl").read_text().splitlines()]
    assert stages == ["select", "solve"]
    solve = (tmp_path / "solve.txt").read_text()
    assert "SYNTHESISED for this problem from: twin, " in solve
    assert "GLOBAL sheet" not in solve


def test_the_cheatsheet_format_keeps_the_problem_for_retrieval() -> None:
    from arcmemo.abstraction.cheatsheet import CheatsheetAbstractor
    from arcmemo.core.records import SolvedItem

    model = ModelClient(ScriptedProvider.from_script(lambda m: "<cheatsheet>sheet</cheatsheet>"))
    memory = Memory(domain="arc")
    item = SolvedItem(task_id="t1", domain="arc", problem="mirror it", solution="def f(): ...")
    asyncio.run(CheatsheetAbstractor().abstract(memory, item, {ABSTRACT: model}))
    assert memory.solutions["t1"].problem == "mirror it"
    assert asyncio.run(DcrsSelector().retrieve(memory, "mirror it", task_id="t2")) == ["t1"]
