"""Training a memory: epoch 0 scores the starting memory on the validation tasks; epoch k
(1..N) makes one pass over the train tasks with memory writes (an ordinary ``--update
online`` run, under the run's write signal and schedule), then a frozen pass over the
validation tasks (``--update none``). Every pass is an ordinary run directory, so a
training resumes as runs do: a rerun of the same command redoes nothing that finished and
pays for no call twice; ``training.json`` is rebuilt from those directories.

Layout of the training directory ``DIR``::

    DIR/training.json              the record (arcmemo.train.record)
    DIR/best-memory.json           the memory of the best epoch
    DIR/memory/epoch-NNN.json      the memory after epoch NNN (000: the starting memory)
    DIR/epoch-NNN/train/           epoch NNN's train run (none for epoch 0)
    DIR/epoch-NNN/validation/      epoch NNN's validation run
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.core.files import atomic_write_text
from arcmemo.core.progress import ProgressSink
from arcmemo.core.records import TaskResult
from arcmemo.memory.diff import concept_changes
from arcmemo.memory.schema import Memory
from arcmemo.memory.store import dump_memory, load_memory
from arcmemo.models.client import ModelClient
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.estimate import RunEstimate
from arcmemo.run.pipeline import dry_run, run_benchmark
from arcmemo.train.record import (
    BEST_MEMORY_NAME,
    EpochRecord,
    MemorySize,
    Revisit,
    RoleUsage,
    TrainingError,
    TrainingRecord,
    TrainPart,
    ValidationPart,
    best_epoch,
    read_record,
)


@dataclass(frozen=True)
class TrainingPlan:
    """What a training adds to the run settings (the train split is the config's own
    ``--split``/``--data``/``--tasks``)."""

    val_split: str | None
    val_tasks: list[str] | None
    epochs: int
    patience: int | None = None
    # unsolved (default): a later epoch re-attempts only the train tasks no earlier epoch
    # wrote a solution of; a written task's concepts are already in memory, and solving it
    # again would pay for the same answer and write its concepts twice.
    revisit: Revisit = "unsolved"


def epoch_dir(out: Path, epoch: int) -> Path:
    return out / f"epoch-{epoch:03d}"


def memory_path(out: Path, epoch: int) -> Path:
    return out / "memory" / f"epoch-{epoch:03d}.json"


def derived(base: RunConfig, **update: Any) -> RunConfig:
    """``base`` with ``update`` over it, validated again (derived fields are derived anew)."""
    data = base.model_dump()
    for name in ("leaks_test_labels", "fingerprints", "dataset", "forced_resume"):
        data.pop(name, None)
    data.update(update)
    return type(base).model_validate(data)


def task_lists(base: RunConfig, plan: TrainingPlan) -> tuple[list[str], list[str]]:
    """The train and validation task ids; an overlap is an error naming the shared ids
    (checked before any call)."""
    benchmark = BENCHMARKS.create(base.benchmark)
    try:
        train = benchmark.load(
            split=base.split, data=base.data, task_ids=base.tasks, limit=base.limit
        )
        val = benchmark.load(
            split=plan.val_split, data=None, task_ids=plan.val_tasks, limit=base.limit
        )
        train_ids = [benchmark.task_id(t) for t in train]
        val_ids = [benchmark.task_id(t) for t in val]
    finally:
        benchmark.close()
    shared = [i for i in train_ids if i in set(val_ids)]
    if shared:
        raise TrainingError(
            f"train and validation tasks overlap ({len(shared)} shared): {', '.join(shared)}"
        )
    if not train_ids or not val_ids:
        raise TrainingError("training needs at least one train and one validation task")
    return train_ids, val_ids


def starting_memory(base: RunConfig, out: Path) -> Path:
    """``memory/epoch-000.json``: a copy of ``--memory``, else an empty memory of the
    benchmark's domain (written once; a resume keeps it)."""
    path = memory_path(out, 0)
    if not path.exists():
        if base.memory is not None:
            text = dump_memory(load_memory(Path(base.memory)))
        else:
            domain = BENCHMARKS.get(base.benchmark.name).cls.domain
            text = dump_memory(Memory(domain=domain))
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
    return path


def memory_size(memory: Memory) -> MemorySize:
    live = [c for c in memory.concepts if not c.retired]
    return MemorySize(
        concepts=len(live),
        lessons=len(memory.lessons),
        functions=sum(len(c.functions) for c in live),
    )


def memory_changes(old: Memory, new: Memory) -> tuple[list[str], list[str], list[str]]:
    """Concepts added, changed (content, not statistics) and retired (or removed)."""
    before = {c.id: c for c in old.concepts}
    after = {c.id: c for c in new.concepts}
    added = [c.name for c in new.concepts if c.id not in before and not c.retired]
    retired = [c.name for c in old.concepts if c.id not in after and not c.retired]
    retired += [
        c.name for c in new.concepts if c.retired and c.id in before and not before[c.id].retired
    ]
    changed = [
        c.name
        for c in new.concepts
        if c.id in before
        and not c.retired
        and any(not line.startswith("stats.") for line in concept_changes(before[c.id], c))
    ]
    return added, changed, retired


def attempt_scores(results: list[TaskResult]) -> list[float]:
    """The run's score from attempt j alone, for each attempt index j: the mean over tasks
    of the share of test outputs attempt j got right (a task without attempt j scores 0)."""
    if not results:
        return []
    n = max((len(r.attempts) for r in results), default=0)
    scores = []
    for j in range(n):
        total = 0.0
        for result in results:
            if j < len(result.attempts) and result.attempts[j].correct:
                correct = result.attempts[j].correct
                total += sum(correct) / len(correct)
        scores.append(total / len(results))
    return scores


def _part_fields(run_dir: Path, out: Path, summary: Mapping[str, Any]) -> dict[str, Any]:
    roles = {
        name: RoleUsage(
            calls=usage.get("calls", 0),
            cache_hits=usage.get("cache_hits", 0),
            cost_usd=usage.get("cost_usd"),
        )
        for name, usage in (summary.get("roles") or {}).items()
    }
    return {
        "run_dir": run_dir.relative_to(out).as_posix(),
        "n_tasks": summary.get("n_tasks", 0),
        "n_solved": summary.get("n_solved"),
        "score": summary.get("score"),
        "complete": bool(summary.get("complete", False)),
        "calls": summary.get("calls", 0),
        "cost_usd": summary.get("cost_usd"),
        "roles": roles,
    }


def validation_part(
    run_dir: Path, out: Path, summary: Mapping[str, Any], headline: tuple[str, ...]
) -> ValidationPart:
    per_attempt = attempt_scores(RunDirectory(run_dir).ordered_results())
    metrics = {
        name: float(summary[name])
        for name in headline
        if isinstance(summary.get(name), (int, float)) and not isinstance(summary[name], bool)
    }
    return ValidationPart(
        **_part_fields(run_dir, out, summary),
        metric=str(summary.get("score_metric") or "score"),
        spread=statistics.stdev(per_attempt) if len(per_attempt) > 1 else None,
        per_attempt=per_attempt,
        metrics=metrics,
    )


class TrainingIncomplete(TrainingError):
    """A pass ended with tasks in error: its numbers are not a result; rerun to retry."""


async def run_training(
    base: RunConfig,
    plan: TrainingPlan,
    *,
    progress: Callable[[], ProgressSink] | None = None,
    models: Mapping[str, ModelClient] | None = None,
    on_epoch: Callable[[EpochRecord, TrainingRecord], None] | None = None,
    on_pass: Callable[[str, RunConfig], None] | None = None,
) -> TrainingRecord:
    """Train (or resume training) into ``base.out``; returns and writes ``training.json``.

    ``base`` holds every run setting (the train split's data among them); ``models``
    overrides role clients as in :func:`~arcmemo.run.pipeline.run_benchmark`.
    """
    out = Path(base.out)
    train_ids, val_ids = task_lists(base, plan)
    earlier = read_record(out)
    if earlier is not None and (earlier.train_tasks, earlier.val_tasks) != (train_ids, val_ids):
        raise TrainingError(f"{out} holds a training on other tasks; give this one its own --out")
    start = starting_memory(base, out)
    headline = BENCHMARKS.get(base.benchmark.name).cls.headline_metrics
    record = TrainingRecord(
        benchmark=base.benchmark.name,
        train_split=base.split,
        val_split=plan.val_split,
        train_tasks=train_ids,
        val_tasks=val_ids,
        epochs_planned=plan.epochs,
        patience=plan.patience,
        revisit=plan.revisit,
        metric="score",
    )

    async def run_pass(config: RunConfig) -> Mapping[str, Any]:
        if on_pass is not None:
            on_pass(str(Path(config.out).relative_to(out)), config)
        summary = await run_benchmark(
            config, progress=progress() if progress else None, models=models
        )
        if not summary.get("complete", False):
            raise TrainingIncomplete(
                f"{config.out}: {summary.get('n_errors', 0)} task(s) ended in error; the "
                "training stops here (no result). Run the same command again to retry them"
            )
        return summary

    written: set[str] = set()
    previous = load_memory(start)
    since_best = 0
    for epoch in range(plan.epochs + 1):
        snapshot = memory_path(out, epoch)
        train: TrainPart | None = None
        if epoch > 0:
            todo = [i for i in train_ids if plan.revisit == "all" or i not in written]
            if not todo:
                record.stopped = (
                    f"before epoch {epoch}: every train task's solution is in memory "
                    "(--revisit all re-attempts them)"
                )
                break
            train_dir = epoch_dir(out, epoch) / "train"
            config = derived(
                base,
                tasks=todo,
                limit=None,
                update="online",
                memory=memory_path(out, epoch - 1),
                memory_out=snapshot,
                out=train_dir,
            )
            summary = await run_pass(config)
            commit = RunDirectory(train_dir).read_commit()
            now_written = sorted(commit.written) if commit else []
            written.update(now_written)
            if not snapshot.exists():  # nothing was written: the memory is unchanged
                atomic_write_text(snapshot, memory_path(out, epoch - 1).read_text("utf-8"))
            train = TrainPart(**_part_fields(train_dir, out, summary), written=now_written)
        val_dir = epoch_dir(out, epoch) / "validation"
        config = derived(
            base,
            split=plan.val_split,
            data=None,
            tasks=val_ids,
            limit=None,
            update="none",
            memory=snapshot,
            memory_out=None,
            out=val_dir,
        )
        validation = validation_part(val_dir, out, await run_pass(config), headline)
        memory = load_memory(snapshot)
        added, changed, retired = memory_changes(previous, memory)
        previous = memory
        entry = EpochRecord(
            epoch=epoch,
            train=train,
            validation=validation,
            memory=snapshot.relative_to(out).as_posix(),
            memory_size=memory_size(memory),
            added=added,
            changed=changed,
            retired=retired,
        )
        best_before = record.best_epoch
        record.epochs.append(entry)
        record.metric = validation.metric
        record.best_epoch = best_epoch(record.epochs)
        if record.best_epoch is not None:
            best_source = memory_path(out, record.best_epoch)
            atomic_write_text(out / BEST_MEMORY_NAME, best_source.read_text("utf-8"))
        since_best = 0 if record.best_epoch != best_before else since_best + 1
        record.updated_at = datetime.now(timezone.utc)
        record.save(out)
        if on_epoch is not None:
            on_epoch(entry, record)
        if epoch > 0 and plan.patience is not None and since_best >= plan.patience:
            if epoch < plan.epochs:
                record.stopped = (
                    f"early stop after epoch {epoch}: {plan.patience} epoch(s) without a "
                    f"better validation {validation.metric}"
                )
            break
    record.complete = True
    record.updated_at = datetime.now(timezone.utc)
    record.save(out)
    return record


@dataclass(frozen=True)
class EpochEstimate:
    epoch: int
    train: RunEstimate | None
    validation: RunEstimate


async def estimate_training(base: RunConfig, plan: TrainingPlan) -> list[EpochEstimate]:
    """A dry run of every epoch (under ``DIR/dry-run/``), calling nothing: the prompts are
    rendered with the starting memory, and every train pass is priced over all train tasks
    (an upper bound under ``--revisit unsolved``, and the memory grows as epochs go)."""
    out = Path(base.out)
    train_ids, val_ids = task_lists(base, plan)
    start = starting_memory(base, out / "dry-run")
    val_config = derived(
        base, split=plan.val_split, data=None, tasks=val_ids, limit=None, update="none",
        memory=start, memory_out=None, out=out / "dry-run" / "validation",
    )  # fmt: skip
    train_config = derived(
        base, tasks=train_ids, limit=None, update="online", memory=start,
        memory_out=out / "dry-run" / "memory" / "after-train.json",
        out=out / "dry-run" / "train",
    )  # fmt: skip
    validation = (await dry_run(val_config)).estimate
    train = (await dry_run(train_config)).estimate
    return [
        EpochEstimate(epoch=e, train=None if e == 0 else train, validation=validation)
        for e in range(plan.epochs + 1)
    ]
