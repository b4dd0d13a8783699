"""Bootstrapping a memory offline: abstract every confirmed solution of a finished run, or a
folder of solution programs (e.g. hand-written seed solutions named ``<task id>.py``).

From a run, a memory format with the option ``contrast`` also gets the contrastive write of
an online run (:mod:`arcmemo.abstraction.contrast`): a task whose solution is confirmed and
whose final attempts include a passing and a failing one (by the contrast's signal, guarded
as online: :func:`arcmemo.signals.contrast.contrast_signal`) is contrasted after its
ordinary abstraction."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from arcmemo.abstraction.base import create_abstractor
from arcmemo.abstraction.contrast import ContrastPair, contrast_pair
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
from arcmemo.signals.contrast import contrast_signal


def items_from_run(run_dir: Path, signal: ComponentSpec | str) -> list[SolvedItem]:
    """The confirmed solutions of a finished run, as abstraction inputs."""
    items, _ = writes_from_run(run_dir, signal)
    return items


def writes_from_run(
    run_dir: Path,
    signal: ComponentSpec | str,
    *,
    contrast: bool = False,
    contrast_named: str | None = None,
) -> tuple[list[SolvedItem], dict[str, ContrastPair]]:
    """The confirmed solutions of a finished run, and with ``contrast`` the contrast pair
    of each of their tasks that has a passing and a failing final attempt (by the signal
    ``contrast_named``, else ``signal``; a test-label signal is refused unless named, with
    :class:`arcmemo.signals.contrast.ContrastSignalError`, before anything is loaded)."""
    rundir = RunDirectory(run_dir)
    config = rundir.require_config()
    benchmark = BENCHMARKS.create(config.benchmark, sandbox=SharedSandbox(config.sandbox))
    confirm = WRITE_SIGNALS.create(signal)
    splitter = contrast_signal(contrast_named, confirm) if contrast else None
    # The run's processing order (not the order tasks happened to finish in), so that
    # abstraction, merges and history are reproducible.
    results = {r.task_id: r for r in rundir.ordered_results()}
    try:
        tasks = benchmark.load(
            split=config.split, data=config.data, task_ids=list(results), limit=None
        )
        items = []
        pairs: dict[str, ContrastPair] = {}
        for task in tasks:
            result = results[benchmark.task_id(task)]
            step = confirm.confirmed_step(result)
            if step is None:
                continue
            items.append(benchmark.solved_item(task, step))
            if splitter is None:
                continue
            problem = benchmark.describe(task)
            split = splitter.split(result)
            pair = contrast_pair(result, split, domain=benchmark.domain, problem=problem)
            if pair is not None:
                pairs[result.task_id] = pair
    finally:
        benchmark.close()
    return items, pairs


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
    clients: Mapping[str, ModelClient],
    *,
    memory_format: ComponentSpec | str,
    log_path: Path | None = None,
    on_done: Callable[[AbstractionOutcome], None] | None = None,
    pairs: Mapping[str, ContrastPair] | None = None,
    on_contrast: Callable[[AbstractionOutcome], None] | None = None,
) -> list[AbstractionOutcome]:
    """Abstract ``items`` one by one into the memory file with the abstract role's client of
    ``clients`` (by role name: :mod:`arcmemo.core.roles`), saving after each (and appending
    each outcome to ``log_path``); after an item, the contrast of its task in ``pairs``
    (task id -> pair), saved on its own and passed to ``on_contrast`` (default ``on_done``).

    Items whose task already has a stored solution are skipped, and contrasts whose task
    already sources a guarding pitfall (:func:`contrasted`), so an interrupted bootstrap
    resumes where it stopped. A contrast whose answer could not be used wrote nothing: a
    rerun asks it again.
    """
    outcomes = []
    # A live online run writing the same memory would lose these writes, or they its own.
    holder = f"pid {os.getpid()}, arcmemo abstract"
    with held_lock(writer_lock_path(memory_path), holder=holder):
        abstractor = create_abstractor(memory_format, clients)
        if pairs and not abstractor.contrasts:
            raise ValueError(
                f"memory format {abstractor.name!r}: contrast pairs given without its option "
                "contrast=true"
            )
        for item in items:
            pair = (pairs or {}).get(item.task_id)
            for write in ("abstract", "contrast"):
                with editing(memory_path) as memory:
                    if write == "abstract" and item.task_id not in memory.solutions:
                        outcome = await abstractor.abstract(memory, item, clients)
                    elif write == "contrast" and pair and not contrasted(memory, item.task_id):
                        outcome = await abstractor.learn_from_contrast(memory, pair, clients)
                    else:
                        continue
                outcomes.append(outcome)
                if log_path is not None:
                    append_outcomes(log_path, [outcome])
                report = on_contrast if write == "contrast" and on_contrast else on_done
                if report:
                    report(outcome)
    return outcomes


def contrasted(memory: Memory, task_id: str) -> bool:
    """Whether a contrast of ``task_id`` is in ``memory``: a pitfall that guards an entry
    and names the task among its sources."""
    return any(
        lesson.kind == "pitfall" and lesson.guards and task_id in lesson.provenance.sources
        for lesson in memory.lessons
    )


def memory_summary(memory: Memory) -> str:
    return (
        f"{len(memory.concepts)} concepts, {len(memory.lessons)} lessons, "
        f"{len(memory.types)} types, {len(memory.solutions)} solutions"
    )
