"""Joining the run directories of ``--shard I/N`` runs into one run (``arcmemo merge``).

Shard ``I`` of ``N`` ran the tasks at positions ``I, I + N, ...`` of the run's ordered task
list, so the shards together are the unsharded run: the merged directory holds every
shard's results in the unsharded order, every shard's calls, and the summary that an
unsharded run of the same tasks writes (but for ``wall_seconds``, the shards' sum, and
``sessions`` and ``span_seconds``, of all the shards' sessions). ``merged.json`` records
which shards went in.

Merging refuses, naming the shard: a directory that is not a shard, shards whose configs
differ in anything but the shard (or that cut a different task list), a shard given twice
or a task in two shards, missing shards, and shards that did not finish, unless
``allow_partial``, which merges what there is into a summary marked incomplete.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.core.records import TaskResult
from arcmemo.models.accounting import CallRecord, usage_from_records
from arcmemo.run.config import RunConfig, result_values
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import RunDirError
from arcmemo.run.directory.sessions import wall_time
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.summary import build_summary
from arcmemo.run.summary_file import load_summary

# Besides result_values: what decides the task list the shards were cut from.
_TASK_LIST_FIELDS = ("tasks", "limit")
_FINGERPRINTS = ("prompts", "memory")


class MergeError(RunDirError):
    """The shards cannot be merged as asked."""


class ShardRecord(BaseModel):
    """One shard that went into a merged run."""

    path: str
    shard: str = Field(description="I/N")
    n_tasks: int = Field(description="Tasks in its slice of the task list.")
    n_results: int = Field(description="Of those, tasks with a result.")
    complete: bool
    wall_seconds: float | None = None


class MergeRecord(BaseModel):
    """``merged.json``: the shards a merged run was made from."""

    count: int = Field(description="N of --shard I/N.")
    shards: list[ShardRecord]
    missing: list[int] = Field(default_factory=list, description="Shard indices not given.")
    partial: list[str] = Field(
        default_factory=list, description="Why the merge is incomplete (--allow-partial)."
    )


class _Shard:
    def __init__(self, path: Path) -> None:
        self.rundir = RunDirectory(path)
        self.config = self.rundir.require_config()
        if self.config.shard is None:
            raise MergeError(f"{path}: not a shard (its config.json has no --shard)")
        self.shard = self.config.shard
        self.order = self.rundir.read_task_order() or []
        self.results = self.rundir.finished()
        self.summary = load_summary(self.rundir, self.config.benchmark.name)

    @property
    def name(self) -> str:
        return f"shard {self.shard} ({self.rundir.path})"

    def unfinished(self) -> str | None:
        """Why this shard is not a finished run, or None."""
        if not self.order:
            return f"{self.name} never started (no task_order.json)"
        done = sum(task_id in self.results for task_id in self.order)
        if done < len(self.order):
            return f"{self.name} is incomplete: {done} of {len(self.order)} tasks have a result"
        if self.summary is None:
            return f"{self.name} has no summary.json (still running, or killed)"
        if not self.summary.complete:
            return f"{self.name} did not finish cleanly (summary.json: complete false)"
        return None


def _identity(config: RunConfig) -> dict[str, Any]:
    identity = {name: value for name, value in result_values(config).items() if name != "shard"}
    identity |= {name: getattr(config, name) for name in _TASK_LIST_FIELDS}
    identity["shard count"] = config.shard.count if config.shard else None
    for key in _FINGERPRINTS:
        identity[f"{key} fingerprint"] = config.fingerprints.get(key)
    return identity


def _check_same_run(shards: list[_Shard]) -> None:
    first = shards[0]
    reference = _identity(first.config)
    for shard in shards[1:]:
        differences = [
            f"{name}: {reference[name]!r} vs {value!r}"
            for name, value in _identity(shard.config).items()
            if reference[name] != value
        ]
        if differences:
            raise MergeError(
                f"{shard.name} is not a shard of the same run as {first.name}: "
                + "; ".join(differences)
            )


def _check_disjoint(shards: list[_Shard]) -> None:
    by_index: dict[int, _Shard] = {}
    for shard in shards:
        twin = by_index.setdefault(shard.shard.index, shard)
        if twin is not shard:
            raise MergeError(
                f"shard {shard.shard} given twice: {twin.rundir.path} and {shard.rundir.path}"
            )
    owner: dict[str, _Shard] = {}
    for shard in shards:
        for task_id in shard.order:
            other = owner.setdefault(task_id, shard)
            if other is not shard:
                raise MergeError(f"task {task_id} is in two shards: {other.name} and {shard.name}")


def _check_slices(shards: list[_Shard], count: int) -> None:
    """With every shard present, each slice has the length a cut of one list gives."""
    total = sum(len(shard.order) for shard in shards)
    for shard in shards:
        expected = len(range(shard.shard.index, total, count))
        if len(shard.order) != expected:
            raise MergeError(
                f"{shard.name} has {len(shard.order)} tasks, but shard {shard.shard} of "
                f"{total} tasks has {expected}: the shards were not cut from one task list"
            )


def _merged_order(shards: list[_Shard], count: int) -> list[str]:
    """The unsharded order: shard I's p-th task was at position p * N + I."""
    placed = [
        (position * count + shard.shard.index, task_id)
        for shard in shards
        for position, task_id in enumerate(shard.order)
    ]
    return [task_id for _, task_id in sorted(placed)]


def merge_runs(out: Path, paths: list[Path], *, allow_partial: bool = False) -> dict[str, Any]:
    """Merge the shard directories ``paths`` into the new run directory ``out``; returns
    (and writes) its summary."""
    from arcmemo.run.session import create_run_benchmark
    from arcmemo.run.warnings import run_warnings

    if not paths:
        raise MergeError("no shard directories to merge")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise MergeError(f"{out}: exists and is not empty; merge into a new directory")
    shards = sorted((_Shard(Path(p)) for p in paths), key=lambda s: s.shard.index)
    _check_same_run(shards)
    _check_disjoint(shards)
    count = shards[0].shard.count
    missing = sorted(set(range(count)) - {s.shard.index for s in shards})
    problems = [f"missing shards {', '.join(f'{i}/{count}' for i in missing)}"] if missing else []
    problems += [why for why in (s.unfinished() for s in shards) if why]
    if problems and not allow_partial:
        raise MergeError("; ".join(problems) + " (--allow-partial merges what there is)")
    if not missing:
        _check_slices(shards, count)

    order = _merged_order(shards, count)
    results: dict[str, TaskResult] = {}
    calls: list[CallRecord] = []
    for shard in shards:
        results.update(shard.results)
        calls += shard.rundir.calls()
    first = shards[0].config
    created = [s.config.created_at for s in shards if s.config.created_at is not None]
    forced = [f for s in shards for f in s.config.forced_resume]
    config = first.model_copy(
        update={
            "shard": None,
            "out": out,
            "created_at": min(created) if created else None,
            "forced_resume": list(dict.fromkeys(forced)),
        }
    )
    ordered = [results[task_id] for task_id in order if task_id in results]
    wall = sum(s.summary.wall_seconds or 0.0 for s in shards if s.summary is not None)
    benchmark = create_run_benchmark(config)
    try:
        summary = build_summary(
            config,
            benchmark,
            ordered,
            usage_from_records(calls),
            wall,
            n_planned=len(order),
            warnings=run_warnings(config),
            partial_merge=problems or None,
            sessions=wall_time([m for s in shards for m in s.rundir.session_marks()]),
        )
    finally:
        benchmark.close()

    writer = RunWriter(out)
    writer.start(config)
    writer.write_task_order(order)
    writer.append_results(ordered)
    writer.append_calls(calls)
    writer.write_merged(
        MergeRecord(
            count=count,
            shards=[
                ShardRecord(
                    path=str(s.rundir.path.resolve()),
                    shard=str(s.shard),
                    n_tasks=len(s.order),
                    n_results=sum(task_id in s.results for task_id in s.order),
                    complete=s.unfinished() is None,
                    wall_seconds=s.summary.wall_seconds if s.summary else None,
                )
                for s in shards
            ],
            missing=missing,
            partial=problems,
        )
    )
    writer.write_summary(summary)
    return summary.file_dict()
