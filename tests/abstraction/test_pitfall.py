"""Pitfall lessons end to end: a scripted online run where a task fails its train pairs.

The failed task's attempt and train feedback go to the aux model, its answer becomes a
``pitfall`` lesson (apart from the concepts), the next task's selection and solve prompts
show it marked ``Pitfall:``, and the run's attribution records which shown concepts the
solutions used. Without the option nothing of this is written.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from arcmemo.core.registry import ComponentSpec
from arcmemo.memory.schema import Concept, Memory, Provenance
from arcmemo.memory.seeds import load_seed
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import run_benchmark
from tests.support.scripted_models import loop_model

FAILED, SOLVED = "bbb1b8b6", "66e6c45b"
FLIP = "def transform(grid):\n    return np.fliplr(grid)  # reflect the grid\n"
CORNERS = """
def transform(grid):
    # move the center cells to the corners
    out = np.zeros_like(grid)
    out[[0, 0, -1, -1], [0, -1, 0, -1]] = grid[[1, 1, 2, 2], [1, 2, 1, 2]]
    return out
"""
PITFALL = (
    "```yaml\n- situation: the output is smaller than the input\n"
    "  suggestion: check the output size before choosing a whole-grid transformation\n```"
)


def online_run(
    tmp_path: Path, tasks: list[str], *, pitfalls: bool, judge: str | None = None
) -> tuple[Any, Memory]:
    lm = loop_model()
    memory = load_seed("arc")
    memory.add(
        Concept(
            name="move center to corners",
            kind="routine",
            routine_subtype="grid manipulation",
            description="move the cells of a centered block to the corners",
            provenance=Provenance(sources=["boot"]),
        ),
        task_id="boot",
    )
    memory_path = tmp_path / "memory.json"
    memory.save(memory_path)
    model = lm.LoopModel(
        answers={
            ("select", FAILED): "```yaml\n- reflect grid\n```",
            ("select", SOLVED): (
                "```yaml\n- move center to corners\n- reflect grid\n- tile grid\n- lesson 1\n```"
            ),
            ("solve", FAILED): lm.program_answer(FLIP),
            ("solve", SOLVED): lm.program_answer(CORNERS),
            ("concepts", SOLVED): lm.yaml_block(
                "- name: move center to corners\n  cues: [only the corners are colored]"
            ),
            ("pitfall", FAILED): PITFALL,
            # the judge's prompt shows no grids: one answer for every task
            **({("attribute", None): judge} if judge is not None else {}),
        },
        arc_ids=tasks,
    )
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        tasks=tasks,
        model="scripted:solver",
        attempts=1,
        feedback_rounds=0,
        out=tmp_path / "run",
        memory=memory_path,
        memory_out=tmp_path / "final.json",
        selector="llm",
        update="online",
        update_every=1,
        memory_format=ComponentSpec(name="ps", options={"pitfalls": pitfalls}),
        attribution_judge=judge is not None,
    )

    def client(name: str) -> ModelClient:
        return ModelClient(ScriptedProvider.from_script(model, model=name))

    asyncio.run(
        run_benchmark(config, models={"solver": client("solver"), "aux": client("abstractor")})
    )
    return model, Memory.load(tmp_path / "final.json")


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


def test_a_failed_task_writes_a_marked_pitfall_the_next_task_sees(tmp_path: Path) -> None:
    model, final = online_run(tmp_path, [FAILED, SOLVED], pitfalls=True)
    (call,) = model.of("pitfall")
    assert call.task_id == FAILED
    assert "np.fliplr(grid)" in call.prompt  # the failed attempt
    assert "example 1: wrong output" in call.prompt  # its train feedback
    (pitfall,) = final.lessons
    assert pitfall.kind == "pitfall" and pitfall.provenance.sources == [FAILED]
    assert pitfall.situation == "the output is smaller than the input"
    assert final.find(pitfall.situation) is None  # a lesson, never a concept
    (selection,) = model.of("select", SOLVED)
    assert "  Pitfall: situation: the output is smaller than the input" in selection.prompt
    (solve,) = model.of("solve", SOLVED)
    assert "Pitfall: situation: the output is smaller than the input" in solve.prompt
    # attribution of the two tasks' shown concepts
    reflect, corners = final.find("reflect grid"), final.find("move center to corners")
    assert reflect is not None and corners is not None
    assert reflect.stats.harmful == [FAILED] and reflect.stats.unused == [SOLVED]
    assert corners.stats.helpful == [SOLVED]
    # The seed's "tile grid" has a parameter named transform, ARC's entry point that every
    # program defines: no evidence that the solution used it.
    tile = final.find("tile grid")
    assert tile is not None and tile.stats.unused == [SOLVED] and tile.stats.helpful == []


def test_without_the_option_failures_write_nothing(tmp_path: Path) -> None:
    model, final = online_run(tmp_path, [FAILED], pitfalls=False)
    assert model.of("pitfall") == []
    assert final.lessons == []
    reflect = final.find("reflect grid")
    assert reflect is not None and reflect.stats.harmful == [FAILED]


def test_the_attribution_judge_runs_once_per_task_and_decides(tmp_path: Path) -> None:
    model, final = online_run(tmp_path, [FAILED], pitfalls=False, judge="```yaml\n[]\n```")
    (call,) = model.of("attribute")
    assert "np.fliplr(grid)" in call.prompt and "- reflect grid:" in call.prompt
    reflect = final.find("reflect grid")
    assert reflect is not None
    assert reflect.stats.harmful == [] and reflect.stats.unused == [FAILED]


def test_only_an_attempt_with_train_feedback_is_a_failed_item() -> None:
    from arcmemo.abstraction.pitfall import failed_item
    from arcmemo.core.records import Attempt, PairCheck, Step, TaskResult

    checks = [
        PairCheck(index=0, correct=True),
        PairCheck(index=1, correct=False, error="IndexError: out of range", error_kind="exception"),
    ]
    checked = Step(round=0, completion="c", candidate="prog", checks=checks, verified=False)
    result = TaskResult(task_id="t", attempts=[Attempt(index=0, steps=[checked])])
    item = failed_item(result, domain="arc", problem="p")
    assert item is not None and item.attempt == "prog"
    assert item.feedback == (
        "example 1: correct\nexample 2: error (exception): IndexError: out of range"
    )
    aime = Step(round=0, completion="the answer is 7", candidate="7", verified=None)
    no_feedback = TaskResult(task_id="a", attempts=[Attempt(index=0, steps=[aime])])
    assert failed_item(no_feedback, domain="aime", problem="p") is None
