"""The run directory: config checks on resume, durable results, torn lines, call-log totals."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from arcmemo.abstraction.outcome import AbstractionOutcome
from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.core.records import TaskResult
from arcmemo.core.tokens import Usage
from arcmemo.memory.store import dump_memory
from arcmemo.models.accounting import CallRecord
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import BatchCommit, RunDirError, Schedule
from arcmemo.run.directory.writer import RunWriter
from arcmemo.selection import SELECTORS
from tests.support.paths import FIXTURES


def config(out: Path, **changes: object) -> RunConfig:
    fields: dict[str, object] = {
        "benchmark": "arc-agi-1",
        "split": "evaluation",
        "model": "scripted:plan.py",
        "attempts": 2,
        "feedback_rounds": 2,
        "out": out,
    }
    return RunConfig.model_validate(fields | changes)


def result(task_id: str, solved: bool = False) -> TaskResult:
    return TaskResult(task_id=task_id, solved=solved, score=float(solved))


def test_start_writes_the_config(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path / "run")
    started = rundir.start(config(rundir.path))
    assert rundir.read_config() == started
    saved = json.loads(rundir.config_path.read_text())
    solver = saved["roles"]["solver"]
    assert solver["provider"]["name"] == "scripted" and solver["model"] == "plan.py"
    assert saved["attempts"] == 2
    assert saved["versions"]["arcmemo"] is not None


def test_a_component_option_added_since_the_run_was_saved_reads_as_its_default(
    tmp_path: Path,
) -> None:
    # A run saved before the ARC benchmark had its stop_after_failure option resumes as the
    # same run: the option's default is what that run did. A saved option that differs
    # still counts.
    rundir = RunWriter(tmp_path / "run")
    spelled = BENCHMARKS.spec("arc-agi-1", {"layout": "arcmemo"})
    assert spelled.options["stop_after_failure"] is True
    before = {k: v for k, v in spelled.options.items() if k != "stop_after_failure"}
    rundir.start(config(rundir.path, benchmark={"name": "arc-agi-1", "options": before}))
    saved = json.loads(rundir.config_path.read_text())
    assert "stop_after_failure" not in saved["benchmark"]["options"]
    assert rundir.start(config(rundir.path, benchmark=spelled)).forced_resume == []
    changed = BENCHMARKS.spec("arc-agi-1", {"layout": "arcmemo", "stop_after_failure": False})
    with pytest.raises(RunDirError, match="benchmark"):
        rundir.start(config(rundir.path, benchmark=changed))


@pytest.mark.parametrize(
    ("setting", "registry", "name", "option"),
    [
        ("benchmark", BENCHMARKS, "arc-agi-1", "layout"),
        ("selector", SELECTORS, "llm", "view"),
        ("selector", SELECTORS, "all", "view"),
        ("selector", SELECTORS, "embedding", "view"),
        ("selector", SELECTORS, "behaviour", "view"),
    ],
)
def test_a_run_saved_before_the_paper_default_resumes_as_arcmemo(
    tmp_path: Path, setting: str, registry: Any, name: str, option: str
) -> None:
    # The layout and the llm selector's view came with the paper's structure as an
    # alternative and became the paper's by default later, the other selectors' view later
    # still: a run that saved neither did what arcmemo now names "arcmemo", so it resumes
    # with that and not with today's default.
    rundir = RunWriter(tmp_path / "run")
    arcmemo = registry.spec(name, {option: "arcmemo"})
    assert registry.spec(name).options[option] == "paper"  # today's default
    before = {k: v for k, v in arcmemo.options.items() if k != option}
    rundir.start(config(rundir.path, **{setting: {"name": name, "options": before}}))
    assert rundir.start(config(rundir.path, **{setting: arcmemo})).forced_resume == []
    with pytest.raises(RunDirError, match=setting):
        rundir.start(config(rundir.path, **{setting: registry.spec(name)}))


def test_resume_keeps_the_first_start_time(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    first = datetime(2025, 1, 1, tzinfo=timezone.utc)
    rundir.start(config(tmp_path, created_at=first))
    again = rundir.start(config(tmp_path, created_at=datetime.now(timezone.utc)))
    assert again.created_at == first
    assert rundir.read_config().created_at == first  # type: ignore[union-attr]


def test_a_different_config_is_refused_naming_the_field(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    rundir.start(config(tmp_path))
    with pytest.raises(RunDirError) as caught:
        rundir.start(config(tmp_path, attempts=3))
    message = str(caught.value)
    assert "attempts: 2 -> 3" in message
    assert str(tmp_path) in message and "--out" in message
    assert "feedback_rounds" not in message
    assert rundir.read_config().attempts == 2  # type: ignore[union-attr]


def test_fields_that_do_not_change_results_may_differ(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    rundir.start(config(tmp_path))
    rundir.start(config(tmp_path, limit=3, tasks=["00576224"]))


def test_a_moved_endpoint_is_the_same_run(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    rundir.start(config(tmp_path, base_url="http://localhost:8000/v1"))
    rundir.start(config(tmp_path, base_url="http://127.0.0.1:8001/v1"))  # no error


def test_changed_prompts_are_refused_and_a_forced_resume_is_recorded(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    rundir.start(config(tmp_path, fingerprints={"prompts": "a"}))
    with pytest.raises(RunDirError, match="prompts: the prompt templates changed"):
        rundir.start(config(tmp_path, fingerprints={"prompts": "b"}))
    forced = rundir.start(config(tmp_path, fingerprints={"prompts": "b"}), force=True)
    assert forced.forced_resume == ["prompts: the prompt templates changed"]
    assert rundir.read_config().forced_resume == forced.forced_resume  # type: ignore[union-attr]


def test_a_broken_config_file_is_named(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    rundir.config_path.write_text('{"benchmark": "arc-agi-1"}')
    with pytest.raises(RunDirError, match=r"config\.json"):
        rundir.start(config(tmp_path))


def test_results_are_appended_and_read_back(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    assert rundir.finished() == {}
    rundir.append_result(result("a", solved=True))
    rundir.append_result(result("b"))
    finished = rundir.finished()
    assert sorted(finished) == ["a", "b"] and finished["a"].solved
    assert rundir.results_path.read_text().count("\n") == 2


def test_a_torn_last_line_is_skipped_by_readers_and_cut_when_the_run_resumes(
    tmp_path: Path,
) -> None:
    rundir = RunWriter(tmp_path)
    rundir.start(config(tmp_path))
    rundir.append_result(result("a"))
    intact = rundir.results_path.stat().st_size
    with open(rundir.results_path, "a") as handle:
        handle.write(result("b").model_dump_json()[:40])
    torn = rundir.results_path.stat().st_size
    assert sorted(RunDirectory(tmp_path).finished()) == ["a"]
    assert rundir.results_path.stat().st_size == torn  # reading changes nothing
    rundir.start(config(tmp_path))
    assert rundir.results_path.stat().st_size == intact
    rundir.append_result(result("b"))
    assert sorted(rundir.finished()) == ["a", "b"]


def test_an_abstraction_outcome_is_never_glued_onto_a_torn_line(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    rundir.append_abstraction([AbstractionOutcome(task_id="a", format="ps")])
    with open(rundir.abstraction_path, "a") as handle:
        handle.write(AbstractionOutcome(task_id="b", format="ps").model_dump_json()[:20])
    rundir.append_abstraction([AbstractionOutcome(task_id="c", format="ps")])
    assert [o.task_id for o in RunDirectory(tmp_path).abstraction_outcomes()] == ["a", "c"]


def test_a_complete_line_that_lost_its_newline_is_redone(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    rundir.append_result(result("a"))
    with open(rundir.results_path, "a") as handle:
        handle.write(result("b").model_dump_json())  # killed before the newline
    assert sorted(rundir.finished()) == ["a"]
    rundir.start(config(tmp_path))
    rundir.append_result(result("b"))
    rundir.append_result(result("c"))
    assert sorted(rundir.finished()) == ["a", "b", "c"]


def test_a_corrupt_line_in_the_middle_is_an_error_naming_the_line(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    rundir.append_result(result("a"))
    with open(rundir.results_path, "a") as handle:
        handle.write("not json\n")
    rundir.append_result(result("b"))
    with pytest.raises(RunDirError, match=r"results\.jsonl, line 2"):
        rundir.finished()


def test_summary_is_written_as_json(tmp_path: Path) -> None:
    from arcmemo.run.summary_file import SUMMARY_FORMAT, RunSummary

    rundir = RunWriter(tmp_path)
    summary = RunSummary(benchmark="aime", model="m", n_tasks=1, memory=str(tmp_path))
    rundir.write_summary(summary)
    written = json.loads(rundir.summary_path.read_text())
    assert written["memory"] == str(tmp_path) and written["format_version"] == SUMMARY_FORMAT
    assert RunSummary.model_validate(written) == summary


def _record(stage: str, *, n: int, hits: int, prompt: int, cost: float | None) -> str:
    return (
        CallRecord(
            ts="2025-01-01T00:00:00Z",
            stage=stage,
            task_id="t",
            model="scripted:x",
            n=n,
            cache_hits=hits,
            cache_hit=hits == n,
            tokens=Usage(prompt_tokens=prompt, completion_tokens=1),
            cost_usd=cost,
            latency_s=0.1,
            attempts=0 if hits == n else 1,
        ).model_dump_json()
        + "\n"
    )


def test_usage_from_call_log_sums_stages_and_skips_torn_lines(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    log.write_text(
        _record("solve", n=2, hits=0, prompt=100, cost=0.25)
        + _record("retry", n=1, hits=0, prompt=40, cost=0.5)
        + _record("solve", n=2, hits=2, prompt=0, cost=0.0)
        + '{"ts": "2025'
    )
    usage = RunDirectory(tmp_path).usage()
    assert usage.total.calls == 3
    assert usage.total.samples == 5
    assert usage.total.cache_hits == 2
    assert usage.total.requests == 2
    assert usage.total.tokens.prompt_tokens == 140
    assert usage.total.cost_usd == pytest.approx(0.75)
    assert sorted(usage.stages) == ["retry", "solve"]
    assert usage.stages["solve"].calls == 2
    assert usage.models == ["scripted:x"]
    assert RunDirectory(tmp_path / "none").usage().total.calls == 0


def test_unknown_cost_makes_the_total_unknown(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    log.write_text(
        _record("solve", n=1, hits=0, prompt=1, cost=0.1)
        + _record("solve", n=1, hits=0, prompt=1, cost=None)
    )
    assert RunDirectory(tmp_path).usage().total.cost_usd is None


# -- batched runs -----------------------------------------------------------------------------


def test_what_an_unfinished_batch_appended_is_cut_when_the_run_resumes(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    rundir.start(config(tmp_path))
    rundir.write_schedule(
        Schedule(schedule="passes", batch_size=1, task_ids=["a", "b"], batches=[])
    )
    rundir.append_results([result("a")])
    rundir.start(config(tmp_path))  # killed in batch 0: cut back to before it
    assert rundir.finished() == {}
    rundir.append_results([result("a")])
    rundir.write_commit(BatchCommit(batch=0, lengths=rundir.appended_lengths()))
    rundir.append_results([result("b")])
    with open(rundir.abstraction_path, "a") as handle:
        handle.write("{}\n")
    rundir.start(config(tmp_path))  # killed in batch 1
    assert sorted(rundir.finished()) == ["a"]
    assert rundir.abstraction_path.read_text() == ""
    assert rundir.read_commit() == BatchCommit(batch=0, lengths=rundir.appended_lengths())


def test_the_memory_to_resume_from_is_the_committed_snapshot(tmp_path: Path) -> None:
    from arcmemo.memory.schema import Concept, Memory

    rundir = RunWriter(tmp_path / "run")
    cfg = config(rundir.path, memory=tmp_path / "memory.json", update="online")
    assert rundir.resume_memory_path(cfg) == tmp_path / "memory.json"
    rundir.write_initial_memory(Memory())
    assert rundir.resume_memory_path(cfg) == rundir.initial_memory_path
    grown = Memory(concepts=[Concept(name="a", kind="structure")])
    rundir.write_snapshot(dump_memory(grown), 0)
    rundir.write_snapshot(dump_memory(grown), 1)  # batch 1 was killed before its commit
    rundir.write_commit(BatchCommit(batch=0, snapshot="batch-0000.delta.json"))
    assert rundir.resume_memory_path(cfg) == rundir.delta_path(0)
    assert rundir.resume_memory(cfg) == grown
    rundir.write_initial_memory(grown)  # kept from the first start
    assert Memory.load(rundir.initial_memory_path).concepts == []


def test_a_processed_list_of_an_older_run_reads_as_no_commit(tmp_path: Path) -> None:
    rundir = RunWriter(tmp_path)
    rundir.processed_path.parent.mkdir()
    rundir.processed_path.write_text(json.dumps(["a", "b"]))
    assert rundir.read_commit() is None and rundir.read_processed() == ["a", "b"]
    rundir.processed_path.write_text(json.dumps({"batch": "x"}))
    with pytest.raises(RunDirError, match=r"processed\.json: batch"):
        rundir.read_commit()


def test_a_call_log_of_one_line_per_call_still_sums_as_its_summary_said() -> None:
    # Written before calls.jsonl had one line per request (no call_id): each line is a call.
    v1 = FIXTURES / "rundir" / "v1" / "arc-online"
    summary = json.loads((v1 / "summary.json").read_text())
    usage = RunDirectory(v1).usage()
    assert usage.total.calls == summary["calls"] == 38
    assert {stage: (u.calls, u.requests, u.samples) for stage, u in usage.stages.items()} == {
        stage: (u["calls"], u["requests"], u["samples"]) for stage, u in summary["stages"].items()
    }
