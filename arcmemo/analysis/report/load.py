"""Reading a run directory into the data a report shows.

Every file is read through :class:`arcmemo.run.directory.reader.RunDirectory`, which only
reads: a torn last line of a run in progress is skipped, never cut off. The benchmark named
in the run's configuration reloads the tasks (ARC grids, AIME problems and answers) and
stays with the loaded run for its report hooks; when reloading fails the report still builds
and says why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcmemo.abstraction.outcome import AbstractionOutcome
from arcmemo.benchmarks.base import BENCHMARKS, Benchmark, tasks_sha256
from arcmemo.core.records import TaskResult
from arcmemo.core.registry import RegistryError
from arcmemo.memory.schema import Memory
from arcmemo.memory.store import MemoryFileError
from arcmemo.models.accounting import CallRecord
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import RunDirError
from arcmemo.run.summary import summarize_directory
from arcmemo.run.summary_file import SummaryError, load_summary


class ReportError(ValueError):
    """A run directory cannot be reported on; the message names the file and place."""


@dataclass
class RunData:
    """Everything a report shows about one run."""

    path: Path
    label: str
    config: RunConfig | None
    summary: dict[str, Any]
    results: list[TaskResult]
    # The run's benchmark (closed: the report only calls its pure hooks); None if unknown.
    benchmark: Benchmark[Any] | None = None
    tasks: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    input_memory: Memory | None = None
    input_memory_intact: bool = False
    # Entries (concepts and lessons) of each snapshot, oldest first, and the last one
    # itself: a grown memory is hundreds of megabytes in memory, so the others are only
    # counted.
    snapshot_sizes: list[int] = field(default_factory=list)
    last_snapshot: Memory | None = None
    abstraction: list[AbstractionOutcome] = field(default_factory=list)
    cost_by_task: dict[str, float | None] = field(default_factory=dict)

    @property
    def final_memory(self) -> Memory | None:
        """The memory at the end of the run: the last snapshot, else the input memory."""
        return self.last_snapshot if self.last_snapshot is not None else self.input_memory

    @property
    def result_by_id(self) -> dict[str, TaskResult]:
        return {r.task_id: r for r in self.results}


def _costs(calls: list[CallRecord]) -> dict[str, float | None]:
    """Cost per task from the call log; None where some call had no known price."""
    costs: dict[str, float | None] = {}
    for record in calls:
        if record.task_id is None:
            continue
        previous = costs.get(record.task_id, 0.0)
        costs[record.task_id] = (
            None if previous is None or record.cost_usd is None else previous + record.cost_usd
        )
    return costs


def _benchmark(run: RunData) -> str | None:
    """Build the run's benchmark from its configuration; the reason when it cannot be."""
    if run.config is None:
        return "no config.json: the tasks cannot be reloaded"
    try:
        run.benchmark = BENCHMARKS.create(run.config.benchmark)
    except (RegistryError, ImportError) as error:
        return f"tasks not shown: {error}"
    return None


def _load_tasks(run: RunData, data: str | None) -> None:
    """Reload the benchmark's tasks of the run's results (grids, problems, answers)."""
    config, benchmark = run.config, run.benchmark
    if config is None or benchmark is None:
        return
    recorded = config.dataset
    # The file the run read (an AIME split's under the run's ARCMEMO_DATA_DIR), recorded
    # resolved, so the shell the report runs in need not point at it again.
    data = data or config.data or (recorded.path if recorded else None)
    try:
        loaded = benchmark.load(
            split=config.split, data=data, task_ids=config.tasks, limit=config.limit
        )
        if recorded is not None and tasks_sha256(benchmark, loaded) != recorded.sha256:
            current = benchmark.data_origin(split=config.split, data=data)
            run.notes.append(
                f"the tasks reloaded from {current.path or current.version or config.split} "
                f"differ from those the run read ({recorded.path or recorded.version}): "
                "their content hash is not the one in config.json"
            )
    except (ValueError, OSError, ImportError) as error:
        # The report is still useful without grids; say why they are missing.
        source = data or config.split
        run.notes.append(f"tasks of {source!r} could not be reloaded: {error}")
        return
    finally:
        benchmark.close()
    wanted = {r.task_id for r in run.results}
    run.tasks = {benchmark.task_id(t): t for t in loaded if benchmark.task_id(t) in wanted}
    missing = sorted(wanted - set(run.tasks))
    if missing:
        run.notes.append(f"{len(missing)} task(s) not found in the reloaded data: {missing[:5]}")


def _load_memories(run: RunData, rundir: RunDirectory) -> None:
    paths = rundir.snapshots()
    try:
        # Only the last is rebuilt: a grown memory is hundreds of megabytes in memory.
        run.snapshot_sizes = [rundir.snapshot_entries(path) for path in paths[:-1]]
        if paths:
            run.last_snapshot = rundir.snapshot_memory(paths[-1])
    except (MemoryFileError, RunDirError) as error:
        raise ReportError(str(error)) from None
    last = run.last_snapshot
    if last is not None:
        run.snapshot_sizes.append(len(last.concepts) + len(last.lessons))
    config = run.config
    if config is None or config.memory is None:
        return
    # An online run without --memory-out saves over its input: only history tells changes.
    run.input_memory_intact = not (config.update == "online" and config.memory_out is None)
    if not Path(config.memory).exists():
        run.notes.append(f"input memory {config.memory} no longer exists")
        return
    try:
        run.input_memory = Memory.load(config.memory)
    except MemoryFileError as error:
        run.notes.append(f"input memory not shown: {error}")


def _summary(run: RunData, rundir: RunDirectory) -> dict[str, Any]:
    """``summary.json`` (of any version), or for a run that has not written one yet what
    it would say of the results so far."""
    config, benchmark = run.config, run.benchmark
    if config is None:
        return rundir.read_summary() or {}
    try:
        summary = load_summary(rundir, config.benchmark.name)
    except SummaryError as error:
        # An older file the model does not read is still shown as it is.
        run.notes.append(f"summary.json read as it is: {error}")
        return rundir.read_summary() or {}
    if summary is None:
        run.notes.append("no summary.json (the run has not finished): numbers computed here")
        try:
            summary = summarize_directory(rundir, config, benchmark)
        except (KeyError, ValueError):
            # Results the benchmark cannot summarize still have their counts and scores.
            summary = summarize_directory(rundir, config, None)
    if summary.aborted:
        run.notes.append(f"the run stopped before its end: {summary.aborted}")
    return summary.file_dict()


def _read(rundir: RunDirectory, run: RunData, data: str | None) -> None:
    run.results = rundir.ordered_results()
    unavailable = _benchmark(run)
    run.summary = _summary(run, rundir)
    if unavailable:
        run.notes.append(unavailable)
    _load_tasks(run, data)
    _load_memories(run, rundir)
    run.abstraction = rundir.abstraction_outcomes()
    run.cost_by_task = _costs(rundir.calls())


def _range(span: Any, money: bool = False) -> str:
    if not isinstance(span, dict):
        return "?"
    low, high = (span.get(k) for k in ("low", "high"))
    if not isinstance(low, int | float) or not isinstance(high, int | float):
        return "?"

    def text(value: float) -> str:
        return f"${value:,.2f}" if money else f"{round(value):,}"

    return text(low) if low == high else f"{text(low)}-{text(high)}"


def _dry_run_line(rundir: RunDirectory) -> str | None:
    """What a dry run's directory holds and how to get a report, in one line (None when
    ``rundir`` is not a dry run's)."""
    if not rundir.estimate_path.is_file():
        return None
    try:
        estimate = json.loads(rundir.estimate_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        estimate = {}
    total = estimate.get("total") if isinstance(estimate, dict) else None
    total = total if isinstance(total, dict) else {}
    prompts = sum(1 for p in rundir.prompts_dir.glob("*") if p.is_file())
    return (
        f"{rundir.path}: a dry run's directory, with no results to report: "
        f"{rundir.estimate_path.name} estimates {estimate.get('n_tasks', '?')} tasks, "
        f"{_range(total.get('calls'))} requests, {_range(total.get('cost_usd'), money=True)}, "
        f"and {rundir.prompts_dir.name}/ holds {prompts} prompt files; run the same command "
        "without --dry-run, then arcmemo report on its --out"
    )


def load_run(path: Path, *, label: str | None = None, data: str | None = None) -> RunData:
    """Read the run directory ``path``; ``data`` overrides where the tasks are reloaded from."""
    rundir = RunDirectory(Path(path))
    if not rundir.path.is_dir():
        raise ReportError(f"{rundir.path}: no such run directory")
    try:
        config = rundir.read_config()
        if config is None and not rundir.results_path.exists():
            raise ReportError(
                _dry_run_line(rundir)
                or f"{rundir.path}: not a run directory (no config.json or results.jsonl)"
            )
        run = RunData(
            path=rundir.path,
            label=label or rundir.path.resolve().name,
            config=config,
            summary={},
            results=[],
        )
        _read(rundir, run, data)
    except RunDirError as error:
        raise ReportError(str(error)) from None
    return run
