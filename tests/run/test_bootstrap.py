"""Bootstrapping a memory offline: from a finished run or a folder of programs, resumably."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from arcmemo.abstraction.outcome import AbstractionOutcome
from arcmemo.benchmarks.arc import ArcTaskError
from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.core.records import SolvedItem
from arcmemo.core.roles import ABSTRACT
from arcmemo.memory.schema import Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.models.client import ModelClient
from arcmemo.models.retry import ModelCallError
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.bootstrap import abstract_into, items_from_programs, items_from_run, memory_summary
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.records import RunDirError
from arcmemo.run.pipeline import run_benchmark
from tests.support.paths import FIXTURES
from tests.support.scripted_models import loop_model

PROGRAMS = FIXTURES / "loop" / "programs"


lm = loop_model()


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def program_items() -> tuple[list[Any], list[str]]:
    benchmark = BENCHMARKS.create("arc-agi-1")
    try:
        return items_from_programs(PROGRAMS, benchmark, split=None, data=None)
    finally:
        benchmark.close()


def test_programs_that_pass_their_train_pairs_become_items(
    program_items: tuple[list[Any], list[str]],
) -> None:
    items, rejected = program_items
    assert [item.task_id for item in items] == ["67a3c6ac", "68b16354"]
    assert rejected == ["74dd1130"]
    item = items[0]
    assert item.domain == "arc"
    assert item.solution == (PROGRAMS / "67a3c6ac.py").read_text()
    task = lm.arc_tasks()["67a3c6ac"]
    assert "Example 1 input" in item.problem and "Test 1 input" in item.problem
    expected_test = "\n".join("".join(map(str, row)) for row in task.test_outputs[0])
    assert expected_test not in item.problem  # hidden labels never reach abstraction


def test_program_folder_errors_name_the_folder_and_the_ids(tmp_path: Path) -> None:
    benchmark = BENCHMARKS.create("arc-agi-1")
    try:
        with pytest.raises(FileNotFoundError, match=r"no <task id>\.py program files"):
            items_from_programs(tmp_path, benchmark, split=None, data=None)
        (tmp_path / "not-a-task.py").write_text("def transform(grid):\n    return grid\n")
        with pytest.raises(ArcTaskError, match="no ARC-AGI-1 task for not-a-task"):
            items_from_programs(tmp_path, benchmark, split=None, data=None)
    finally:
        benchmark.close()


def test_items_from_run_needs_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match=r"no config\.json"):
        items_from_run(tmp_path, "train")


def test_items_from_run_follow_the_write_signal(tmp_path: Path) -> None:
    model = lm.LoopModel(
        answers={
            ("solve", "66e6c45b"): lm.program_answer(
                "def transform(grid):\n    out = np.zeros_like(grid)\n"
                "    out[[0, 0, -1, -1], [0, -1, 0, -1]] = grid[[1, 1, 2, 2], [1, 2, 1, 2]]\n"
                "    return out\n"
            ),
            ("solve", "e345f17b"): lm.program_answer(lm.memorizing_program("e345f17b")),
            ("solve", "bbb1b8b6"): lm.program_answer(lm.IDENTITY),
        },
        arc_ids=["66e6c45b", "e345f17b", "bbb1b8b6"],
    )
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        tasks=["66e6c45b", "e345f17b", "bbb1b8b6"],
        model="scripted:solver",
        attempts=1,
        out=tmp_path / "run",
    )
    client = ModelClient(ScriptedProvider.from_script(model, model="solver"))
    asyncio.run(run_benchmark(config, models={"solver": client}))
    train = items_from_run(tmp_path / "run", "train")
    assert sorted(i.task_id for i in train) == ["66e6c45b", "e345f17b"]
    oracle = items_from_run(tmp_path / "run", "oracle")
    assert [i.task_id for i in oracle] == ["66e6c45b"]
    by_id = {i.task_id: i for i in train}
    assert "TABLE = " in by_id["e345f17b"].solution  # the extracted program, not the prose


class Interrupting:
    """The loop model, but the first call about ``task_id`` raises (a crash mid-bootstrap)."""

    def __init__(self, model: Any, task_id: str) -> None:
        self.model = model
        self.task_id = task_id

    def __call__(self, messages: list[Any]) -> str:
        answer = self.model(messages)
        if self.model.calls[-1].task_id == self.task_id:
            raise RuntimeError("the machine went down")
        return answer


def flip_model() -> Any:
    concepts = lm.CLI_MODEL.answers[("concepts", "67a3c6ac")]
    return lm.LoopModel(
        answers={("concepts", "67a3c6ac"): concepts, ("concepts", "68b16354"): concepts},
        arc_ids=["67a3c6ac", "68b16354"],
    )


def run_abstract_into(memory_path: Path, items: list[Any], script: Any) -> list[Any]:
    """``abstract_into`` with a scripted model; checks ``on_done`` saw every outcome."""
    done: list[AbstractionOutcome] = []

    async def go() -> list[AbstractionOutcome]:
        client = ModelClient(ScriptedProvider.from_script(script, model="abstractor"))
        try:
            return await abstract_into(
                memory_path, items, {ABSTRACT: client}, memory_format="ps", on_done=done.append
            )
        finally:
            await client.aclose()

    outcomes = asyncio.run(go())
    assert outcomes == done
    return outcomes


def test_an_interrupted_bootstrap_resumes_where_it_stopped(
    tmp_path: Path, program_items: tuple[list[Any], list[str]]
) -> None:
    items, _ = program_items
    memory_path = tmp_path / "memory.json"
    load_seed("arc").save(memory_path)
    first = flip_model()
    with pytest.raises(ModelCallError, match="the machine went down"):
        run_abstract_into(memory_path, items, Interrupting(first, "68b16354"))
    after_crash = Memory.load(memory_path)
    assert set(after_crash.solutions) == {"67a3c6ac"}  # the finished item was saved
    mirror = after_crash.find("mirror the whole grid")
    assert mirror is not None and mirror.provenance.sources == ["67a3c6ac"]

    second = flip_model()
    outcomes = run_abstract_into(memory_path, items, second)
    assert [o.task_id for o in outcomes] == ["68b16354"]
    assert {c.task_id for c in second.calls} == {"68b16354"}  # 67a3c6ac was skipped
    assert [c.stage for c in second.calls] == ["pseudocode", "concepts"]
    memory = Memory.load(memory_path)
    assert set(memory.solutions) == {"67a3c6ac", "68b16354"}
    mirror = memory.find("mirror the whole grid")
    assert mirror is not None and mirror.provenance.sources == ["67a3c6ac", "68b16354"]
    assert mirror.provenance.authors == ["scripted:abstractor"]
    assert "2 solutions" in memory_summary(memory)

    third = flip_model()
    assert run_abstract_into(memory_path, items, third) == []
    assert third.calls == []


def test_abstract_into_refuses_a_memory_a_live_run_is_writing(tmp_path: Path) -> None:
    from arcmemo.core.files import LockHeldError, held_lock
    from arcmemo.run.session import writer_lock_path

    memory_path = tmp_path / "memory.json"
    Memory(domain="arc").save(memory_path)
    item = SolvedItem(task_id="t", domain="arc", problem="p", solution="s")
    model: Any = None  # never reached: the lock is refused first
    live = held_lock(writer_lock_path(memory_path), holder="pid 1, run directory runs/live")
    with live, pytest.raises(LockHeldError, match="runs/live"):
        asyncio.run(abstract_into(memory_path, [item], {ABSTRACT: model}, memory_format="oe"))
