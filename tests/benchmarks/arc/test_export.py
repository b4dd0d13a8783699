"""ARC Prize / Kaggle submission.json from a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arcmemo.benchmarks.arc.export import submission
from arcmemo.cli.main import cli
from arcmemo.records import Attempt, Step, TaskResult

A, B, C = [[1]], [[2]], [[3]]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def attempt(index: int, predictions: list, verified: bool) -> Attempt:
    step = Step(round=0, completion="", prediction=predictions, verified=verified)
    return Attempt(index=index, steps=[step])


def test_train_verified_attempts_go_first_and_duplicates_count_once() -> None:
    result = TaskResult(
        task_id="t",
        attempts=[
            attempt(0, [A, A], verified=False),
            attempt(1, [B, B], verified=True),
            attempt(2, [B, C], verified=False),
        ],
    )
    (entry,) = submission([result]).values()
    assert entry == [
        {"attempt_1": B, "attempt_2": A},  # the verified program first, then attempt 0
        {"attempt_1": B, "attempt_2": A},
    ]


def test_missing_or_invalid_predictions_are_padded_so_both_keys_exist() -> None:
    result = TaskResult(
        task_id="t",
        attempts=[attempt(0, [None], verified=False), attempt(1, [[[99]]], verified=False)],
    )
    assert submission([result]) == {"t": [{"attempt_1": [[0]], "attempt_2": [[0]]}]}
    empty = TaskResult(task_id="u")  # a task whose calls all failed still gets an entry
    assert submission([empty]) == {"u": [{"attempt_1": [[0]], "attempt_2": [[0]]}]}


def test_export_submission_from_a_real_run(tmp_path: Path) -> None:
    script = FIXTURES / "scripts" / "arc_plan.py"
    out = tmp_path / "run"
    runner = CliRunner()
    ran = runner.invoke(
        cli,
        ["run", "arc-agi-1", "--data", str(FIXTURES / "arc" / "eval"), "--tasks",
         "66e6c45b,e345f17b", "--model", f"scripted:{script}", "--out", str(out)],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    exported = runner.invoke(cli, ["export", "submission", str(out)])
    assert exported.exit_code == 0, exported.output
    written = json.loads((out / "submission.json").read_text())
    assert list(written) == ["66e6c45b", "e345f17b"]
    assert len(written["e345f17b"]) == 2  # one entry per test input
    assert all(set(t) == {"attempt_1", "attempt_2"} for e in written.values() for t in e)
    task = json.loads((FIXTURES / "arc" / "eval" / "66e6c45b.json").read_text())
    assert written["66e6c45b"][0]["attempt_1"] == task["test"][0]["output"]


def test_export_refuses_a_run_that_is_not_arc(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(
        json.dumps({"benchmark": "aime", "model": "scripted:x", "out": str(tmp_path)})
    )
    result = CliRunner().invoke(cli, ["export", "submission", str(tmp_path)])
    assert result.exit_code == 1 and "ARC Prize submissions are for arc-agi runs" in result.output


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))
