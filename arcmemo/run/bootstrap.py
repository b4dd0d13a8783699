"""Bootstrapping a memory offline: abstract every confirmed solution of a finished run, or a
folder of solution programs (e.g. hand-written seed solutions named ``<task id>.py``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arcmemo.abstraction.base import ABSTRACTORS
from arcmemo.abstraction.outcome import AbstractionOutcome, append_outcomes
from arcmemo.benchmarks.base import BENCHMARKS, Benchmark, SharedSandbox
from arcmemo.core.files import held_lock
from arcmemo.core.records import SolvedItem, Step
from arcmemo.core.registry import ComponentSpec
from arcmemo.memory.schema import Memory
from arcmemo.memory.store import editing
from arcmemo.models.client import ModelClient
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.session import writer_lock_path
from arcmemo.signals.base import WRITE_SIGNALS


def items_from_run(run_dir: Path, signal: ComponentSpec | str) -> list[SolvedItem]:
    """The confirmed solutions of a finished run, as abstraction inputs."""
    rundir = RunDirectory(run_dir)
    config = rundir.require_config()
    benchmark = BENCHMARKS.create(config.benchmark, sandbox=SharedSandbox(config.sandbox))
    confirm = WRITE_SIGNALS.create(signal)
    # The run's processing order (not the order tasks happened to finish in), so that
    # abstraction, merges and history are reproducible.
    results = {r.task_id: r for r in rundir.ordered_results()}
    try:
        tasks = benchmark.load(
            split=config.split, data=config.data, task_ids=list(results), limit=None
        )
        items = []
        for task in tasks:
            step = confirm.confirmed_step(results[benchmark.task_id(task)])
            if step is not None:
                items.append(benchmark.solved_item(task, step))
    finally:
        benchmark.close()
    return items


def items_from_programs(
    folder: Path, benchmark: Benchmark[Any], *, split: str | None, data: str | None
) -> tuple[list[SolvedItem], list[str]]:
    """Programs named ``<task id>.py`` that pass their task's train pairs, and the ids of
    those that do not (they are not abstracted)."""
    files = sorted(folder.glob("*.py"))
    if not files:
        raise FileNotFoundError(f"{folder}: no <task id>.py program files")
    ids = [f.stem for f in files]
    if data is None and split is None:
        tasks = benchmark.find_tasks(ids)
    else:
        tasks = benchmark.load(split=split, data=data, task_ids=ids, limit=None)
    items, rejected = [], []
    for task, path in zip(tasks, files, strict=True):
        completion = f"```python\n{path.read_text(encoding='utf-8')}\n```"
        check = benchmark.check(task, completion)
        if not check.verified:
            rejected.append(path.stem)
            continue
        items.append(
            benchmark.solved_item(task, Step(**dict(check), round=0, completion=completion))
        )
    return items, rejected


async def abstract_into(
    memory_path: Path,
    items: list[SolvedItem],
    model: ModelClient,
    *,
    memory_format: ComponentSpec | str,
    log_path: Path | None = None,
    on_done: Callable[[AbstractionOutcome], None] | None = None,
) -> list[AbstractionOutcome]:
    """Abstract ``items`` one by one into the memory file, saving after each (and appending
    each outcome to ``log_path``).

    Items whose task already has a stored solution are skipped, so an interrupted bootstrap
    resumes where it stopped.
    """
    outcomes = []
    # A live online run writing the same memory would lose these writes, or they its own.
    holder = f"pid {os.getpid()}, arcmemo abstract"
    with held_lock(writer_lock_path(memory_path), holder=holder):
        abstractor = ABSTRACTORS.create(memory_format, actor=model.spec)
        for item in items:
            with editing(memory_path) as memory:
                if item.task_id in memory.solutions:
                    continue
                outcome = await abstractor.abstract(memory, item, model)
            outcomes.append(outcome)
            if log_path is not None:
                append_outcomes(log_path, [outcome])
            if on_done:
                on_done(outcome)
    return outcomes


def memory_summary(memory: Memory) -> str:
    return (
        f"{len(memory.concepts)} concepts, {len(memory.lessons)} lessons, "
        f"{len(memory.types)} types, {len(memory.solutions)} solutions"
    )
