"""Inference mode: ARC Prize challenge files (test inputs without outputs) run unscored, the
train pairs still drive retries and memory writes, and the predictions are exported."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arcmemo.benchmarks.arc.data import ArcTaskError, load_path
from arcmemo.cli.main import cli
from arcmemo.core.records import TaskResult
from arcmemo.memory.schema import Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import run_benchmark
from tests.support.arc_solutions import QUADRANTS
from tests.support.paths import FIXTURES
from tests.support.scripted_models import loop_model

lm = loop_model()
TASKS = ["0c786b71", "e345f17b"]


def challenges(folder: Path, ids: list[str]) -> tuple[Path, dict[str, list]]:
    """An ARC Prize challenge file of ``ids`` (test outputs removed) and those outputs."""
    hidden, tasks = {}, {}
    for task_id in ids:
        raw = json.loads((FIXTURES / "arc" / "eval" / f"{task_id}.json").read_text())
        hidden[task_id] = [pair["output"] for pair in raw["test"]]
        tests = [{"input": pair["input"]} for pair in raw["test"]]
        tasks[task_id] = {"train": raw["train"], "test": tests}
    path = folder / "challenges.json"
    path.write_text(json.dumps(tasks))
    return path, hidden


def test_challenge_tasks_load_without_labels_and_mixed_tests_are_refused(tmp_path: Path) -> None:
    path, _ = challenges(tmp_path, TASKS)
    tasks = load_path(path)
    assert [t.id for t in tasks] == TASKS
    assert all(t.test_outputs is None and not t.labelled for t in tasks)
    assert tasks[1].expected == [None, None]
    raw = json.loads(path.read_text())
    raw["e345f17b"]["test"][0]["output"] = [[1]]
    path.write_text(json.dumps(raw))
    with pytest.raises(ArcTaskError, match=r"\['e345f17b'\]\.test: some test pairs have"):
        load_path(path)
    raw["e345f17b"]["train"][0].pop("output")
    path.write_text(json.dumps(raw))
    with pytest.raises(ArcTaskError, match=r"train\[0\]: no 'output'"):
        load_path(path)


def test_inference_run_is_unscored_retries_on_train_writes_memory_and_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))
    data, hidden = challenges(tmp_path, TASKS)
    memory_path = tmp_path / "memory.json"
    load_seed("arc").save(memory_path)
    model = lm.LoopModel(
        answers={
            # wrong on the train pairs first, so only the train check can ask for the retry
            ("solve", "0c786b71"): [lm.program_answer(lm.IDENTITY), lm.program_answer(QUADRANTS)],
            ("solve", "e345f17b"): lm.program_answer(lm.memorizing_program("e345f17b")),
            ("concepts", "0c786b71"): lm.yaml_block("- name: quadrant mirroring\n  kind: routine"),
            ("concepts", "e345f17b"): lm.yaml_block("- name: overlay halves\n  kind: structure"),
        },
        arc_ids=TASKS,
    )
    out = tmp_path / "run"
    config = RunConfig(
        benchmark="arc-agi-1", data=str(data), model="scripted:solver", attempts=1,
        feedback_rounds=1, memory=memory_path, selector="none", update="online", update_every=1,
        out=out,
    )  # fmt: skip
    summary = asyncio.run(
        run_benchmark(config, models={"solver": ModelClient(ScriptedProvider.from_script(model))})
    )
    rows = [TaskResult.model_validate_json(line) for line in (out / "results.jsonl").open()]
    assert {r.task_id: r.score for r in rows} == {"0c786b71": None, "e345f17b": None}
    by_id = {r.task_id: r for r in rows}
    assert [s.verified for s in by_id["0c786b71"].attempts[0].steps] == [False, True]
    on_disk = json.loads((out / "summary.json").read_text())
    for written in (summary, on_disk):
        assert written["mode"] == "inference mode: no labels"
        assert written["labels"] is False and written["n_unlabelled"] == 2
        for absent in ("score", "strict_score", "oracle@1", "n_solved", "write_precision"):
            assert absent not in written
    # the train signal wrote both train-verified solutions (one of them wrong on the tests)
    assert set(Memory.load(memory_path).solutions) == set(TASKS)

    exported = CliRunner().invoke(cli, ["export", "submission", str(out)])
    assert exported.exit_code == 0, exported.output
    entries = json.loads((out / "submission.json").read_text())
    assert entries["0c786b71"] == [{"attempt_1": hidden["0c786b71"][0], "attempt_2": [[0]]}]
    assert len(entries["e345f17b"]) == 2


def test_cli_says_inference_mode_and_prints_no_score(tmp_path: Path) -> None:
    data, _ = challenges(tmp_path, ["66e6c45b", "00576224"])
    out = tmp_path / "run"
    result = CliRunner().invoke(
        cli,
        ["run", "arc-agi-1", "--data", str(data), "--model",
         f"scripted:{FIXTURES / 'scripts' / 'arc_plan.py'}", "--out", str(out)],
        env={"COLUMNS": "300", "ARCMEMO_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "inference mode: no labels" in result.stderr
    assert any("tasks 2/2 (unscored: no labels)" in line for line in result.stderr.splitlines())
    table = [line for line in result.stderr.splitlines() if line.startswith("│")]
    assert table and not any(word in row for row in table for word in ("score", "solved"))
