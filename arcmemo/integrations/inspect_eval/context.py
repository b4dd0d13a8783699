"""What one inspect task holds while it runs: arcmemo's run config, benchmark, tasks,
memory and selector, opened once and shared by its samples."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arcmemo.core.records import TaskResult
from arcmemo.memory.schema import Memory
from arcmemo.models.client import ModelClient
from arcmemo.run.config import ResolvedRunConfig, RunConfig
from arcmemo.run.continual import ContinualUpdater
from arcmemo.run.data_settings import DataProvenance
from arcmemo.run.directory.records import Batch
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.resolve import resolve_config
from arcmemo.run.session import create_run_benchmark, load_tasks, memory_access
from arcmemo.selection.base import SELECTORS, Selector

# The solver arcmemo's config records: whichever model inspect evaluates (its --model, known
# only once a sample runs); the solver calls that model through get_model().
INSPECT_MODEL = "inspect:evaluated"


@dataclass
class EvalContext:
    """The open pieces of one inspect task (what :class:`arcmemo.run.session.RunSession`
    holds for ``arcmemo run``), plus the online memory writer when ``update=online``."""

    config: ResolvedRunConfig
    rundir: RunWriter
    benchmark: Any
    tasks: dict[str, Any]
    memory: Memory | None
    selector: Selector
    provenance: DataProvenance
    updater_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _updater: ContinualUpdater | None = None
    _batches: int = 0

    async def remember(
        self, task: Any, result: TaskResult, clients: Mapping[str, ModelClient]
    ) -> None:
        """With ``update=online``, write ``result`` to the memory as a one-task batch of
        arcmemo's online loop (abstraction, statistics, snapshot, saved file), abstracting
        with the ``abstract`` role's client of ``clients`` and judging with ``aux``'s."""
        if self.config.update != "online" or self.memory is None:
            return
        async with self.updater_lock:
            if self._updater is None:
                self._updater = ContinualUpdater(
                    self.config, self.benchmark, self.memory, self.rundir, clients
                )
            batch = Batch(index=self._batches, pass_number=0, task_ids=[result.task_id])
            commit = await self._updater.after_batch(batch, [(task, result, True)])
            self.rundir.write_commit(commit)
            self._batches += 1


def open_context(config: RunConfig) -> EvalContext:
    """Resolve ``config`` and open its benchmark, tasks, memory and selector, failing on bad
    input (a missing file, an unknown task id) before inspect starts any sample."""
    resolved = resolve_config(config)
    rundir = RunWriter(resolved.out)
    rundir.path.mkdir(parents=True, exist_ok=True)
    benchmark = create_run_benchmark(resolved)
    # inspect has no end-of-task hook: the sandbox (a process of its own) closes at exit.
    atexit.register(benchmark.close)
    tasks, provenance = load_tasks(resolved, benchmark)
    # One memory file, one writer, as for `arcmemo run`: an online task holds the memory's
    # writer lock while its process lives.
    lock = contextlib.ExitStack()
    lock.enter_context(memory_access(resolved))
    atexit.register(lock.close)
    memory = rundir.resume_memory(resolved) if resolved.memory is not None else None
    return EvalContext(
        config=resolved,
        rundir=rundir,
        benchmark=benchmark,
        tasks={benchmark.task_id(t): t for t in tasks},
        memory=memory,
        selector=SELECTORS.create(resolved.selector),
        provenance=provenance,
    )
