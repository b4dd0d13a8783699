"""``arcmemo train`` end to end with a scripted model on real ARC-AGI-1 training tasks.

The model (experiments/training/chain_model.py) solves the validation task only while the
concept the second epoch writes is shown, and fails it again once the third epoch writes a
misleading concept; the sandbox, the checks, the memory writes and the runs are arcmemo's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli

MODEL = Path(__file__).resolve().parents[2] / "experiments" / "training" / "chain_model.py"
TRAIN = "67a3c6ac,68b16354,74dd1130"
VAL = "3c9b0459"


def train_args(out: Path, *extra: str, epochs: int = 3, val: str = VAL) -> list[str]:
    return [
        "train", "arc-agi-1",
        "--split", "training", "--tasks", TRAIN,
        "--val-split", "training", "--val-tasks", val,
        "--epochs", str(epochs),
        "--model", f"scripted:{MODEL}",
        "--select", "all",
        "--update-every", "10",
        "--attempts", "2",
        "--feedback-rounds", "0",
        "--concurrency", "1",
        "--sandbox", "process",
        "--cache-dir", str(out / "cache"),
        "--out", str(out / "train"),
        *extra,
    ]  # fmt: skip


def invoke(args: list[str], log: Path) -> Any:
    return CliRunner().invoke(cli, args, env={"TRAIN_MODEL_LOG": str(log)})


def model_calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def record(out: Path) -> dict[str, Any]:
    loaded = json.loads((out / "train" / "training.json").read_text())
    assert isinstance(loaded, dict)
    return loaded


def without_stamps(training: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in training.items() if k != "updated_at"}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("trained")
    result = invoke(train_args(out), out / "model.log")
    assert result.exit_code == 0, result.output
    yield out


@pytest.mark.slow
def test_validation_curve_and_best_memory(trained: Path) -> None:
    training = record(trained)
    scores = [e["validation"]["score"] for e in training["epochs"]]
    assert [e["epoch"] for e in training["epochs"]] == [0, 1, 2, 3]
    assert scores == [0.0, 0.0, 1.0, 0.0]
    assert training["epochs"][2]["validation"]["metric"] == "oracle@2"
    assert training["epochs"][2]["validation"]["metrics"]["oracle@2"] == 1.0
    assert training["epochs"][2]["validation"]["spread"] == 0.0  # both attempts agree
    # the third epoch's misleading concept does not make its memory the best
    assert training["best_epoch"] == 2 and training["complete"]
    best = (trained / "train" / "best-memory.json").read_text()
    assert best == (trained / "train" / "memory" / "epoch-002.json").read_text()
    assert best != (trained / "train" / "memory" / "epoch-003.json").read_text()
    assert [e["added"] for e in training["epochs"]] == [
        [],
        ["mirror columns"],
        ["mirror rows"],
        ["swap axes"],
    ]
    assert [e["memory_size"]["concepts"] for e in training["epochs"]] == [0, 1, 2, 3]
    # --revisit unsolved (the default): a task written once is not attempted again
    assert [e["train"] and e["train"]["n_tasks"] for e in training["epochs"]] == [None, 3, 2, 1]
    assert training["epochs"][1]["train"]["roles"]["solver"]["calls"] == 3
    # validation never writes: no validation run holds memory snapshots of its own
    for epoch in training["epochs"]:
        assert not (trained / "train" / epoch["validation"]["run_dir"] / "memory").exists()


@pytest.mark.slow
def test_validation_never_sees_its_task_written(trained: Path) -> None:
    calls = model_calls(trained / "model.log")
    assert {c["stage"] for c in calls if c["task"] == VAL} == {"solve"}
    # epoch 2's train pass showed 68b16354 the concept epoch 1 wrote
    assert ["mirror columns"] in [c["shown"] for c in calls if c["task"] == "68b16354"]


@pytest.mark.slow
def test_epoch_runs_are_ordinary_run_directories(trained: Path) -> None:
    run = trained / "train" / "epoch-002" / "validation"
    assert CliRunner().invoke(cli, ["report", str(run)]).exit_code == 0
    assert (run / "report.html").is_file()


@pytest.mark.slow
def test_table_of_a_training_pairs_best_with_epoch_zero(trained: Path) -> None:
    result = CliRunner().invoke(cli, ["table", str(trained / "train")])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| 0 | epoch")]
    assert [row.split("|")[2].strip() for row in rows] == [
        "epoch 0",
        "epoch 1",
        "epoch 2 (best)",
        "epoch 3",
    ]
    assert "Paired comparison epoch 2 (best) − epoch 0 on 1 tasks" in result.output
    assert "3c9b0459 +100.00" in result.output


@pytest.mark.slow
def test_report_of_a_training_shows_the_learning_curve(trained: Path) -> None:
    result = CliRunner().invoke(cli, ["report", str(trained / "train")])
    assert result.exit_code == 0, result.output
    page = (trained / "train" / "report.html").read_text()
    assert "learning curve (best: epoch 2)" in page and "memory size" in page
    assert "<td>2 (best)</td>" in page and "<td>1.000 ± 0.000</td>" in page
    svg = (trained / "train" / "learning-curve.svg").read_text()
    assert svg.startswith("<svg") and "validation oracle@2" in svg


@pytest.mark.slow
def test_kill_during_epoch_two_then_resume(trained: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "TRAIN_MODEL_LOG": str(tmp_path / "model.log"),
        "TRAIN_MODEL_KILL": str(tmp_path / "killed"),
    }
    command = [sys.executable, "-m", "arcmemo", *train_args(tmp_path)]
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == -signal.SIGKILL, first.stderr[-2000:]
    assert (tmp_path / "killed").exists()
    assert [e["epoch"] for e in record(tmp_path)["epochs"]] == [0, 1]
    second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-2000:]
    assert without_stamps(record(tmp_path)) == without_stamps(record(trained))
    # every answer the model gave, once: the same calls as the uninterrupted training
    answered = Counter(json.dumps(c, sort_keys=True) for c in model_calls(tmp_path / "model.log"))
    reference = Counter(json.dumps(c, sort_keys=True) for c in model_calls(trained / "model.log"))
    assert answered == reference
    fresh = [
        json.loads(line)
        for path in (tmp_path / "train").glob("epoch-*/*/calls.jsonl")
        for line in path.read_text().splitlines()
    ]
    assert not [c for c in fresh if c["cache_hit"]]


def test_overlap_is_one_line_and_calls_nothing(tmp_path: Path) -> None:
    result = invoke(train_args(tmp_path, val="3c9b0459,68b16354"), tmp_path / "model.log")
    assert result.exit_code == 1
    message = result.output.strip()
    assert len(message.splitlines()) == 1 and "68b16354" in message and "overlap" in message
    assert not (tmp_path / "model.log").exists()
    assert not (tmp_path / "train").exists()


def test_dry_run_estimates_every_epoch(tmp_path: Path) -> None:
    result = invoke(train_args(tmp_path, "--dry-run", epochs=2), tmp_path / "model.log")
    assert result.exit_code == 0, result.output
    rows = [line.split("│")[1:3] for line in result.output.splitlines() if "│" in line]
    seen = {(epoch.strip(), name.strip()) for epoch, name in rows}
    assert {("0", "validation"), ("1", "train"), ("1", "validation"), ("2", "train"),
            ("2", "validation")} <= seen  # fmt: skip
    assert ("0", "train") not in seen
    assert not (tmp_path / "model.log").exists()
    assert not (tmp_path / "train" / "training.json").exists()


@pytest.mark.slow
def test_patience_stops_early(tmp_path: Path) -> None:
    result = invoke(train_args(tmp_path, "--patience", "1"), tmp_path / "model.log")
    assert result.exit_code == 0, result.output
    training = record(tmp_path)
    assert [e["epoch"] for e in training["epochs"]] == [0, 1]
    assert "early stop after epoch 1" in training["stopped"]
    assert training["best_epoch"] == 0


@pytest.mark.slow
def test_revisit_all_keeps_a_task_from_its_own_concepts(tmp_path: Path) -> None:
    result = invoke(train_args(tmp_path, "--revisit", "all", epochs=2), tmp_path / "model.log")
    assert result.exit_code == 0, result.output
    solves = [c for c in model_calls(tmp_path / "model.log") if c["task"] == "67a3c6ac"]
    assert len([c for c in solves if c["stage"] == "solve"]) == 2  # once per epoch
    # the leakage guard: its own concept (written in epoch 1) is never shown to it
    assert all("mirror columns" not in c["shown"] for c in solves)
    assert record(tmp_path)["epochs"][2]["train"]["n_tasks"] == 3
