"""Reading a run directory into the data a report shows.

Read-only: unlike :meth:`arcmemo.rundir.RunDirectory.finished`, a torn last line of
``results.jsonl`` is skipped, never cut off, so reporting on a run in progress is safe.
The benchmark's tasks are reloaded from the run's configuration (to draw ARC grids and the
expected outputs); when that fails the report still builds and says why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from arcmemo.abstraction.base import AbstractionOutcome
from arcmemo.benchmarks.base import TaskResult, create_benchmark
from arcmemo.config import RunConfig
from arcmemo.memory.ontology import Memory
from arcmemo.memory.store import MemoryFileError
from arcmemo.models.client import CallRecord


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
    domain: str = "unknown"
    tasks: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    input_memory: Memory | None = None
    input_memory_intact: bool = False
    snapshots: list[Memory] = field(default_factory=list)
    abstraction: list[AbstractionOutcome] = field(default_factory=list)
    cost_by_task: dict[str, float | None] = field(default_factory=dict)

    @property
    def final_memory(self) -> Memory | None:
        """The memory at the end of the run: the last snapshot, else the input memory."""
        return self.snapshots[-1] if self.snapshots else self.input_memory

    @property
    def result_by_id(self) -> dict[str, TaskResult]:
        return {r.task_id: r for r in self.results}


def _json_lines(path: Path, model: type[BaseModel]) -> list[Any]:
    """Validated lines of a JSON-lines file; a torn (unterminated) last line is skipped."""
    if not path.exists():
        return []
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.endswith("\n"):
                break  # written by a run still in progress, or cut by a crash
            if not line.strip():
                continue
            try:
                records.append(model.model_validate_json(line))
            except ValidationError as error:
                first = error.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) or "line"
                raise ReportError(
                    f"{path}, line {number}: not a valid {model.__name__} ({where}: {first['msg']})"
                ) from None
    return records


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ReportError(
            f"{path}: not valid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None


def _read_config(path: Path) -> RunConfig | None:
    if not path.exists():
        return None
    try:
        return RunConfig.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as error:
        raise ReportError(f"{path}: not a valid run config:\n{error}") from None


def _ordered(results: list[TaskResult], order_path: Path) -> list[TaskResult]:
    """Results in the run's processing order (``task_order.json``), later lines winning."""
    by_id = {r.task_id: r for r in results}
    order: list[str] = []
    if order_path.exists():
        raw = _read_json(order_path)
        if isinstance(raw, list):
            order = [str(i) for i in raw]
    ordered = [by_id[i] for i in order if i in by_id]
    seen = {r.task_id for r in ordered}
    ordered += [r for r in by_id.values() if r.task_id not in seen]
    return ordered


def _costs(calls_path: Path) -> dict[str, float | None]:
    """Cost per task from the call log; None where some call had no known price."""
    costs: dict[str, float | None] = {}
    if not calls_path.exists():
        return costs
    with open(calls_path, encoding="utf-8") as handle:
        for line in handle:
            try:
                record = CallRecord.model_validate_json(line)
            except ValidationError:
                continue  # a torn line carries no completed call
            if record.task_id is None:
                continue
            previous = costs.get(record.task_id, 0.0)
            costs[record.task_id] = (
                None if previous is None or record.cost_usd is None else previous + record.cost_usd
            )
    return costs


def _load_tasks(run: RunData, data: str | None) -> None:
    """Reload the benchmark's tasks of the run's results (grids, problems, answers)."""
    config = run.config
    if config is None:
        run.notes.append("no config.json: the tasks cannot be reloaded")
        return
    try:
        benchmark = create_benchmark(config.benchmark)
    except KeyError as error:
        run.notes.append(f"tasks not shown: {error.args[0]}")
        return
    run.domain = benchmark.domain
    try:
        loaded = benchmark.load(
            split=config.split, data=data or config.data, task_ids=None, limit=None
        )
    except (ValueError, OSError, ImportError) as error:
        # The report is still useful without grids; say why they are missing.
        source = data or config.data or config.split
        run.notes.append(f"tasks of {source!r} could not be reloaded: {error}")
        return
    finally:
        benchmark.close()
    wanted = {r.task_id for r in run.results}
    run.tasks = {benchmark.task_id(t): t for t in loaded if benchmark.task_id(t) in wanted}
    missing = sorted(wanted - set(run.tasks))
    if missing:
        run.notes.append(f"{len(missing)} task(s) not found in the reloaded data: {missing[:5]}")


def _load_memories(run: RunData) -> None:
    config = run.config
    memory_dir = run.path / "memory"
    snapshot_paths = sorted(p for p in memory_dir.glob("batch-*.json") if p.suffix == ".json")
    for path in snapshot_paths:
        try:
            run.snapshots.append(Memory.load(path))
        except MemoryFileError as error:
            raise ReportError(str(error)) from None
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


def _fallback_summary(run: RunData) -> dict[str, Any]:
    """What ``summary.json`` would say, for a run that has not written one yet."""
    results = run.results
    summary: dict[str, Any] = {
        "n_tasks": len(results),
        "n_solved": sum(r.solved for r in results),
        "n_errors": sum(r.error is not None for r in results),
        "score": sum(r.score for r in results) / len(results) if results else 0.0,
    }
    if run.config is not None:
        summary["benchmark"] = run.config.benchmark
        summary["model"] = run.config.model
        try:
            benchmark = create_benchmark(run.config.benchmark)
            summary.update(benchmark.summarize(results, run.config.attempts))
        except (KeyError, ValueError):
            pass  # the basic counts above still stand
    return summary


def load_run(path: Path, *, label: str | None = None, data: str | None = None) -> RunData:
    """Read the run directory ``path``; ``data`` overrides where the tasks are reloaded from."""
    path = Path(path)
    if not path.is_dir():
        raise ReportError(f"{path}: no such run directory")
    results_path = path / "results.jsonl"
    config = _read_config(path / "config.json")
    if config is None and not results_path.exists():
        raise ReportError(f"{path}: not a run directory (no config.json or results.jsonl)")
    results = _ordered(_json_lines(results_path, TaskResult), path / "task_order.json")
    run = RunData(
        path=path,
        label=label or path.resolve().name,
        config=config,
        summary={},
        results=results,
    )
    summary_path = path / "summary.json"
    if summary_path.exists():
        summary = _read_json(summary_path)
        if not isinstance(summary, dict):
            raise ReportError(f"{summary_path}: expected a JSON object")
        run.summary = summary
    else:
        run.notes.append("no summary.json (the run has not finished): numbers computed here")
        run.summary = _fallback_summary(run)
    _load_tasks(run, data)
    _load_memories(run)
    run.abstraction = _json_lines(path / "abstraction.jsonl", AbstractionOutcome)
    run.cost_by_task = _costs(path / "calls.jsonl")
    return run
