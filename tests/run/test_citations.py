"""``--cite``: a solver that names the memory entries it used, end to end with a scripted
model on real ARC-AGI-1 evaluation tasks, and the lenient reading of its list."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arcmemo.benchmarks.arc import format_grid, load_split
from arcmemo.cli.main import cli
from arcmemo.core.records import Attempt, Selection, Step, TaskResult
from arcmemo.memory.schema import Concept, Memory, Provenance
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.citations import (
    MAX_NAMES,
    cited_names,
    resolve_citations,
    with_citation_request,
)
from arcmemo.run.config import RunConfig
from arcmemo.run.continual import record_selection_stats
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.pipeline import run_benchmark

CORNERS = """def transform(grid):
    out = np.zeros_like(grid)
    out[[0, 0, -1, -1], [0, -1, 0, -1]] = grid[[1, 1, 2, 2], [1, 2, 1, 2]]
    return out
"""
IDENTITY = "def transform(grid):\n    return grid\n"
CITE_REQUEST = "in a fenced block tagged `concepts`"
TASKS = ["66e6c45b", "00576224", "68b67ca3"]


def answer(program: str, tail: str = "") -> str:
    return f"The rule is clear.\n```python\n{program}```\n{tail}"


# Per task: what the scripted solver writes after its program.
TAILS = {
    # a clean list, in other spelling, with a name that exists but was hidden from this task
    # (its only source is the task itself) and one that exists nowhere
    "66e6c45b": "```concepts\nZigzag  Markers\nhidden corner rule\nghost idea\n```\n",
    # a messy list: unbalanced YAML, then nothing usable
    "00576224": "```concepts\n[[[ {zigzag: \n```\n",
    # no list at all
    "68b67ca3": "",
}
PROGRAMS = {"66e6c45b": CORNERS, "00576224": IDENTITY, "68b67ca3": IDENTITY}


def concept(name: str, source: str = "seed") -> Concept:
    return Concept(
        name=name,
        kind="routine",
        description=f"{name}: a test entry",
        provenance=Provenance(sources=[source]),
    )


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


def memory_file(tmp_path: Path) -> Path:
    path = tmp_path / "memory.json"
    Memory(
        concepts=[
            concept("zigzag marker"),
            concept("flood fill"),
            concept("hidden corner rule", source="66e6c45b"),
        ]
    ).save(path)
    return path


def signatures() -> dict[str, str]:
    """Per task, its first example input as the prompt shows it."""
    tasks = {t.id: t for t in load_split("evaluation") if t.id in TASKS}
    return {tid: f"\n{format_grid(tasks[tid].train[0].input)}\n" for tid in TASKS}


def cite_run(tmp_path: Path, *, cite: bool) -> tuple[Path, list[list[Message]]]:
    prompts: list[list[Message]] = []
    grids = signatures()

    def solver(messages: list[Message]) -> str:
        prompts.append(messages)
        task = next(t for t, grid in grids.items() if grid in messages[-1].content)
        return answer(PROGRAMS[task], TAILS[task])

    out = tmp_path / ("cite" if cite else "plain")
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        tasks=TASKS,
        model="scripted:solver",
        memory=memory_file(tmp_path),
        selector="all",
        attempts=1,
        feedback_rounds=0,
        cite=cite,
        out=out,
    )
    client = ModelClient(ScriptedProvider.from_script(solver, model="citing"))
    asyncio.run(run_benchmark(config, models={"solver": client}))
    return out, prompts


def test_a_cited_shown_entry_is_recorded_counted_and_attributed(tmp_path: Path) -> None:
    out, prompts = cite_run(tmp_path, cite=True)
    assert len(prompts) == 3 and all(CITE_REQUEST in p[-1].content for p in prompts)
    results = {r.task_id: r for r in RunDirectory(out).ordered_results()}
    step = results["66e6c45b"].attempts[0].steps[0]
    assert results["66e6c45b"].solved and step.concepts == ["zigzag marker", "flood fill"]
    assert step.cited == ["zigzag marker"]
    # Shown nowhere: the leakage guard hid the task's own entry; the other is no entry.
    assert step.cited_unshown == ["hidden corner rule", "ghost idea"]
    # A messy list and a missing one cite nothing and are graded as any answer.
    # (The messy line is kept as written among the names not shown: flagged, not credited.)
    messy, missing = (results[t].attempts[0].steps[0] for t in ("00576224", "68b67ca3"))
    assert (messy.cited, messy.cited_unshown) == ([], ["[[[ {zigzag:"])
    assert (missing.cited, missing.cited_unshown) == ([], [])
    assert all(s.candidate is not None and s.verified is not None for s in (messy, missing))
    line = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert "cited" in line["attempts"][0]["steps"][0]
    assert json.loads((out / "config.json").read_text())["cite"] is True

    reported = CliRunner().invoke(cli, ["report", str(out)])
    assert reported.exit_code == 0, reported.output
    html = (out / "report.html").read_text()
    table = html[html.index('id="citations-table"') :].split("</table>")[0]
    assert '>zigzag marker</a></td><td class="num">3</td><td class="num">1</td>' in table
    assert "3 citation(s) named an entry the prompt did not show" in html  # 2 + the messy line

    path = memory_file(tmp_path)
    folded = CliRunner().invoke(
        cli, ["memory", "attribute", str(out), "--memory", str(path), "--by", "citations"]
    )
    assert folded.exit_code == 0, folded.output
    assert "66e6c45b: zigzag marker: helpful (cited by the confirmed solution)" in folded.output
    assert "66e6c45b: flood fill: unused" in folded.output
    memory = Memory.load(path)
    zigzag, hidden = memory.find("zigzag marker"), memory.find("hidden corner rule")
    assert zigzag is not None and hidden is not None
    assert (zigzag.stats.cited, zigzag.stats.cited_solved) == (1, 1)
    assert zigzag.stats.helpful == ["66e6c45b"] and zigzag.stats.selected == 3
    # Cited while hidden: flagged on the step, never credited.
    # (It was shown to the two other tasks, which did not cite it.)
    assert (hidden.stats.cited, hidden.stats.helpful, hidden.stats.selected) == (0, [], 2)


def test_without_cite_the_prompt_and_the_steps_are_unchanged(tmp_path: Path) -> None:
    out, prompts = cite_run(tmp_path, cite=False)
    assert prompts and not any(CITE_REQUEST in m.content for p in prompts for m in p)
    for result in RunDirectory(out).ordered_results():
        assert all(s.cited == [] == s.cited_unshown for a in result.attempts for s in a.steps)
    path = memory_file(tmp_path)
    arguments = ["memory", "attribute", str(out), "--memory", str(path), "--by", "citations"]
    refused = CliRunner().invoke(cli, arguments)
    assert refused.exit_code == 1 and "did not ask its solver to cite" in refused.output


def test_the_request_follows_the_last_user_message() -> None:
    messages = [
        Message(role="system", content="rules"),
        Message(role="user", content="memory"),
        Message(role="user", content="task"),
    ]
    asked = with_citation_request(messages)
    assert [m.content for m in asked[:2]] == ["rules", "memory"]
    assert asked[2].content.startswith("task\n\n") and CITE_REQUEST in asked[2].content


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("```concepts\n- Zigzag Marker\n* flood fill\n```", ["Zigzag Marker", "flood fill"]),
        ("```concepts\n[a, b]\n```", ["a", "b"]),
        ("```concepts\n- name: a\n  why: it fits\n```", ["a"]),
        ("```yaml\nconcepts used:\n  - a\n  - b\n```", ["a", "b"]),
        ("```yaml\n- a\n```", ["a"]),
        ("```yaml\ngrid: [1, 2]\n```", []),  # a YAML block that is no list of names
        ("the answer\n**Concepts used:** a, b.\n", ["a", "b"]),
        ("```concepts\n```\nConcepts used: a", []),  # an empty block: none used
        ("```concepts\na\na\n```", ["a"]),
        ("no list here", []),
        ("```concepts\nunclosed", []),
    ],
)
def test_lists_are_read_leniently(text: str, names: list[str]) -> None:
    assert cited_names(text) == names


def test_hostile_lists_are_bounded() -> None:
    many = "```concepts\n" + "".join(f"name {i}\n" for i in range(10_000)) + "```"
    assert len(cited_names(many)) == MAX_NAMES
    deep = "```concepts\n" + "[" * 200_000 + "\n```"
    assert all(len(n) <= 200 for n in cited_names(deep))
    long_line = "Concepts used: " + "x" * 2_000_000
    assert [len(n) for n in cited_names(long_line)] == [200]
    escapes = cited_names("```concepts\n\x1b[31mzigzag marker\x1b[0m\n```")
    assert escapes and "\x1b" not in escapes[0]


def test_names_resolve_as_selections_do() -> None:
    memory = Memory(concepts=[concept("zigzag marker"), concept("rotate 90")])
    cited, unshown = resolve_citations(
        ["ZIGZAG  markers", "zigzag markr", "rotate 180", "rotate 90"],
        memory,
        ["zigzag marker"],
    )
    assert cited == ["zigzag marker"]
    assert unshown == ["rotate 90", "rotate 180"]  # shown-less entry, then no entry
    assert resolve_citations(["a"], None, []) == ([], ["a"])


def test_selection_statistics_count_citations_of_answered_steps() -> None:
    memory = Memory(concepts=[concept("zigzag marker"), concept("flood fill")])

    def step(cited: list[str], **fields: Any) -> Step:
        shown = ["zigzag marker", "flood fill"]
        return Step(round=0, completion="x", concepts=shown, cited=cited, **fields)

    result = TaskResult(
        task_id="t",
        selection=Selection(selector="all", selected=["zigzag marker", "flood fill"]),
        attempts=[
            Attempt(index=0, steps=[step(["zigzag marker"])]),
            # a failed call cites nothing the solver saw
            Attempt(index=1, steps=[step(["flood fill"], error="timeout")]),
        ],
    )
    record_selection_stats(memory, result, True)
    zigzag, flood = memory.find("zigzag marker"), memory.find("flood fill")
    assert zigzag is not None and flood is not None
    assert (zigzag.stats.cited, zigzag.stats.cited_solved) == (1, 1)
    assert (flood.stats.cited, flood.stats.selected) == (0, 1)
