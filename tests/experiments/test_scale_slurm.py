"""docs/scale.md's SLURM recipe, run: ``experiments/scale/submit.sh`` and ``shards.sbatch``
submitted unchanged but for their variables to a single-node SLURM on this machine
(``conftest.py``), against an OpenAI-protocol server on 127.0.0.1
(``tests/support/arc_plan_server.py``).
The merged run equals an unsharded run of the same tasks; a shard killed mid-run and
requeued resumes without asking an answered request again; a merge while a shard failed
refuses, naming the shard."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arcmemo.run.config import result_values
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.sandbox import SANDBOXES, SandboxUnavailableError
from tests.support.arc_plan_server import ArcPlanServer
from tests.support.local_slurm import LocalSlurm

REPO = Path(__file__).resolve().parents[2]
SCALE = REPO / "experiments" / "scale"
TASKS = REPO / "tests" / "fixtures" / "arc" / "eval"
MODEL = "openai:arc-plan"
# What may differ between two runs of the same work: how long it took, and when.
TIMING = {
    "wall_seconds",
    "sessions",
    "span_seconds",
    "latency_s",
    "ts",
    "duration_s",
    "started_at",
    "finished_at",
}
# The flags of shards.sbatch but --shard and --out, for the unsharded run it must equal.
RUN_FLAGS = (
    *("--select", "llm", "--attempts", "2", "--feedback-rounds", "2", "--replicate", "0"),
    *("--order-seed", "0", "--concurrency", "16"),
)


def untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def job_environment(server: ArcPlanServer, memory: Path, run: Path) -> dict[str, str]:
    """The scripts' variables; the rest of this process's environment goes along (sbatch
    --export=ALL), but for the test session's shared response cache: each shard keeps its own
    as the script says."""
    env = {k: v for k, v in os.environ.items() if k != "ARCMEMO_CACHE_DIR"}
    env.update(
        RUN=str(run),
        MEMORY=str(memory),
        MODEL=MODEL,
        TASKS=str(TASKS),
        BASE_URL=server.openai_base_url,
        VENV=sys.prefix,
        PYTHONPATH=str(REPO),
    )
    return env


def merge_command() -> str:
    """The merge job's command, as submit.sh submits it."""
    found = re.search(r"--wrap '([^']+)'", (SCALE / "submit.sh").read_text())
    assert found, "submit.sh submits no --wrap merge job"
    return found.group(1)


@pytest.fixture(scope="module")
def server(arc_plan: ModuleType) -> Iterator[ArcPlanServer]:
    running = ArcPlanServer(arc_plan)
    running.start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("memory") / "memory.json"
    subprocess.run(
        [sys.executable, "-m", "arcmemo", "memory", "init", "--domain", "arc", "--out", str(path)],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    return path


@pytest.fixture(scope="module")
def unsharded(
    server: ArcPlanServer, memory: Path, tmp_path_factory: pytest.TempPathFactory
) -> RunDirectory:
    """The run the shards cut: the same flags, in one process, outside SLURM."""
    try:  # the scripts run the default sandbox, as a cluster would
        SANDBOXES.create(SANDBOXES.spec("bwrap", {"max_workers": 1})).close()
    except SandboxUnavailableError as error:
        pytest.skip(f"the scripts' bwrap sandbox cannot run here: {error}")
    folder = tmp_path_factory.mktemp("unsharded")
    out = folder / "run"
    env = job_environment(server, memory, out) | {"ARCMEMO_CACHE_DIR": str(folder / "cache")}
    done = subprocess.run(
        [
            *(sys.executable, "-m", "arcmemo", "run", "arc-agi-1", "--data", str(TASKS)),
            *("--model", MODEL, "--base-url", server.openai_base_url, "--memory", str(memory)),
            *(*RUN_FLAGS, "--out", str(out)),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and 0 < summary["n_solved"] < summary["n_tasks"] == 8
    return RunDirectory(out)


def submit(slurm: LocalSlurm, env: dict[str, str], cwd: Path, *options: str) -> tuple[str, str]:
    """submit.sh with sbatch OPTIONS for the shards; (shards' job id, merge's job id)."""
    # One CPU per shard (the script asks 4, for real runs), memory the node has.
    script = (str(SCALE / "submit.sh"), "--cpus-per-task=1", "--mem=1G")
    printed = slurm.submit(*script, *options, env=env, cwd=cwd)
    found = re.search(r"shards: job (\d+); merge: job (\d+)", printed)
    assert found, printed
    return found.group(1), found.group(2)


def merge_by_hand(slurm: LocalSlurm, env: dict[str, str], cwd: Path) -> str:
    """submit.sh's merge job, submitted without its dependency; its job id."""
    options = ("--parsable", "--export=ALL", "--output=logs/by-hand-%j.out")
    printed = slurm.submit("sbatch", *options, "--wrap", merge_command(), env=env, cwd=cwd)
    return printed.strip().split(";")[0]


def shards_of(order: list[str], count: int) -> list[list[str]]:
    """Each shard's tasks: shard I runs positions I, I + N, ... of the run's order."""
    return [order[index::count] for index in range(count)]


def retried_task(tasks: list[str], server: ArcPlanServer) -> str:
    """A task of ``tasks`` whose first try fails, so it asks a feedback round."""
    found = [task_id for task_id in tasks if len(server.plan[task_id][0]) > 1]
    assert found, f"no task of {tasks} takes a feedback round"
    return found[0]


def paid(calls: list[Any], tasks: list[str] | None = None) -> Counter[tuple[Any, ...]]:
    """The provider requests answered (not from the cache), by what they asked."""
    return Counter(
        (c.stage, c.task_id, c.n, c.seed, tuple(c.samples))
        for c in calls
        if not c.cache_hit and c.attempts and c.error is None
        and (tasks is None or c.task_id in tasks)
    )  # fmt: skip


REPLAYS = {"calls", "samples", "cache_hits"}


def without(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value


def assert_equal_runs(merged: RunDirectory, whole: RunDirectory) -> None:
    """Results, scores, calls and task order of the merged run are the unsharded run's; calls
    a resumed shard replayed from its cache are counted as such, and only they differ."""
    assert merged.read_task_order() == whole.read_task_order()
    results = [untimed(r.model_dump(mode="json")) for r in merged.ordered_results()]
    assert results == [untimed(r.model_dump(mode="json")) for r in whole.ordered_results()]
    calls, reference = merged.calls(), whole.calls()
    assert paid(calls) == paid(reference)
    replayed = [c for c in calls if c.cache_hit]
    summary = json.loads((merged.path / "summary.json").read_text())
    expected = json.loads((whole.path / "summary.json").read_text())
    assert without(untimed(summary), REPLAYS) == without(untimed(expected), REPLAYS)
    assert summary["calls"] == expected["calls"] + len(replayed) == len(calls)
    assert summary["cache_hits"] == sum(c.cache_hits for c in replayed)
    assert not replayed or summary != expected
    config, original = merged.require_config(), whole.require_config()
    assert config.shard is None and result_values(config) == result_values(original)


def states(slurm: LocalSlurm, job: str) -> dict[str, str]:
    return {key: fields["JobState"] for key, fields in slurm.jobs(job).items()}


def test_the_documented_scripts_are_the_files() -> None:
    """docs/scale.md shows both scripts whole, as they are in experiments/scale/."""
    blocks = re.findall(r"```bash\n(.*?)```", (REPO / "docs" / "scale.md").read_text(), re.S)
    for name in ("shards.sbatch", "submit.sh"):
        assert (SCALE / name).read_text() in blocks, f"docs/scale.md does not show {name}"


@pytest.mark.slow
def test_the_slurm_recipe_merges_into_the_unsharded_run(
    slurm: LocalSlurm,
    server: ArcPlanServer,
    memory: Path,
    unsharded: RunDirectory,
    tmp_path: Path,
) -> None:
    """submit.sh: 4 shards, then the merge job once they all ended well."""
    run = tmp_path / "run"
    shards, merge = submit(slurm, job_environment(server, memory, run), tmp_path, "--array=0-3")
    slurm.wait(shards)
    slurm.wait(merge)
    assert set(states(slurm, shards).values()) == {"COMPLETED"}, states(slurm, shards)
    assert len(states(slurm, shards)) == 4
    assert states(slurm, merge) == {merge: "COMPLETED"}

    merged = RunDirectory(run / "merged")
    assert_equal_runs(merged, unsharded)
    summary = json.loads((merged.path / "summary.json").read_text())
    expected = json.loads((unsharded.path / "summary.json").read_text())
    assert untimed(summary) == untimed(expected)  # nothing replayed: the very same summary
    record = json.loads((merged.path / "merged.json").read_text())
    assert [shard["shard"] for shard in record["shards"]] == [f"{i}/4" for i in range(4)]


def shard_log(cwd: Path, shards: str, index: int) -> Path:
    return cwd / "logs" / f"arcmemo-shards-{shards}_{index}.out"


def wait_interrupted(slurm: LocalSlurm, cwd: Path, shards: str, index: int) -> None:
    """Until the shard's process has ended on SLURM's SIGTERM (it says so in its log)."""
    deadline = time.monotonic() + 60
    log = shard_log(cwd, shards, index)
    while "Interrupted by SIGTERM" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, f"shard {index} was not interrupted"
        time.sleep(0.2)
    job = f"{shards}_{index}"
    while states(slurm, job)[job] == "RUNNING":
        assert time.monotonic() < deadline, f"{job} still running"
        time.sleep(0.2)


@pytest.mark.slow
def test_a_shard_killed_mid_run_resumes_and_a_merge_refuses_a_failed_shard(
    slurm: LocalSlurm,
    server: ArcPlanServer,
    memory: Path,
    unsharded: RunDirectory,
    tmp_path: Path,
) -> None:
    """2 shards, both stopped mid-run with answered calls behind them: shard 0 requeued while
    it runs (what --requeue does after a node failure), shard 1 cancelled (scancel). The
    merge job (afterok) then never starts, a merge by hand refuses naming shard 1, and once
    shard 1 is requeued every shard has resumed without asking an answered request again and
    the merge equals the unsharded run."""
    tasks = shards_of(unsharded.read_task_order() or [], 2)
    reached = [server.hold(retried_task(part, server), 1, part) for part in tasks]
    asked_before = len(server.asked())
    run = tmp_path / "run"
    env = job_environment(server, memory, run)
    shards, merge = submit(slurm, env, tmp_path, "--array=0-1")
    for index, event in enumerate(reached):
        assert event.wait(120), f"shard {index} did not reach its feedback round"
    before = [paid(RunDirectory(run / f"shard-{i}").calls()) for i in range(2)]
    assert all(before)  # answered calls behind each shard
    slurm.run("scontrol", "requeue", f"{shards}_0")
    slurm.run("scancel", f"{shards}_1")
    for index in range(2):
        wait_interrupted(slurm, tmp_path, shards, index)
    server.release()
    slurm.wait(f"{shards}_0")
    assert states(slurm, shards) == {f"{shards}_0": "COMPLETED", f"{shards}_1": "CANCELLED"}

    # afterok can no longer hold: SLURM leaves the merge job waiting for good.
    deadline = time.monotonic() + 30
    while slurm.jobs(merge)[merge]["Reason"] != "DependencyNeverSatisfied":
        assert time.monotonic() < deadline, slurm.jobs(merge)[merge]
        time.sleep(0.5)
    assert states(slurm, merge) == {merge: "PENDING"}
    refused = merge_by_hand(slurm, env, tmp_path)
    slurm.wait(refused)
    assert states(slurm, refused) == {refused: "FAILED"}
    log = (tmp_path / "logs" / f"by-hand-{refused}.out").read_text()
    assert re.search(r"shard 1/2 \(.*shard-1\) is incomplete", " ".join(log.split())), log
    assert not (run / "merged").exists()

    slurm.run("scontrol", "requeue", f"{shards}_1")
    slurm.wait(f"{shards}_1", until="COMPLETED")
    merged = merge_by_hand(slurm, env, tmp_path)
    slurm.wait(merged)
    assert states(slurm, merged) == {merged: "COMPLETED"}
    slurm.run("scancel", merge)

    # Asked twice: only the requests held back when the shards were stopped, never answered.
    asked = Counter(server.asked()[asked_before:])
    assert server.unanswered and {d for d, n in asked.items() if n > 1} == server.unanswered
    for index, part in enumerate(tasks):
        calls = RunDirectory(run / f"shard-{index}").calls()
        assert not before[index] - paid(calls)  # kept what was answered before the kill
        assert paid(calls) == paid(unsharded.calls(), part)  # and paid for nothing twice
        assert any(c.cache_hit for c in calls)  # the resume replayed them from its cache
    assert_equal_runs(RunDirectory(run / "merged"), unsharded)
