"""Continual test-time learning: grow the memory between batches of a run.

After each batch, every task whose solution is confirmed by the run's write signal is
abstracted into the memory, selection statistics are updated, and the memory is
snapshotted in the run directory and saved (atomically) to ``--memory-out`` or
``--memory``. Later batches, and retries (which reselect), read the grown memory. The write
signals are in :mod:`arcmemo.signals`.
"""

from __future__ import annotations

from typing import Any

from arcmemo.abstraction.base import ABSTRACTORS, AbstractionOutcome, Failure
from arcmemo.benchmarks.base import Benchmark
from arcmemo.config import RunConfig
from arcmemo.memory.ontology import Memory, concept_id
from arcmemo.memory.render import lesson_name
from arcmemo.models.client import ModelCallError, ModelClient
from arcmemo.records import TaskResult
from arcmemo.rundir import RunWriter
from arcmemo.signals import WRITE_SIGNALS, WriteSignal


def record_selection_stats(memory: Memory, result: TaskResult, confirmed: bool) -> None:
    """Count each entry shown in full for the task (first selection and reselections on
    retries), and whether the task's solution was confirmed by the write signal."""
    names = list(result.selection.selected) if result.selection else []
    for attempt in result.attempts:
        for step in attempt.steps:
            names += [n for n in step.concepts if n not in names]
    lessons = {concept_id(lesson_name(i)): les for i, les in enumerate(memory.lessons)}
    for name in names:
        entry = memory.find(name) or lessons.get(concept_id(name))
        if entry is None:
            continue
        entry.stats.selected += 1
        entry.stats.selected_solved += confirmed


class ContinualUpdater:
    """The runner's after-batch hook for ``--update online``.

    It grows ``memory`` in place (the runner reads the same object) and records each batch
    in the run directory.
    """

    def __init__(
        self,
        config: RunConfig,
        benchmark: Benchmark[Any],
        memory: Memory,
        rundir: RunWriter,
        model: ModelClient,
    ) -> None:
        self.config = config
        self.benchmark = benchmark
        self.memory = memory
        self.rundir = rundir
        self.model = model
        self.abstractor = ABSTRACTORS.create(config.memory_format, actor=model.spec)
        signal = config.write_signal or WRITE_SIGNALS.spec(benchmark.defaults.write_signal)
        self.signal: WriteSignal = WRITE_SIGNALS.create(signal)
        self.processed: list[str] = rundir.read_processed()

    async def after_batch(self, done: list[tuple[Any, TaskResult]]) -> None:
        """Abstract confirmed solutions of ``done`` (skipping tasks already processed)."""
        fresh = [(t, r) for t, r in done if r.task_id not in self.processed]
        if not fresh:
            return
        outcomes: list[AbstractionOutcome] = []
        for task, result in fresh:
            step = self.signal.confirmed_step(result)
            record_selection_stats(self.memory, result, step is not None)
            if step is None:
                continue
            item = self.benchmark.solved_item(task, step)
            try:
                outcomes.append(await self.abstractor.abstract(self.memory, item, self.model))
            except ModelCallError as error:
                # The run goes on; the failure is recorded like any unusable answer.
                failure = Failure(stage="model call", error=str(error))
                outcomes.append(
                    AbstractionOutcome(
                        task_id=item.task_id, format=self.abstractor.name, failures=[failure]
                    )
                )
        self.processed += [r.task_id for _, r in fresh]
        self._persist(outcomes)

    def _persist(self, outcomes: list[AbstractionOutcome]) -> None:
        # Snapshot, then the processed list: a crash between the two redoes the batch's
        # abstraction from the previous snapshot, never skips it.
        self.rundir.write_snapshot(self.memory)
        target = self.config.memory_out or self.config.memory
        if target is not None:
            self.memory.save(target)
        self.rundir.append_abstraction(outcomes)
        self.rundir.write_processed(self.processed)
