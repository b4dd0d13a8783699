"""``arcmemo run --batch`` end to end: ARC fixture tasks against the fake batch server, through
the real OpenAI and Anthropic SDKs, compared with the same run made synchronously."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli
from arcmemo.models.accounting import CallRecord
from arcmemo.models.batch import BatchProgress, pending_batches, read_batch_log
from arcmemo.models.prices import BATCH_DISCOUNT, PriceTable
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.pipeline import run_benchmark
from tests.support.fake_batch_server import FakeBatchServer

ARC_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "arc" / "eval"
MEMORY = ARC_DIR.parents[1] / "memory" / "published_v0.json"
TASKS = ["66e6c45b", "00576224", "68b67ca3"]
QUICK = {"batch_window": 0.2, "batch_poll": 0.01}


class Killed(Exception):
    """Raised from the progress callback: the run dies with its batch submitted."""


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batch-0123456789")
    for variable in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ARCMEMO_PRICES"):
        monkeypatch.delenv(variable, raising=False)


def config(
    server: FakeBatchServer, out: Path, model: str, *, batch: bool, **changes: Any
) -> RunConfig:
    openai = model.startswith("openai:")
    return RunConfig.model_validate(
        {
            "benchmark": "arc-agi-1",
            "data": str(ARC_DIR),
            "tasks": TASKS,
            "model": model,
            "base_url": server.openai_base_url if openai else server.url,
            # Anthropic's simulated prompt cache depends on arrival order; leave it out.
            "model_args": {} if openai else {"prompt_cache": "false"},
            "attempts": 2,
            "feedback_rounds": 1,
            "out": out / "run",
            "models": {"cache_dir": out / "cache"},
            "batch": batch,
        }
        | QUICK
        | changes
    )


def run(cfg: RunConfig, **options: Any) -> dict[str, Any]:
    return asyncio.run(run_benchmark(cfg, **options))


def results(out: Path) -> list[dict[str, Any]]:
    """The results without what differs by design: each step's call times and price (a batch
    answer's is the batch price)."""
    lines = (out / "run" / "results.jsonl").read_text().splitlines()
    rows = sorted((json.loads(line) for line in lines), key=lambda r: r["task_id"])
    for row in rows:
        for step in (s for a in row["attempts"] for s in a["steps"]):
            for key in ("started_at", "finished_at", "cost_usd"):
                step.pop(key)
    return rows


def call_records(out: Path) -> list[CallRecord]:
    return RunDirectory(out / "run").calls()


def call_lines(out: Path) -> list[dict[str, Any]]:
    """The call log without what differs between any two runs (times) or by design
    (the batch flag and its price)."""
    drop = {"ts", "call_id", "latency_s", "batch", "cost_usd", "status"}
    lines = [r.model_dump(exclude=drop) for r in call_records(out)]
    return sorted(lines, key=lambda line: json.dumps(line, sort_keys=True))


@pytest.mark.parametrize(
    ("model", "schedule"),
    [
        ("openai:gpt-4o-mini", "tasks"),
        ("anthropic:claude-sonnet-4-5", "tasks"),
        # One schedule batch per pass: first tries, then the pass of retries.
        ("openai:gpt-4o-mini", "passes"),
    ],
)
def test_batch_run_equals_the_synchronous_run(model: str, schedule: str, tmp_path: Path) -> None:
    with FakeBatchServer() as server:
        plain = run(config(server, tmp_path / "sync", model, batch=False, schedule=schedule))
        assert server.batches_created == 0
        batched = run(config(server, tmp_path / "batch", model, batch=True, schedule=schedule))
        # First tries, then the retries: one provider batch per round, no synchronous calls.
        assert server.batches_created == 2
        synchronous = len(server.requests)
        assert results(tmp_path / "batch") == results(tmp_path / "sync")
        assert call_lines(tmp_path / "batch") == call_lines(tmp_path / "sync")
        assert all(r.batch for r in call_records(tmp_path / "batch"))
        assert batched["n_solved"] == plain["n_solved"] and batched["calls"] == plain["calls"]
        # The batch run left no synchronous request behind it.
        assert len(server.requests) == synchronous
        # A rerun in batch mode finds everything done and submits nothing.
        run(config(server, tmp_path / "batch", model, batch=True, schedule=schedule))
        assert server.batches_created == 2


def test_the_summary_cost_is_the_half_price_of_the_price_table(tmp_path: Path) -> None:
    model = "openai:gpt-4o-mini"
    prices = PriceTable.load()
    assert prices.price_for(model) is not None
    with FakeBatchServer() as server:
        plain = run(config(server, tmp_path / "sync", model, batch=False))
        batched = run(config(server, tmp_path / "batch", model, batch=True))
    for record in call_records(tmp_path / "batch"):
        full = prices.cost_usd(model, record.tokens)
        assert record.batch and record.cost_usd == pytest.approx(full * BATCH_DISCOUNT)
    assert plain["cost_usd"] > 0
    assert batched["cost_usd"] == pytest.approx(plain["cost_usd"] * BATCH_DISCOUNT)
    stages = batched["stages"]
    assert sum(stage["batch_calls"] for stage in stages.values()) == batched["calls"]


@pytest.mark.slow  # kill and resume
@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"])
def test_a_batch_run_killed_after_submitting_resumes_without_resubmitting(
    model: str, tmp_path: Path
) -> None:
    def die_once(progress: BatchProgress) -> None:
        raise Killed(progress.batch_id)

    with FakeBatchServer() as server:
        run(config(server, tmp_path / "sync", model, batch=False))
        killed = config(server, tmp_path / "batch", model, batch=True)
        with pytest.raises(Killed):
            run(killed, batch_progress=die_once)
        assert server.batches_created == 1
        log = RunDirectory(killed.out).batches_path
        assert len(pending_batches(read_batch_log(log), model)) == 1
        assert not (killed.out / "results.jsonl").exists() or results(tmp_path / "batch") == []
        run(killed)
        # The first-tries batch was awaited, not sent again; only the retries' batch is new.
        assert server.batches_created == 2
        assert pending_batches(read_batch_log(log), model) == []
        assert results(tmp_path / "batch") == results(tmp_path / "sync")


def test_cli_batch_on_a_model_without_batches_fails_in_one_line_before_starting(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    script = tmp_path / "answers.json"
    script.write_text('{"*": "no code"}')
    scripted = runner.invoke(
        cli,
        ["run", "arc-agi-1", "--data", str(ARC_DIR), "--tasks", TASKS[0], "--batch",
         "--model", f"scripted:{script}", "--out", str(tmp_path / "scripted")],
    )  # fmt: skip
    assert scripted.exit_code == 1
    assert "has no batch API" in scripted.output and scripted.output.count("\n") == 1
    assert not (tmp_path / "scripted" / "config.json").exists()  # failed before starting
    with FakeBatchServer(batch_api=False) as server:
        generic = runner.invoke(
            cli,
            ["run", "arc-agi-1", "--data", str(ARC_DIR), "--tasks", TASKS[0], "--batch",
             "--model", "openai:qwen", "--base-url", server.openai_base_url,
             "--out", str(tmp_path / "generic")],
        )  # fmt: skip
    assert generic.exit_code == 1
    assert "has no Batch API" in generic.output and "HTTP 404" in generic.output
    assert generic.output.count("\n") == 1
    assert not (tmp_path / "generic" / "config.json").exists()


@pytest.mark.slow  # two online runs, one through provider batches: about 7 s
def test_an_online_run_in_batch_mode_equals_the_synchronous_one(tmp_path: Path) -> None:
    """Selection, solving and retries of a continual run (memory updated every 2 tasks) go
    out batch by batch of the schedule; the results are those of the synchronous run."""
    model = "openai:gpt-4o-mini"
    summaries = {}
    with FakeBatchServer() as server:
        for name, batch in (("sync", False), ("batch", True)):
            memory = tmp_path / f"{name}-memory.json"
            shutil.copy(MEMORY, memory)
            online = {"memory": str(memory), "update": "online", "update_every": 2}
            summaries[name] = run(config(server, tmp_path / name, model, batch=batch, **online))
        # Two schedule batches per pass, each with its selection and its solving batch.
        assert server.batches_created >= 4
    assert results(tmp_path / "batch") == results(tmp_path / "sync")
    assert call_lines(tmp_path / "batch") == call_lines(tmp_path / "sync")
    assert all(r.batch for r in call_records(tmp_path / "batch"))
    assert any("--batch with --update online" in w for w in summaries["batch"]["warnings"])


def test_online_runs_say_that_batches_follow_the_memory_updates(tmp_path: Path) -> None:
    from arcmemo.run.warnings import run_warnings

    base = {
        "benchmark": "arc-agi-1",
        "model": "openai:gpt-4o-mini",
        "out": tmp_path,
        "memory": tmp_path / "memory.json",
        "update": "online",
        "update_every": 5,
    }
    online = RunConfig.model_validate(base | {"batch": True})
    (warning,) = [w for w in run_warnings(online) if "--batch" in w]
    assert "every 5 tasks" in warning
    assert not [w for w in run_warnings(RunConfig.model_validate(base)) if "--batch" in w]
    fixed = RunConfig.model_validate(base | {"batch": True, "update": "none"})
    assert not [w for w in run_warnings(fixed) if "--batch" in w]


def test_a_batch_dry_run_prints_the_half_price(tmp_path: Path) -> None:
    from arcmemo.run.pipeline import dry_run

    out = tmp_path / "dry"
    result = CliRunner().invoke(
        cli,
        ["run", "arc-agi-1", "--data", str(ARC_DIR), "--tasks", ",".join(TASKS),
         "--model", "openai:o4-mini", "--out", str(out), "--dry-run", "--batch"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    estimate = asyncio.run(
        dry_run(
            RunConfig.model_validate(
                {"benchmark": "arc-agi-1", "data": str(ARC_DIR), "tasks": TASKS,
                 "model": "openai:o4-mini", "out": out}
            )
        )
    ).estimate  # fmt: skip
    assert estimate.cost_usd is not None and estimate.cost_usd.high > 0
    low, high = (
        value * BATCH_DISCOUNT for value in (estimate.cost_usd.low, estimate.cost_usd.high)
    )
    printed = " ".join(result.output[result.output.index("with --batch:") :].split())
    assert printed.startswith(f"with --batch: ${low:,.2f} - ${high:,.2f} (saves")


@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"])
def test_cli_batches_lists_a_runs_batches_and_cancels_them(model: str, tmp_path: Path) -> None:
    """`arcmemo batches RUN` asks the provider where each recorded batch stands; --cancel
    cancels the running ones through the provider's cancel endpoint."""

    def die(progress: BatchProgress) -> None:
        raise Killed(progress.batch_id)

    cli_runner = CliRunner()
    with FakeBatchServer() as server:
        server.hold_batches()
        killed = config(server, tmp_path, model, batch=True)
        with pytest.raises(Killed):
            run(killed, batch_progress=die)
        (batch_id,) = server.batch.batches
        listed = cli_runner.invoke(cli, ["batches", str(killed.out), "--json"])
        assert listed.exit_code == 0, listed.output
        (row,) = [json.loads(line) for line in listed.output.splitlines()]
        # Three tasks of two samples: one request each, or one per sample (Anthropic).
        requests = 3 if model.startswith("openai:") else 6
        assert (row["batch_id"], row["model"], row["requests"]) == (batch_id, model, requests)
        assert row["state"] == "in_progress" and not row["collected"] and row["created"]
        table = cli_runner.invoke(cli, ["batches", str(killed.out)])
        assert batch_id in table.output and "in_progress" in table.output
        canceled = cli_runner.invoke(cli, ["batches", str(killed.out), batch_id, "--cancel"])
        assert canceled.exit_code == 0, canceled.output
        assert server.batch.canceled == [batch_id]
        assert "cancel sent" in canceled.output
        again = cli_runner.invoke(cli, ["batches", str(killed.out), "--json"])
        assert json.loads(again.output)["state"] in {"cancelled", "ended"}
        # An ended batch is not canceled again; an unknown id is a one-line error.
        cli_runner.invoke(cli, ["batches", str(killed.out), "--cancel"])
        assert server.batch.canceled == [batch_id]
        unknown = cli_runner.invoke(cli, ["batches", str(killed.out), "batch_nope", "--cancel"])
        assert unknown.exit_code == 1 and "no batch batch_nope" in unknown.output
        assert unknown.output.count("\n") == 1
    nothing = cli_runner.invoke(cli, ["batches", str(tmp_path)])
    assert nothing.exit_code == 1 and "not a run directory" in nothing.output


def test_cli_batch_poll_window_and_keep_files_are_run_settings(tmp_path: Path) -> None:
    with FakeBatchServer() as server:
        result = CliRunner().invoke(
            cli,
            ["run", "arc-agi-1", "--data", str(ARC_DIR), "--tasks", TASKS[0], "--batch",
             "--model", "openai:gpt-4o-mini", "--base-url", server.openai_base_url,
             "--batch-poll", "0.01", "--batch-window", "0.1", "--batch-keep-files",
             "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "run")],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert server.batches_created >= 1 and server.batch.deleted == []
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert (saved["batch_poll"], saved["batch_window"], saved["batch_keep_files"]) == (
        0.01,
        0.1,
        True,
    )
    help_text = CliRunner().invoke(cli, ["run", "--help"]).output
    assert "--batch-poll SECONDS" in help_text and "--batch-keep-files" in help_text
