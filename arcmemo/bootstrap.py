"""Bootstrapping a memory offline: abstract every confirmed solution of a finished run, or a
folder of solution programs (e.g. hand-written seed solutions named ``<task id>.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arcmemo.abstraction.base import AbstractionOutcome, SolvedItem, create_abstractor
from arcmemo.benchmarks.base import Benchmark, create_benchmark
from arcmemo.continual import confirmed_step, solved_item
from arcmemo.memory.ontology import Memory
from arcmemo.memory.store import editing
from arcmemo.models.client import ModelClient
from arcmemo.rundir import RunDirectory, RunDirError


def items_from_run(run_dir: Path, signal: str) -> tuple[Benchmark[Any], list[SolvedItem]]:
    """The confirmed solutions of a finished run, as abstraction inputs."""
    rundir = RunDirectory(run_dir)
    config = rundir.read_config()
    if config is None:
        raise RunDirError(f"{run_dir}: no config.json; is this a run directory?")
    benchmark = create_benchmark(config.benchmark)
    results = rundir.finished()
    # The run's processing order (not the order tasks happened to finish in), so that
    # abstraction, merges and history are reproducible.
    order_path = rundir.path / "task_order.json"
    order = json.loads(order_path.read_text()) if order_path.exists() else sorted(results)
    ids = [i for i in order if i in results]
    tasks = benchmark.load(split=config.split, data=config.data, task_ids=ids, limit=None)
    items = []
    for task in tasks:
        step = confirmed_step(results[benchmark.task_id(task)], signal)
        if step is not None:
            items.append(solved_item(benchmark, task, step))
    return benchmark, items


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
        tasks = benchmark.load(split="training", data=None, task_ids=None, limit=None)
        tasks += benchmark.load(split="evaluation", data=None, task_ids=None, limit=None)
        by_id = {benchmark.task_id(t): t for t in tasks}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise FileNotFoundError(f"{folder}: no ARC-AGI-1 task for {', '.join(missing)}")
        tasks = [by_id[i] for i in ids]
    else:
        tasks = benchmark.load(split=split, data=data, task_ids=ids, limit=None)
    items, rejected = [], []
    for task, path in zip(tasks, files, strict=True):
        source = path.read_text(encoding="utf-8")
        step = benchmark.check(task, f"```python\n{source}\n```")
        if not step.verified:
            rejected.append(path.stem)
            continue
        items.append(
            SolvedItem(
                task_id=path.stem,
                domain=benchmark.domain,
                problem=benchmark.describe(task),
                solution=source,
            )
        )
    return items, rejected


async def abstract_into(
    memory_path: Path,
    items: list[SolvedItem],
    model: ModelClient,
    *,
    memory_format: str,
    on_done: Callable[[AbstractionOutcome], None] | None = None,
) -> list[AbstractionOutcome]:
    """Abstract ``items`` one by one into the memory file, saving after each.

    Items whose task already has a stored solution are skipped, so an interrupted bootstrap
    resumes where it stopped.
    """
    abstractor = create_abstractor(memory_format, actor=model.spec)
    outcomes = []
    for item in items:
        with editing(memory_path) as memory:
            if item.task_id in memory.solutions:
                continue
            outcome = await abstractor.abstract(memory, item, model)
        outcomes.append(outcome)
        if on_done:
            on_done(outcome)
    return outcomes


def memory_summary(memory: Memory) -> str:
    return (
        f"{len(memory.concepts)} concepts, {len(memory.lessons)} lessons, "
        f"{len(memory.types)} types, {len(memory.solutions)} solutions"
    )
