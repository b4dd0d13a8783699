"""Selection answers in a scripted run: mappings with a `name` resolve, and a task whose
selection resolves to nothing is a warning in its record and in the run's summary; every
selector's solve prompt shows the memory in the view the run names (the paper's by
default)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from arcmemo.core.registry import ComponentSpec
from arcmemo.memory.seeds import load_seed
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import run_benchmark
from tests.support.scripted_models import loop_model

NAMED, NOTHING = "66e6c45b", "bbb1b8b6"
# How a real model answered: a YAML list of mappings, each with a name and a reason.
MAPPINGS = (
    "The centre moves to the corners.\n```yaml\n- name: reflect grid\n"
    "  reason: the corners mirror each other\n- name: Tile Grids\n  reason: maybe\n```"
)
UNKNOWN = "```yaml\n- name: warp drive\n  reason: nothing fits\n```"


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


def test_mapping_answers_resolve_and_an_empty_selection_is_a_warning(tmp_path: Path) -> None:
    lm = loop_model()
    memory_path = tmp_path / "memory.json"
    load_seed("arc").save(memory_path)
    model = lm.LoopModel(
        answers={
            ("select", NAMED): MAPPINGS,
            ("select", NOTHING): UNKNOWN,
            ("solve", None): lm.program_answer(lm.IDENTITY),
        },
        arc_ids=[NAMED, NOTHING],
    )
    out = tmp_path / "run"
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        tasks=[NAMED, NOTHING],
        model="scripted:solver",
        attempts=1,
        feedback_rounds=0,
        out=out,
        memory=memory_path,
        selector="llm",
    )
    solver = ModelClient(ScriptedProvider.from_script(model, model="solver"))
    asyncio.run(run_benchmark(config, models={"solver": solver}))
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    selections = {row["task_id"]: row["selection"] for row in rows}
    assert selections[NAMED]["selected"] == ["reflect grid", "tile grid"]
    assert selections[NAMED]["unknown"] == [] and selections[NAMED]["warning"] is None
    assert selections[NOTHING]["selected"] == [] and selections[NOTHING]["unknown"] == [
        "warp drive"
    ]
    warning = "the llm selection chose nothing: no name resolved (warp drive)"
    assert selections[NOTHING]["warning"] == warning
    summary = json.loads((out / "summary.json").read_text())
    assert (
        f"1 of 2 tasks got no memory entry from the selector (first, {NOTHING}: {warning})"
        in (summary["warnings"])
    )


# The paper's solve hint and view (prompts/arc/hints/paper.j2, arcmemo.memory.paper_view)
# and arcmemo's (prompts/arc/hints/ps.j2, Memory.render).
PAPER_MARKERS = ("### Concepts from Previously Solved Puzzles", "## structure concepts")
ARCMEMO_MARKERS = ("### Concepts from previously solved puzzles", "## Structures")


@pytest.mark.parametrize("name", ["all", "embedding", "behaviour", "llm"])
@pytest.mark.parametrize("view", [None, "paper", "arcmemo"])
def test_every_selector_s_solve_prompt_shows_the_view_of_the_run(
    tmp_path: Path, name: str, view: str | None
) -> None:
    # --select NAME with no view is the default, the paper's: a run of the paper's structure
    # shows no memory in arcmemo's view, whichever selector picks (the paper's "no selection"
    # ablation, --select all, included).
    lm = loop_model()
    memory_path = tmp_path / "memory.json"
    load_seed("arc").save(memory_path)
    model = lm.LoopModel(
        answers={
            ("select", None): "```yaml\n- reflect grid\n```",
            ("solve", None): lm.program_answer(lm.IDENTITY),
        },
        arc_ids=[NAMED],
    )
    options = {} if view is None else {"view": view}
    if name == "behaviour":
        options["sandbox"] = "process"  # the seed's concepts carry no code: nothing runs
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        tasks=[NAMED],
        model="scripted:solver",
        attempts=1,
        feedback_rounds=0,
        out=tmp_path / "run",
        memory=memory_path,
        selector=ComponentSpec(name=name, options=options),
    )
    solver = ModelClient(ScriptedProvider.from_script(model, model="solver"))
    asyncio.run(run_benchmark(config, models={"solver": solver}))
    (solve,) = model.of("solve")
    prompt = solve.prompt
    shown, hidden = (
        (ARCMEMO_MARKERS, PAPER_MARKERS) if view == "arcmemo" else (PAPER_MARKERS, ARCMEMO_MARKERS)
    )
    assert all(marker in prompt for marker in shown), name
    assert not any(marker in prompt for marker in hidden), name
    if name == "all":  # every concept in full, no title left to list
        assert prompt.count("- concept: ") == len(load_seed("arc").concepts)
        assert "- other concepts:" not in prompt
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["selector"]["options"]["view"] == (view or "paper")
