"""Edges of the continual loop: leak flags, default write signals, statistics over
reselections, model failures during abstraction, and a reproducible bootstrap order."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arcmemo.abstraction.outcome import AbstractionOutcome
from arcmemo.cli.main import cli
from arcmemo.core.records import Attempt, Selection, Step, TaskResult
from arcmemo.memory.schema import Concept, Memory
from arcmemo.models.base import ProviderError, RetryDecision
from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.bootstrap import items_from_run
from arcmemo.run.config import RunConfig
from arcmemo.run.continual import ContinualUpdater, record_selection_stats
from arcmemo.run.directory.records import Batch
from arcmemo.run.directory.writer import RunWriter
from tests.support.paths import FIXTURES

ARC_DIR = FIXTURES / "arc" / "eval"
AIME_FILE = FIXTURES / "aime" / "problems.jsonl"


def config(tmp_path: Path, **fields: Any) -> RunConfig:
    return RunConfig(benchmark="arc-agi-1", model="scripted:x", out=tmp_path / "run", **fields)


def test_config_json_flags_a_run_whose_memory_writes_use_test_labels(tmp_path: Path) -> None:
    leaking = config(tmp_path, update="online", write_signal="oracle")
    RunWriter(leaking.out).start(leaking)
    saved = json.loads((leaking.out / "config.json").read_text())
    assert saved["leaks_test_labels"] is True
    assert config(tmp_path, update="online").leaks_test_labels is False
    assert config(tmp_path, write_signal="oracle").leaks_test_labels is False  # no writes


def test_aime_online_runs_default_to_the_consistency_signal(tmp_path: Path) -> None:
    memory = tmp_path / "memory.json"
    Memory(domain="aime").save(memory)
    script = FIXTURES / "scripts" / "aime_answers.yaml"
    args = [
        "run",
        "aime",
        "--data",
        str(AIME_FILE),
        "--model",
        f"scripted:{script}",
        "--memory",
        str(memory),
        "--update",
        "online",
        "--select",
        "all",
        "--limit",
        "1",
    ]
    for extra, expected in (([], "consistency"), (["--write-signal", "train"], "train")):
        out = tmp_path / f"run-{expected}"
        result = CliRunner().invoke(cli, [*args, *extra, "--out", str(out)])
        summary = json.loads((out / "summary.json").read_text())
        # The script answers the problems only, not the lesson prompts: a write of a
        # confirmed answer fails (an error of the abstract stage), no task ends in error.
        assert summary["n_errors"] == 0 and set(summary["errors"]) <= {"abstract"}, result.output
        saved = json.loads((out / "config.json").read_text())
        assert saved["write_signal"]["name"] == expected


def test_resolved_default_signal_per_benchmark() -> None:
    from arcmemo.benchmarks.aime import AimeBenchmark
    from arcmemo.benchmarks.arc import ArcBenchmark

    assert AimeBenchmark.defaults.write_signal == "consistency"
    assert ArcBenchmark.defaults.write_signal == "train"


def _step(concepts: list[str], verified: bool) -> Step:
    return Step(round=0, completion="", concepts=concepts, verified=verified)


def test_statistics_count_concepts_reselected_on_retries_once_per_task() -> None:
    memory = Memory(concepts=[Concept(name=n, kind="routine") for n in ("a", "b", "c")])
    result = TaskResult(
        task_id="t",
        selection=Selection(selector="llm", selected=["a"]),
        attempts=[Attempt(index=0, steps=[_step(["a"], False), _step(["a", "b"], True)])],
    )
    record_selection_stats(memory, result, confirmed=True)
    counts = {c.name: (c.stats.selected, c.stats.selected_solved) for c in memory.concepts}
    assert counts == {"a": (1, 1), "b": (1, 1), "c": (0, 0)}


def test_a_failed_model_call_during_abstraction_is_recorded_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    def respond(messages: Any) -> str:
        if "<pseudocode>" in messages[-1].content:
            raise ProviderError("boom", decision=RetryDecision.NO, status=400)
        return "```python\ndef transform(grid):\n    return grid\n```"

    cfg = config(
        tmp_path,
        data=str(ARC_DIR),
        memory=tmp_path / "m.json",
        update="online",
        update_every=1,
        attempts=1,
    )
    Memory().save(cfg.memory)  # type: ignore[arg-type]
    client = ModelClient(
        ScriptedProvider.from_script(respond),
        config=ModelConfig(cache=False, cache_write=False, request_retries=0),
    )
    from arcmemo.benchmarks.base import BENCHMARKS

    benchmark = BENCHMARKS.create("arc-agi-1")
    rundir = RunWriter(cfg.out)
    rundir.start(cfg)
    updater = ContinualUpdater(cfg, benchmark, Memory(), rundir, {"solver": client})
    task = benchmark.load(split=None, data=cfg.data, task_ids=["66e6c45b"], limit=None)[0]
    verified = TaskResult(
        task_id="66e6c45b",
        attempts=[
            Attempt(
                index=0,
                steps=[
                    Step(
                        round=0,
                        completion="x",
                        candidate="def transform(g): return g",
                        verified=True,
                    )
                ],
            )
        ],
    )
    batch = Batch(index=0, pass_number=0, task_ids=["66e6c45b"])
    commit = asyncio.run(updater.after_batch(batch, [(task, verified, True)]))
    benchmark.close()
    lines = (cfg.out / "abstraction.jsonl").read_text().splitlines()
    outcome = AbstractionOutcome.model_validate_json(lines[0])
    assert outcome.failures and outcome.failures[0].stage == "model call"
    assert "boom" in outcome.failures[0].error
    assert commit.processed == ["66e6c45b"] and list(commit.unwritten) == ["66e6c45b"]
    assert not commit.written  # nothing of it is in the memory: a rerun writes it again
    assert "boom" in commit.unwritten["66e6c45b"].error
    assert commit.snapshot == "batch-0000.delta.json"


def test_bootstrap_follows_the_runs_task_order_not_the_finishing_order(tmp_path: Path) -> None:
    cfg = config(tmp_path, data=str(ARC_DIR))
    rundir = RunWriter(cfg.out)
    rundir.start(cfg)
    order = ["e345f17b", "00576224", "66e6c45b"]
    (cfg.out / "task_order.json").write_text(json.dumps(order))
    step = Step(
        round=0, completion="", candidate="def transform(g):\n    return g\n", verified=True
    )
    for task_id in ["66e6c45b", "e345f17b", "00576224"]:  # finishing order
        rundir.append_result(TaskResult(task_id=task_id, attempts=[Attempt(index=0, steps=[step])]))
    items = items_from_run(cfg.out, "train")
    assert [i.task_id for i in items] == order


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


def test_statistics_look_every_name_up_in_one_index(monkeypatch: pytest.MonkeyPatch) -> None:
    from arcmemo.memory import schema
    from arcmemo.memory.edits import VERIFY_VARIABLE

    monkeypatch.delenv(VERIFY_VARIABLE)  # else every kept index is checked by a rebuild
    built: list[int] = []
    real = schema._positions
    monkeypatch.setattr(schema, "_positions", lambda cs: built.append(len(cs)) or real(cs))
    memory = Memory(concepts=[Concept(name=n, kind="routine") for n in ("a", "b", "c")])
    result = TaskResult(
        task_id="t",
        selection=Selection(selector="llm", selected=["a", "b", "c"]),
        attempts=[Attempt(index=0, steps=[_step(["a"], True)])],
    )
    record_selection_stats(memory, result, confirmed=True)
    assert [c.stats.selected for c in memory.concepts] == [1, 1, 1]
    assert built == [3]  # one index for every count (a count edits a concept, not the list)


def test_statistics_count_the_entries_of_prompts_the_solver_answered() -> None:
    """With --variants each variant's selection counts once the solver answered its prompt
    (an empty answer is an answer); an entry two variants chose counts once for the task. A
    variant whose prompt was too long for the window, and a retry whose call timed out,
    showed the solver nothing: their entries are not counted."""
    memory = Memory(concepts=[Concept(name=n, kind="routine") for n in ("a", "b", "c", "d")])
    timed_out = Step(round=1, completion="", error="timed out", error_kind="timeout")
    result = TaskResult(
        task_id="t",
        selection=Selection(selector="llm", selected=["a"]),
        variant_selections=[
            Selection(selector="llm", selected=["a", "b"]),
            Selection(selector="llm", selected=["c"]),
        ],
        attempts=[
            Attempt(
                index=0,
                variant=0,
                steps=[_step(["a"], False), timed_out.model_copy(update={"concepts": ["d"]})],
            ),
            Attempt(index=1, variant=1, steps=[_step(["a", "b"], False)]),
            Attempt(index=2, variant=2),  # its prompt was too long: no step
        ],
    )
    assert result.shown == ["a", "b"]
    record_selection_stats(memory, result, confirmed=True)
    counts = {c.name: (c.stats.selected, c.stats.selected_solved) for c in memory.concepts}
    assert counts == {"a": (1, 1), "b": (1, 1), "c": (0, 0), "d": (0, 0)}
