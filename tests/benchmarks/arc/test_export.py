"""ARC Prize / Kaggle submission.json from a run."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from arcmemo.benchmarks.arc.export import submission
from arcmemo.cli.main import cli
from arcmemo.core.records import Attempt, Step, TaskResult

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


REQUIRED_METADATA = {
    "model", "provider", "start_timestamp", "end_timestamp", "choices", "kwargs", "usage",
    "cost", "task_id", "pair_index", "test_id",
}  # fmt: skip


def benchmarking_score(task_dir: Path, submission_dir: Path) -> float:
    """arc-agi-benchmarking's scorer rule (``ARCScorer.score_submission``), with its schema
    checks: a test pair counts when one of its attempts' answer equals the expected output
    (an empty answer counts as none), a task scores the share of its pairs, and the
    submission the mean over task files."""
    scores = []
    for path in sorted(submission_dir.glob("*.json")):
        expected = [t["output"] for t in json.loads((task_dir / path.name).read_text())["test"]]
        pairs = json.loads(path.read_text())
        assert isinstance(pairs, list) and len(pairs) == len(expected)
        right = 0
        for index, pair in enumerate(pairs):
            assert set(pair) <= {"attempt_1", "attempt_2"}
            for attempt in pair.values():
                metadata = attempt["metadata"]
                assert set(metadata) >= REQUIRED_METADATA, metadata.keys()
                assert metadata["pair_index"] == index and metadata["task_id"] == path.stem
                assert metadata["choices"][-1]["message"]["role"] == "assistant"
                usage = metadata["usage"]
                assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
                assert "reasoning_tokens" in usage["completion_tokens_details"]
                assert {"prompt_cost", "completion_cost", "total_cost"} <= set(metadata["cost"])
                start = datetime.fromisoformat(metadata["start_timestamp"])
                assert datetime.fromisoformat(metadata["end_timestamp"]) >= start
            if any(a["answer"] == expected[index] for a in pair.values() if a["answer"] != []):
                right += 1
        scores.append(right / len(expected))
    return sum(scores) / len(scores)


@pytest.mark.parametrize("attempts", [1, 2])
def test_arc_agi_benchmarking_export_scores_what_the_summary_says(
    tmp_path: Path, attempts: int
) -> None:
    tasks = ["66e6c45b", "00576224", "e345f17b", "bbb1b8b6", "68b67ca3"]
    out = tmp_path / "run"
    runner = CliRunner()
    ran = runner.invoke(
        cli,
        ["run", "arc-agi-1", "--data", str(FIXTURES / "arc" / "eval"), "--tasks",
         ",".join(tasks), "--model", f"scripted:{FIXTURES / 'scripts' / 'arc_plan.py'}",
         "--attempts", str(attempts), "--feedback-rounds", "0", "--out", str(out)],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    target = tmp_path / "submission"
    exported = runner.invoke(
        cli, ["export", "arc-agi-benchmarking", str(out), "--out", str(target)]
    )
    assert exported.exit_code == 0, exported.output
    assert sorted(p.stem for p in target.glob("*.json")) == sorted(tasks)
    summary = json.loads((out / "summary.json").read_text())
    assert 0 < summary["score"] < 1
    assert benchmarking_score(FIXTURES / "arc" / "eval", target) == pytest.approx(summary["score"])
    pairs = json.loads((target / "e345f17b.json").read_text())
    assert len(pairs) == 2 and len(pairs[0]) == attempts
    metadata = pairs[0]["attempt_1"]["metadata"]
    assert (metadata["provider"], metadata["test_id"]) == ("scripted", "run")
    # Timestamps, usage and cost are the run's own records of the attempt's call.
    (result,) = [
        json.loads(line)
        for line in (out / "results.jsonl").read_text().splitlines()
        if json.loads(line)["task_id"] == "e345f17b"
    ]
    steps = [a["steps"][0] for a in result["attempts"]]
    assert metadata["start_timestamp"] in {s["started_at"] for s in steps}
    assert metadata["usage"]["completion_tokens"] in {
        s["usage"]["completion_tokens"] for s in steps
    }


def test_arc_agi_benchmarking_export_refuses_a_file_as_out(tmp_path: Path) -> None:
    out = tmp_path / "run"
    runner = CliRunner()
    ran = runner.invoke(
        cli,
        ["run", "arc-agi-1", "--data", str(FIXTURES / "arc" / "eval"), "--tasks", "66e6c45b",
         "--model", f"scripted:{FIXTURES / 'scripts' / 'arc_plan.py'}", "--out", str(out)],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    file = tmp_path / "taken"
    file.write_text("x")
    result = runner.invoke(cli, ["export", "arc-agi-benchmarking", str(out), "--out", str(file)])
    assert result.exit_code != 0 and "Traceback" not in result.output
