"""Schedules, batch commits and resume, one writer per memory, write precision.

The runs are scripted ARC-AGI-1 runs on real evaluation tasks. :class:`Script` answers every
prompt as a pure function of it, so the response cache replays whatever a crashed session
already asked and a resumed run can be compared with an uninterrupted one call for call.
A crash is a :class:`Crash` raised from the model (at its n-th answer) or from a file
writer (after its n-th write): it ends the process's run as a kill would, leaving the files
as they were at that point.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arcmemo.core.files import LockHeldError, held_lock
from arcmemo.core.records import TaskResult
from arcmemo.memory.schema import Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.memory.store import dump_memory
from arcmemo.run import continual
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import RunDirError
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.pipeline import run_benchmark
from arcmemo.run.session import writer_lock_path
from tests.support.arc_solutions import CORNERS, MIRROR_TILES, QUADRANTS
from tests.support.paths import FIXTURES, REPO
from tests.support.schedule_script import (
    TRANSFER,
    Crash,
    Plan,
    Script,
    client,
    online_config,
)
from tests.support.scripted_models import loop_model

lm = loop_model()


def seed_memory(path: Path) -> Path:
    load_seed("arc").save(path)
    return path


def run(config: RunConfig, script: Script, cache: Path) -> dict[str, Any]:
    return asyncio.run(run_benchmark(config, models={"solver": client(script, config.out, cache)}))


def results(out: Path) -> dict[str, TaskResult]:
    """The run's results without the times of their model calls (which differ by run)."""
    finished = RunDirectory(out).finished()
    for result in finished.values():
        for step in (s for a in result.attempts for s in a.steps):
            step.started_at = step.finished_at = None
    return finished


# -- the schedule is pass by pass ----------------------------------------------------------


@pytest.mark.parametrize(
    ("schedule", "reselect", "solved"),
    [("passes", None, True), ("tasks", None, False), ("passes", False, False)],
)
def test_a_pass_1_retry_solves_with_a_concept_written_by_a_later_batch_of_pass_0(
    tmp_path: Path, schedule: str, reselect: bool | None, solved: bool
) -> None:
    memory = seed_memory(tmp_path / "memory.json")
    config = online_config(
        tmp_path / "run", memory, list(TRANSFER), schedule=schedule, reselect=reselect
    )
    script = Script(TRANSFER)
    summary = run(config, script, tmp_path / "cache")
    found = results(config.out)
    retried = found["66e6c45b"]
    first, retry = retried.attempts[0].steps
    assert first.verified is False and retry.round == 1
    assert retried.solved is solved and retry.verified is solved
    assert ("concept of 0c786b71" in retry.concepts) is solved
    assert found["0c786b71"].solved
    saved = json.loads((config.out / "config.json").read_text())
    assert saved["schedule"] == schedule and summary["schedule"] == schedule
    assert saved["reselect"] is (reselect is not False)
    batches = json.loads((config.out / "schedule.json").read_text())["batches"]
    shape = [(b["pass_number"], b["task_ids"]) for b in batches]
    if schedule == "passes":
        assert shape == [(0, ["66e6c45b"]), (0, ["0c786b71"]), (1, ["66e6c45b"])]
        # the retry came after both first tries, and saw the memory they left
        order = [(stage, task) for stage, task, _ in script.answered]
        retry_call = len(order) - 1 - order[::-1].index(("solve", "66e6c45b"))
        assert order.index(("concepts", "0c786b71")) < retry_call
    else:
        assert shape == [(0, ["66e6c45b"]), (0, ["0c786b71"])]
    final = Memory.load(config.memory_out)  # type: ignore[arg-type]
    learned = final.find("concept of 66e6c45b")
    assert (learned is not None) is solved  # written from the pass-1 retry


def test_write_precision_counts_written_solutions_right_on_the_test_outputs(
    tmp_path: Path,
) -> None:
    plan: Plan = {"0c786b71": [QUADRANTS], "e345f17b": ["memorize"], "bbb1b8b6": ["identity"]}
    memory = seed_memory(tmp_path / "memory.json")
    config = online_config(tmp_path / "run", memory, list(plan), feedback_rounds=0, update_every=2)
    summary = run(config, Script(plan), tmp_path / "cache")
    precision = summary["write_precision"]
    assert precision["signal"] == "train"
    assert (precision["written"], precision["right"], precision["precision"]) == (2, 1, 0.5)
    assert precision["by_signal"]["train"] == {"confirmed": 2, "right": 1, "precision": 0.5}
    assert set(precision["by_signal"]) == {"train", "consistency"}
    commit = RunDirectory(config.out).read_commit()
    assert commit is not None
    assert {t: w.right for t, w in commit.written.items()} == {
        "0c786b71": True,
        "e345f17b": False,
    }
    # the labels only reported: the wrong solution was written all the same
    assert Memory.load(config.memory_out).find("concept of e345f17b") is not None  # type: ignore[arg-type]


# -- crash anywhere, resume, same run ------------------------------------------------------

# Six tasks in batches of two, two attempts, two retries: writes in pass 0 and pass 1, and a
# pass-2 retry that needs a concept written in the last batch of pass 0.
CRASH_PLAN: Plan = {
    "66e6c45b": ["identity", "identity", ("if", "concept of 00576224", CORNERS)],
    "0c786b71": [QUADRANTS],
    "e345f17b": ["memorize"],
    "bbb1b8b6": ["identity", "memorize"],
    "00576224": [MIRROR_TILES],
    "68b67ca3": ["identity"],
}


def crash_config(out: Path, memory: Path) -> RunConfig:
    return online_config(
        out, memory, list(CRASH_PLAN), attempts=2, feedback_rounds=2, update_every=2
    )


def _timeless(value: Any) -> Any:
    """A memory's JSON without its timestamps."""
    if isinstance(value, dict):
        return {
            k: _timeless(v)
            for k, v in value.items()
            if k not in ("at", "created_at", "updated_at", "started_at", "finished_at")
        }
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


@dataclass
class RunFiles:
    """What a run left behind, as compared between an interrupted and a whole run."""

    texts: dict[str, str]
    memories: dict[str, Any]
    fresh_calls: list[tuple[str, str | None]]
    summary: dict[str, Any]

    @classmethod
    def of(cls, out: Path, memory_out: Path) -> RunFiles:
        rundir = RunDirectory(out)
        texts = {
            name: (out / name).read_text() if (out / name).exists() else ""
            for name in ("results.jsonl", "passes.jsonl", "abstraction.jsonl", "schedule.json")
        }
        # Byte for byte but the times of the model calls each step records.
        for name in ("results.jsonl", "passes.jsonl"):
            texts[name] = "".join(
                json.dumps(_timeless(json.loads(line))) + "\n" for line in texts[name].splitlines()
            )
        texts["processed.json"] = rundir.processed_path.read_text()
        memories = {
            path.name: _timeless(rundir.snapshot_raw(path))
            for path in [*rundir.snapshots(), rundir.initial_memory_path]
        }
        memories["final"] = _timeless(json.loads(memory_out.read_text()))
        fresh = sorted((c.stage, c.task_id) for c in rundir.calls() if c.attempts > 0)
        summary = json.loads(rundir.summary_path.read_text())
        return cls(texts, memories, fresh, summary)

    def assert_same_run_as(self, other: RunFiles) -> None:
        for name, text in other.texts.items():
            assert self.texts[name] == text, f"{name} differs"
        assert self.memories == other.memories
        assert self.fresh_calls == other.fresh_calls  # no call paid twice, none skipped
        for key in ("n_solved", "score", "write_precision", "complete"):
            assert self.summary[key] == other.summary[key], key


def logged_calls(out: Path) -> list[tuple[str, str | None]]:
    """Every model call in the run's log (cache hits too), as (stage, task)."""
    return [(c.stage, c.task_id) for c in RunDirectory(out).calls()]


@dataclass
class Reference:
    files: RunFiles
    answered: list[tuple[str, str | None, str]]
    requests: int
    calls: list[tuple[str, str | None]]
    calls_by_commit: list[int]  # calls logged when batch i was committed

    def calls_after(self, batch: int | None) -> list[tuple[str, str | None]]:
        """The calls of the batches after ``batch`` (all of them for None)."""
        return sorted(self.calls[self.calls_by_commit[batch] if batch is not None else 0 :])


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reference]:
    """The crash scenario run once, uninterrupted."""
    root = tmp_path_factory.mktemp("whole")
    config = crash_config(root / "run", seed_memory(root / "memory.json"))
    script = Script(CRASH_PLAN)
    by_commit: list[int] = []
    original = RunWriter.write_commit

    def counting(self: RunWriter, commit: Any) -> None:
        by_commit.append(len(logged_calls(self.path)))
        original(self, commit)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RunWriter, "write_commit", counting)
        run(config, script, root / "cache")
    files = RunFiles.of(config.out, config.memory_out)  # type: ignore[arg-type]
    yield Reference(files, script.answered, script.requests, logged_calls(config.out), by_commit)


def test_the_crash_scenario_writes_in_several_passes(reference: Reference) -> None:
    schedule = json.loads(reference.files.texts["schedule.json"])
    assert [(b["pass_number"], b["task_ids"]) for b in schedule["batches"]] == [
        (0, ["66e6c45b", "0c786b71"]),
        (0, ["e345f17b", "bbb1b8b6"]),
        (0, ["00576224", "68b67ca3"]),
        (1, ["66e6c45b", "bbb1b8b6"]),
        (1, ["68b67ca3"]),
        (2, ["66e6c45b", "68b67ca3"]),
    ]
    outcomes = [json.loads(line) for line in reference.files.texts["abstraction.jsonl"].split()]
    assert [o["task_id"] for o in outcomes] == [
        "0c786b71", "e345f17b", "00576224", "bbb1b8b6", "66e6c45b"
    ]  # fmt: skip
    lines = reference.files.texts["results.jsonl"].splitlines()
    solved = {r.task_id: r.solved for r in map(TaskResult.model_validate_json, lines)}
    assert solved == {
        "0c786b71": True,
        "e345f17b": False,
        "00576224": True,
        "bbb1b8b6": False,
        "66e6c45b": True,  # in pass 2, from the concept of 00576224
        "68b67ca3": False,
    }


@dataclass
class Resumed:
    """An interrupted and resumed run of the crash scenario."""

    files: RunFiles
    answered: list[tuple[str, str | None, str]]  # by the model, in both sessions
    committed: int | None  # the last batch committed when it was killed
    resumed_calls: list[tuple[str, str | None]]  # every call of the second session

    def assert_same_run_as(self, reference: Reference) -> None:
        self.files.assert_same_run_as(reference.files)
        # every prompt of the whole run answered once over both sessions: none paid twice
        assert sorted(self.answered) == sorted(reference.answered)
        # the resume redid exactly the batches after the last commit (cached or not)
        assert sorted(self.resumed_calls) == reference.calls_after(self.committed)


def _resume_after(
    tmp_path: Path, crash: Callable[[Script], None], patch: pytest.MonkeyPatch
) -> Resumed:
    """Run the crash scenario until ``crash`` kills it, then resume it to the end."""
    config = crash_config(tmp_path / "run", seed_memory(tmp_path / "memory.json"))
    first = Script(CRASH_PLAN)
    crash(first)
    with pytest.raises(Crash):
        run(config, first, tmp_path / "cache")
    patch.undo()
    processed = config.out / "memory" / "processed.json"  # read here, not by the code tested
    committed = json.loads(processed.read_text())["batch"] if processed.exists() else None
    logged = len(logged_calls(config.out))
    second = Script(CRASH_PLAN)
    run(config, second, tmp_path / "cache")
    return Resumed(
        RunFiles.of(config.out, config.memory_out),  # type: ignore[arg-type]
        first.answered + second.answered,
        committed,
        logged_calls(config.out)[logged:],
    )


def _at_call(n: int | tuple[str, str, int]) -> Callable[[Script], None]:
    def crash(script: Script) -> None:
        script.crash_at = n

    return crash


def _after_write(
    patch: pytest.MonkeyPatch, owner: Any, method: str, nth: int, *, before: bool = False
) -> Callable[[Script], None]:
    """Kill the run at the ``nth`` call of ``owner.method`` (after it, or before it)."""
    original = getattr(owner, method)
    calls = {"n": 0}

    def dying(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if before and calls["n"] == nth:
            raise Crash(f"killed before {method} #{nth}")
        value = original(*args, **kwargs)
        if calls["n"] == nth:
            raise Crash(f"killed after {method} #{nth}")
        return value

    def crash(script: Script) -> None:
        patch.setattr(owner, method, dying)

    return crash


# A kill at one model call of each kind of step in each pass (ARCMEMO_EVERY_CALL=1: at
# every model call of the run, which takes a few minutes).
CALLS: list[int | tuple[str, str, int]] = [
    ("select", "66e6c45b", 1),  # the first call of batch 0: before anything is solved
    ("solve", "bbb1b8b6", 1),  # first tries of batch 1, its other task may be answered
    ("pseudocode", "00576224", 1),  # abstraction of batch 2
    ("concepts", "00576224", 1),  # its second step
    ("select", "bbb1b8b6", 2),  # a reselection in pass 1
    ("retry", "68b67ca3", 1),  # a retry in pass 1, in the batch after a write
    ("concepts", "bbb1b8b6", 1),  # a write from a pass-1 retry
    ("retry", "66e6c45b", 2),  # pass 2
    ("concepts", "66e6c45b", 1),  # the last call of the run
]
if os.environ.get("ARCMEMO_EVERY_CALL"):
    CALLS = list(range(1, 43))


@pytest.mark.slow  # kill and resume
@pytest.mark.parametrize("call", CALLS, ids=str)
def test_a_resume_after_a_kill_at_a_model_call_is_the_same_run(
    reference: Reference, tmp_path: Path, call: int | tuple[str, str, int]
) -> None:
    assert reference.requests == len(reference.files.fresh_calls) == 42
    with pytest.MonkeyPatch.context() as patch:
        _resume_after(tmp_path, _at_call(call), patch).assert_same_run_as(reference)


WRITES = [
    ("append_results", 1, False),  # results of the first batch, before its memory write
    ("append_progress", 2, False),
    ("write_snapshot", 1, False),  # snapshot written, memory not yet saved, not committed
    ("write_snapshot", 4, False),  # in pass 1
    ("append_abstraction", 3, False),  # abstraction log written, not committed
    ("write_commit", 2, True),  # everything but the commit
    ("write_commit", 2, False),  # committed: the next batch starts from its snapshot
    ("write_commit", 3, False),  # end of pass 0: pass 1 not planned yet
    ("write_schedule", 2, False),  # pass 1 planned, none of it run
    ("write_commit", 6, False),  # the last batch done, the summary not written
]


@pytest.mark.slow  # kill and resume
@pytest.mark.parametrize(("method", "nth", "before"), WRITES)
def test_a_resume_after_a_kill_between_the_writes_of_a_batch_is_the_same_run(
    reference: Reference, tmp_path: Path, method: str, nth: int, before: bool
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        crash = _after_write(patch, RunWriter, method, nth, before=before)
        _resume_after(tmp_path, crash, patch).assert_same_run_as(reference)


@pytest.mark.slow  # kill and resume
def test_a_kill_after_the_memory_is_saved_but_before_the_commit_is_the_same_run(
    reference: Reference, tmp_path: Path
) -> None:
    # the memory file holds a batch that is not committed: the resume must neither apply
    # it twice nor refuse the memory as changed by someone else
    with pytest.MonkeyPatch.context() as patch:
        crash = _after_write(patch, continual, "save_checked_text", 2)
        _resume_after(tmp_path, crash, patch).assert_same_run_as(reference)


@pytest.mark.slow  # kill and resume
def test_a_kill_while_the_memory_file_itself_grows_is_the_same_run(
    reference: Reference, tmp_path: Path
) -> None:
    """Without --memory-out the run saves over --memory: a resume starts from its own copy of
    the memory before the first batch, not from the file that already holds a batch."""
    memory = seed_memory(tmp_path / "memory.json")
    whole = crash_config(tmp_path / "whole", memory).model_copy(update={"memory_out": None})
    run(whole, Script(CRASH_PLAN), tmp_path / "whole-cache")
    expected = RunFiles.of(whole.out, memory)

    memory = seed_memory(tmp_path / "memory2.json")
    config = crash_config(tmp_path / "run", memory).model_copy(update={"memory_out": None})
    with pytest.MonkeyPatch.context() as patch:
        _after_write(patch, continual, "save_checked_text", 1)(Script(CRASH_PLAN))
        with pytest.raises(Crash):
            run(config, Script(CRASH_PLAN), tmp_path / "cache")
    assert Memory.load(memory).find("concept of 0c786b71") is not None  # saved, not committed
    run(config, Script(CRASH_PLAN), tmp_path / "cache")
    RunFiles.of(config.out, memory).assert_same_run_as(expected)


@pytest.mark.slow  # kill and resume
def test_a_run_killed_twice_is_the_same_run(reference: Reference, tmp_path: Path) -> None:
    config = crash_config(tmp_path / "run", seed_memory(tmp_path / "memory.json"))
    answered: list[tuple[str, str | None, str]] = []
    for n in (7, 9, None):  # the second kill comes early in the resumed session
        script = Script(CRASH_PLAN, crash_at=n)
        if n is None:
            run(config, script, tmp_path / "cache")
        else:
            with pytest.raises(Crash):
                run(config, script, tmp_path / "cache")
        answered += script.answered
    RunFiles.of(config.out, config.memory_out).assert_same_run_as(reference.files)  # type: ignore[arg-type]
    assert sorted(answered) == sorted(reference.answered)


def test_rerunning_a_finished_run_calls_nothing_and_changes_nothing(
    reference: Reference, tmp_path: Path
) -> None:
    config = crash_config(tmp_path / "run", seed_memory(tmp_path / "memory.json"))
    run(config, Script(CRASH_PLAN), tmp_path / "cache")
    logged = len(logged_calls(config.out))
    again = Script(CRASH_PLAN)
    run(config, again, tmp_path / "cache")
    assert again.answered == [] and len(logged_calls(config.out)) == logged  # no call at all
    RunFiles.of(config.out, config.memory_out).assert_same_run_as(reference.files)  # type: ignore[arg-type]


def test_a_resume_with_other_tasks_is_refused(tmp_path: Path) -> None:
    config = crash_config(tmp_path / "run", seed_memory(tmp_path / "memory.json"))
    with pytest.raises(Crash):
        run(config, Script(CRASH_PLAN, crash_at=5), tmp_path / "cache")
    fewer = config.model_copy(update={"limit": 4})
    with pytest.raises(RunDirError, match=r"fixed over 6 tasks, 2 a batch.*--limit"):
        run(fewer, Script(CRASH_PLAN), tmp_path / "cache")


def test_tasks_that_ended_on_a_model_error_are_redone_in_a_new_round_on_rerun(
    tmp_path: Path,
) -> None:
    plan: Plan = {"0c786b71": [QUADRANTS], "00576224": [MIRROR_TILES]}

    class Flaky(Script):
        def answer(self, stage: str, task: str | None, prompt: str, text: str) -> str:
            if stage == "solve" and task == "00576224":
                raise ValueError("the server fell over")
            return super().answer(stage, task, prompt, text)

    memory = seed_memory(tmp_path / "memory.json")
    config = online_config(tmp_path / "run", memory, list(plan))
    first = run(config, Flaky(plan), tmp_path / "cache")
    assert first["complete"] is False and first["n_errors"] == 1
    assert RunDirectory(config.out).read_commit().processed == ["0c786b71"]  # type: ignore[union-attr]
    second = run(config, Script(plan), tmp_path / "cache")
    assert second["complete"] is True and second["n_solved"] == 2
    batches = json.loads((config.out / "schedule.json").read_text())["batches"]
    assert [(b["rerun"], b["pass_number"], b["task_ids"]) for b in batches] == [
        (0, 0, ["0c786b71"]),
        (0, 0, ["00576224"]),
        (1, 0, ["00576224"]),
    ]
    commit = RunDirectory(config.out).read_commit()
    assert commit is not None and commit.processed == ["0c786b71", "00576224"]
    assert Memory.load(config.memory_out).find("concept of 00576224") is not None  # type: ignore[arg-type]
    # One line per task: the error's line is replaced, and the commit records the new length.
    results = config.out / "results.jsonl"
    lines = results.read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == ["0c786b71", "00576224"]
    assert commit.lengths["results.jsonl"] == results.stat().st_size


# -- fixed-memory runs -----------------------------------------------------------------------


def fixed_config(out: Path, memory: Path, **fields: Any) -> RunConfig:
    values: dict[str, Any] = {
        "benchmark": "arc-agi-1",
        "split": "evaluation",
        "tasks": ["bbb1b8b6", "68b67ca3"],
        "model": "scripted:schedule",
        "attempts": 1,
        "feedback_rounds": 2,
        "memory": memory,
        "selector": "llm",
        "out": out,
    }
    return RunConfig(**(values | fields))


FIXED_PLAN: Plan = {"bbb1b8b6": ["identity", "identity", "memorize"], "68b67ca3": ["identity"]}


def test_a_fixed_memory_run_is_unchanged_by_default(tmp_path: Path) -> None:
    memory = seed_memory(tmp_path / "memory.json")
    before = memory.read_bytes()
    config = fixed_config(tmp_path / "run", memory)
    script = Script(FIXED_PLAN)
    run(config, script, tmp_path / "cache")
    saved = json.loads((config.out / "config.json").read_text())
    assert (saved["schedule"], saved["reselect"]) == ("tasks", False)
    # one selection per task, retries inline, no batch files
    assert [s for s, _, _ in script.answered].count("select") == 2
    assert not (config.out / "schedule.json").exists()
    assert not RunDirectory(config.out).processed_path.exists()
    assert memory.read_bytes() == before


def test_reselect_and_the_passes_schedule_in_a_fixed_memory_run(tmp_path: Path) -> None:
    memory = seed_memory(tmp_path / "memory.json")
    before = memory.read_bytes()
    plain = Script(FIXED_PLAN)
    run(fixed_config(tmp_path / "plain", memory), plain, tmp_path / "cache-plain")
    reselecting = Script(FIXED_PLAN)
    config = fixed_config(tmp_path / "reselect", memory, reselect=True)
    run(config, reselecting, tmp_path / "cache-reselect")
    # two tasks; every retry selects again (bbb1b8b6: 2 retries, 68b67ca3: 2 retries)
    assert [s for s, _, _ in reselecting.answered].count("select") == 2 + 4
    passes = Script(FIXED_PLAN)
    by_pass = fixed_config(tmp_path / "passes", memory, schedule="passes")
    run(by_pass, passes, tmp_path / "cache-passes")
    batches = json.loads((by_pass.out / "schedule.json").read_text())["batches"]
    assert [(b["pass_number"], b["task_ids"]) for b in batches] == [
        (0, ["bbb1b8b6", "68b67ca3"]),
        (1, ["bbb1b8b6", "68b67ca3"]),
        (2, ["bbb1b8b6", "68b67ca3"]),
    ]
    # with a fixed memory the schedule changes when calls are made, not what they return
    assert sorted(passes.answered) == sorted(plain.answered)
    assert results(by_pass.out) == results(tmp_path / "plain")
    assert memory.read_bytes() == before


def test_a_config_written_before_schedules_reads_as_what_that_run_did(tmp_path: Path) -> None:
    for update, reselect in (("online", True), ("none", False)):
        rundir = RunWriter(tmp_path / update)
        config = RunConfig(
            benchmark="arc-agi-1", model="scripted:x", update=update, out=rundir.path
        )
        rundir.path.mkdir()
        saved = json.loads(config.model_dump_json())
        del saved["schedule"], saved["reselect"]
        rundir.config_path.write_text(json.dumps(saved))
        old = rundir.read_config()
        assert old is not None and (old.schedule, old.reselect) == ("tasks", reselect)


def test_the_cli_records_schedule_and_reselect(tmp_path: Path) -> None:
    from arcmemo.cli.main import cli

    memory = seed_memory(tmp_path / "memory.json")
    script = tmp_path / "identity.json"
    script.write_text(json.dumps({"*": lm.program_answer(lm.IDENTITY)}))
    base = [
        "run", "arc-agi-1", "--split", "evaluation", "--tasks", "0c786b71",
        "--model", f"scripted:{script}", "--memory", str(memory), "--select", "none",
        "--attempts", "1", "--feedback-rounds", "1",
    ]  # fmt: skip
    for extra, expected in (
        ([], ("tasks", False)),
        (["--schedule", "passes", "--reselect"], ("passes", True)),
        (["--update", "online", "--memory-out", str(tmp_path / "out.json")], ("passes", True)),
        (
            ["--update", "online", "--memory-out", str(tmp_path / "o2.json"), "--schedule",
             "tasks", "--no-reselect"],
            ("tasks", False),
        ),
    ):  # fmt: skip
        out = tmp_path / f"run-{len(extra)}"
        result = CliRunner().invoke(cli, [*base, *extra, "--out", str(out)])
        assert result.exit_code == 0, result.output
        saved = json.loads((out / "config.json").read_text())
        assert (saved["schedule"], saved["reselect"]) == expected
    help_text = CliRunner().invoke(cli, ["run", "--help"]).output
    assert "--schedule" in help_text and "--reselect / --no-reselect" in help_text


# -- one memory file, one writer -------------------------------------------------------------


def test_a_second_holder_of_a_lock_is_refused_at_once_and_told_who_holds_it(
    tmp_path: Path,
) -> None:
    lock = tmp_path / "memory.json.writer.lock"
    with held_lock(lock, holder="pid 1, run directory runs/a"):
        started = time.monotonic()
        with pytest.raises(LockHeldError) as refused, held_lock(lock, holder="pid 2"):
            pass
        assert time.monotonic() - started < 1
        assert refused.value.holder == "pid 1, run directory runs/a"
        with pytest.raises(LockHeldError), held_lock(lock, holder="reader", shared=True):
            pass
    with held_lock(lock, holder="pid 2"):  # released when the first holder is done
        pass
    with held_lock(lock, holder="r1", shared=True), held_lock(lock, holder="r2", shared=True):
        pass  # readers share


WAITING_RUN = """
import asyncio, sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from tests.support.schedule_script import Script, TRANSFER, client, online_config

started, release = Path({started!r}), Path({release!r})

class Waiting(Script):
    def answer(self, stage, task, prompt, text):
        started.touch()
        while not release.exists():
            time.sleep(0.05)
        return super().answer(stage, task, prompt, text)

config = online_config(Path({out!r}), Path({memory!r}), list(TRANSFER), memory_out=None)
from arcmemo.run.pipeline import run_benchmark
solver = client(Waiting(TRANSFER), config.out, Path({cache!r}))
asyncio.run(run_benchmark(config, models={{"solver": solver}}))
"""


@pytest.fixture
def live_writer(tmp_path: Path) -> Iterator[tuple[Path, Path, subprocess.Popen[str]]]:
    """Another process running online on ``memory.json`` (without --memory-out), stopped at
    its first model call until ``release`` exists."""
    memory = seed_memory(tmp_path / "memory.json")
    started, release = tmp_path / "started", tmp_path / "release"
    code = WAITING_RUN.format(
        tests=str(REPO),
        started=str(started),
        release=str(release),
        out=str(tmp_path / "live"),
        memory=str(memory),
        cache=str(tmp_path / "live-cache"),
    )
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert process.poll() is None, process.communicate()[0]
            assert time.monotonic() < deadline, "the live run never started"
            time.sleep(0.05)
        yield memory, release, process
    finally:
        release.touch()
        process.wait(timeout=120)


@pytest.mark.slow  # a second process
def test_a_second_run_on_a_memory_a_live_run_is_writing_fails_at_once(
    live_writer: tuple[Path, Path, subprocess.Popen[str]], tmp_path: Path
) -> None:
    from arcmemo.cli.main import cli

    memory, release, process = live_writer
    script = FIXTURES / "loop" / "loop_model.py"
    base = [
        "run", "arc-agi-1", "--split", "evaluation", "--tasks", "0c786b71",
        "--model", f"scripted:{script}", "--memory", str(memory), "--select", "none",
        "--attempts", "1",
    ]  # fmt: skip
    for extra in (["--update", "online"], []):  # a second writer, and a reader
        started = time.monotonic()
        result = CliRunner().invoke(cli, [*base, *extra, "--out", str(tmp_path / "second")])
        assert time.monotonic() - started < 10
        assert result.exit_code == 1, result.output
        message = result.output.strip().splitlines()
        assert len(message) == 1, message
        assert f"{memory} is being written by another live run" in message[0]
        assert f"run directory {tmp_path / 'live'}" in message[0]
        assert "--memory-out" in message[0]
        assert not (tmp_path / "second" / "config.json").exists()  # nothing claimed
    release.touch()
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output
    # the live run's writes are all there, and the memory is free again
    assert Memory.load(memory).find("concept of 0c786b71") is not None
    with held_lock(writer_lock_path(memory), holder="test"):
        pass


def test_a_batch_checks_its_memory_once_for_the_snapshot_and_the_saved_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the check parses the whole memory (seconds at 30,000 concepts): once per batch
    checked: list[Path] = []
    real = continual.checked_dump
    monkeypatch.setattr(
        continual, "checked_dump", lambda memory, path: checked.append(path) or real(memory, path)
    )
    config = crash_config(tmp_path / "run", seed_memory(tmp_path / "memory.json"))
    run(config, Script(CRASH_PLAN), tmp_path / "cache")
    rundir = RunDirectory(config.out)
    snapshots = rundir.snapshots()
    assert len(snapshots) > 1 and len(checked) == len(snapshots)
    assert config.memory_out is not None
    assert config.memory_out.read_text() == dump_memory(rundir.snapshot_memory(snapshots[-1]))
