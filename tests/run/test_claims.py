"""Several processes on one run directory: tasks are claimed, so each is solved once; a
claim dies with its holder; a run in task batches keeps its directory to itself."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from arcmemo.benchmarks.aime import AimeBenchmark
from arcmemo.models.client import open_model
from arcmemo.models.config import ModelConfig
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import RunDirError
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.pipeline import run_benchmark
from arcmemo.run.runner import Runner
from arcmemo.selection.base import SELECTORS
from tests.support.paths import FIXTURES

SUMS = FIXTURES / "scripts" / "aime_sums.py"
CLI = "from arcmemo.cli.main import cli; cli()"


def run_args(data: Path, out: Path) -> list[str]:
    return [
        *("run", "aime", "--data", str(data), "--model", f"scripted:{SUMS}"),
        *("--attempts", "2", "--concurrency", "2", "--no-cache", "--out", str(out)),
    ]


def config(data: Path, out: Path, **changes: object) -> RunConfig:
    fields = {
        "benchmark": "aime",
        "data": str(data),
        "model": f"scripted:{SUMS}",
        "attempts": 2,
        "out": out,
        "models": ModelConfig(cache=False, cache_write=False),
    }
    return RunConfig.model_validate(fields | changes)


# Each process waits for a common moment after its imports, so they open the run directory
# and the response cache at the same time (argv: the moment, then the CLI's arguments).
_AT_ONCE = """
import sys, time
from arcmemo.cli.main import cli
time.sleep(max(0.0, float(sys.argv.pop(1)) - time.time()))
cli()
"""


def _processes_on_one_run(
    tmp_path: Path,
    aime_sums: ModuleType,
    count: int,
    tasks: int,
    env: dict[str, str],
    *,
    all_work: bool = True,
) -> None:
    """``count`` processes run one run directory (and one response cache) at once; each task
    is answered by one of them (every process answering some, with ``all_work``)."""
    data = aime_sums.write_problems(tmp_path / "sums.jsonl", tasks)
    out, log, barrier = tmp_path / "run", tmp_path / "calls.txt", tmp_path / "barrier"
    barrier.mkdir()
    env = {
        **os.environ,
        "AIME_SUMS_CALL_LOG": str(log),
        "AIME_SUMS_BARRIER": str(barrier),  # all hold claims before any answers
        "AIME_SUMS_PROCESSES": str(count),
        "AIME_SUMS_DELAY": "0.05",
        "COLUMNS": "200",
        **env,
    }
    # Imports take seconds on a busy machine; the start waits for all of them.
    at = str(time.time() + 5 + count)
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _AT_ONCE, at, *run_args(data, out)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(count)
    ]
    outputs = [p.communicate(timeout=300)[0] for p in processes]
    for process, output in zip(processes, outputs, strict=True):
        assert process.returncode == 0, output

    calls = [line.split() for line in log.read_text().splitlines()]
    # One run's calls (2 attempts per task), each task answered by one process only.
    assert len(calls) == 2 * tasks
    by_task = Counter(task for _, task in calls)
    assert set(by_task.values()) == {2} and len(by_task) == tasks
    assert all(len({pid for pid, t in calls if t == task}) == 1 for task in by_task)
    # Each did some of the work (a process that imports late on a loaded machine can find
    # every task taken: a stress test asks only that none crashed).
    assert len({pid for pid, _ in calls}) == count or not all_work
    lines = RunDirectory(out).results_path.read_text().splitlines()
    assert len(lines) == tasks and len({json.loads(line)["task_id"] for line in lines}) == tasks
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["n_tasks"] == tasks and summary["calls"] == tasks


@pytest.mark.slow  # several processes
def test_two_processes_on_one_run_split_the_tasks(tmp_path: Path, aime_sums: ModuleType) -> None:
    _processes_on_one_run(tmp_path, aime_sums, 2, 12, {})


@pytest.mark.slow
def test_many_processes_open_one_fresh_cache_and_run_at_once(
    tmp_path: Path, aime_sums: ModuleType
) -> None:
    # Openers of a fresh cache that meet in its set-up (the WAL switch) once crashed with
    # "database is locked"; here four meet on a cache that does not exist yet.
    cache = tmp_path / "fresh-cache"
    _processes_on_one_run(
        tmp_path, aime_sums, 4, 16, {"ARCMEMO_CACHE_DIR": str(cache)}, all_work=False
    )
    assert (cache / "responses.sqlite3").is_file()


_HOLD = """
import sys, time
from pathlib import Path
from arcmemo.run.directory.writer import RunWriter
claim = RunWriter(Path(sys.argv[1])).claim(sys.argv[2])
assert claim is not None
print("held", flush=True)
time.sleep(120)
"""


@pytest.mark.slow  # several processes
def test_a_claim_dies_with_its_holder_and_the_task_is_taken_over(
    tmp_path: Path, aime_sums: ModuleType
) -> None:
    data = aime_sums.write_problems(tmp_path / "sums.jsonl", 3)
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(out), "sum-1"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert RunWriter(out).claim("sum-1") is None  # a live holder keeps it
        assert "sum-1" in RunDirectory(out).claim_path("sum-1").read_text()
        claim = RunWriter(out).claim("sum-0")  # other tasks are free
        assert claim is not None
        claim.close()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    summary = asyncio.run(run_benchmark(config(data, out)))
    assert summary["complete"] and summary["n_tasks"] == 3
    assert set(RunDirectory(out).finished()) == {"sum-0", "sum-1", "sum-2"}


def test_a_task_finished_by_another_process_is_not_solved_again(
    tmp_path: Path, aime_sums: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = aime_sums.write_problems(tmp_path / "sums.jsonl", 3)
    out, first = tmp_path / "run", tmp_path / "first"
    asyncio.run(run_benchmark(config(data, first, tasks=["sum-2"])))
    finished_elsewhere = RunDirectory(first).finished()["sum-2"]

    class AppendsForAnother(RunWriter):
        """Another process appends sum-2's result while this one has not claimed it yet."""

        def claim(self, task_id: str) -> contextlib.ExitStack | None:
            if task_id == "sum-2":
                self.append_result(finished_elsewhere)
            return super().claim(task_id)

    log = tmp_path / "calls.txt"
    monkeypatch.setenv("AIME_SUMS_CALL_LOG", str(log))
    resolved = config(data, out).model_copy(update={"feedback_rounds": 0})
    writer = AppendsForAnother(out)
    writer.start(resolved)
    benchmark = AimeBenchmark()
    model = open_model(resolved.model, config=resolved.models)
    runner = Runner(
        resolved, benchmark, {"solver": model}, rundir=writer, selector=SELECTORS.create("none")
    )
    tasks = benchmark.load(split=None, data=str(data), task_ids=None, limit=None)
    asyncio.run(runner.run(tasks))
    answered = {line.split()[1] for line in log.read_text().splitlines()}
    assert answered == {"sum-0", "sum-1"}
    assert len(RunDirectory(out).results_path.read_text().splitlines()) == 3


@pytest.mark.parametrize("schedule", ["passes", "tasks"])
def test_a_batched_run_keeps_its_directory_to_itself(
    tmp_path: Path, aime_sums: ModuleType, schedule: str
) -> None:
    data = aime_sums.write_problems(tmp_path / "sums.jsonl", 2)
    out = tmp_path / "run"
    # A claiming run is in the directory: a batched one is refused. A batched run is in
    # the directory: any other is refused.
    with (
        RunWriter(out).occupy(alone=schedule == "tasks"),
        pytest.raises(RunDirError, match="in use by another live run"),
    ):
        asyncio.run(run_benchmark(config(data, out, schedule=schedule)))
    assert not RunDirectory(out).results_path.exists()


def test_a_line_torn_by_a_dead_process_is_cut_before_the_next_append(tmp_path: Path) -> None:
    from arcmemo.core.records import TaskResult

    writer = RunWriter(tmp_path / "run")
    writer.path.mkdir()
    writer.append_result(TaskResult(task_id="a"))
    with open(writer.results_path, "a") as handle:  # another process died mid-line
        handle.write(TaskResult(task_id="torn").model_dump_json()[:25])
    writer.append_result(TaskResult(task_id="b"))
    assert list(RunDirectory(writer.path).finished()) == ["a", "b"]
    assert writer.results_path.read_text().count("\n") == 2


@pytest.mark.parametrize(
    "task_id", ["../../outside", "/etc/passwd", "..", ".hidden", "a/b", "x" * 300, "tâche\n1"]
)
def test_a_hostile_task_id_claims_a_file_inside_claims(tmp_path: Path, task_id: str) -> None:
    # Task ids come from data files (AIME ids, --data): a claim must never name a path
    # outside the run directory, however the id is spelled.
    writer = RunWriter(tmp_path / "run")
    path = writer.claim_path(task_id)
    assert path.parent == writer.claims_dir
    assert path.name != ".lock" and "/" not in path.name
    assert path != writer.claim_path(task_id + "2")
