"""Continual test-time learning: grow the memory between batches of a run.

After each batch, every task whose solution is newly confirmed by the run's write signal is
abstracted into the memory, selection statistics are updated for the tasks that are done,
and the memory is snapshotted in the run directory and saved (atomically) to
``--memory-out`` or ``--memory``. Later batches, and retries (which select again), read
the grown memory; with the passes schedule a retry of pass p sees every batch before it.
The write signals are in :mod:`arcmemo.signals.base`; the run's summary reports, after the fact,
how often they were right (:func:`arcmemo.run.summary.write_precision`).
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from typing import Any

from arcmemo.abstraction.base import create_abstractor
from arcmemo.abstraction.contrast import contrast_pair
from arcmemo.abstraction.outcome import AbstractionOutcome, Failure
from arcmemo.abstraction.pitfall import failed_item
from arcmemo.benchmarks.base import Benchmark
from arcmemo.core.records import Step, TaskResult
from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import AUX, with_fallbacks
from arcmemo.memory.attribution import attribute_task, record_attribution
from arcmemo.memory.judge import judge_usage
from arcmemo.memory.render import lesson_name
from arcmemo.memory.schema import Memory, concept_id
from arcmemo.memory.store import checked_dump, save_checked_text
from arcmemo.models.client import ModelClient
from arcmemo.models.retry import ModelCallError
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.records import Batch, BatchCommit, UnwrittenStep, WrittenStep
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.runner import BatchItem
from arcmemo.signals.base import WRITE_SIGNALS, WriteSignal
from arcmemo.signals.contrast import contrast_signal


def run_write_signal(config: RunConfig, benchmark: Benchmark[Any]) -> ComponentSpec:
    """What confirms a solution in this run: ``--write-signal``, else the benchmark's."""
    return config.write_signal or WRITE_SIGNALS.spec(benchmark.defaults.write_signal)


def record_selection_stats(memory: Memory, result: TaskResult, confirmed: bool) -> None:
    """Count each entry shown in full for the task (every prompt variant's selection and
    reselections on retries, in prompts the solver answered: :attr:`TaskResult.shown`), each
    entry those answers cited (:attr:`TaskResult.cited`, with ``--cite``), and whether the
    task's solution was confirmed by the write signal."""
    lessons = {concept_id(lesson_name(i)): les for i, les in enumerate(memory.lessons)}
    # Every name is looked up before any count changes: a count is an edit, and an edit
    # drops the memory's id index (one lookup after each would rebuild it).
    entries = [memory.find(name) or lessons.get(concept_id(name)) for name in result.shown]
    cited = [memory.find(name) or lessons.get(concept_id(name)) for name in result.cited]
    for entry in entries:
        if entry is None:
            continue
        entry.stats.selected += 1
        entry.stats.selected_solved += confirmed
    for entry in cited:  # only shown entries are ever cited (Step.cited)
        if entry is None:
            continue
        entry.stats.cited += 1
        entry.stats.cited_solved += confirmed


class ContinualUpdater:
    """The runner's after-batch hook for ``--update online``.

    It writes with the abstract role's client of ``clients`` and judges attribution with the
    aux role's (:mod:`arcmemo.core.roles`; a role left out calls its fallback's). It grows
    ``memory`` in place (the runner reads the same object) and records each batch
    in the run directory. After each batch: every task of it whose solution the write
    signal confirms, and that has not been written before, is abstracted (in batch order);
    every task whose result is final is counted in the selection statistics; then the
    memory is snapshotted as ``memory/batch-NNNN.delta.json`` and saved, and the abstraction
    outcomes are logged. What it returns goes into the batch's commit, which the runner
    writes last: a crash before it leaves the batch to be redone from the previous snapshot.
    """

    def __init__(
        self,
        config: RunConfig,
        benchmark: Benchmark[Any],
        memory: Memory,
        rundir: RunWriter,
        clients: Mapping[str, ModelClient],
    ) -> None:
        self.config = config
        self.benchmark = benchmark
        self.memory = memory
        self.rundir = rundir
        self.clients = with_fallbacks(clients)
        self.abstractor = create_abstractor(config.memory_format, self.clients)
        self.signal: WriteSignal = WRITE_SIGNALS.create(run_write_signal(config, benchmark))
        self.contrast: WriteSignal | None = (
            contrast_signal(self.abstractor.contrast_signal, self.signal)
            if self.abstractor.contrasts
            else None
        )
        commit = rundir.read_commit()
        self.processed: list[str] = list(commit.processed) if commit else []
        self.written: dict[str, WrittenStep] = dict(commit.written) if commit else {}
        self.unwritten: dict[str, UnwrittenStep] = dict(commit.unwritten) if commit else {}
        if commit is None:
            rundir.write_initial_memory(memory)

    async def _write(
        self, task_id: str, write: Coroutine[Any, Any, AbstractionOutcome]
    ) -> AbstractionOutcome:
        try:
            return await write
        except ModelCallError as error:
            # The run goes on; the failure is recorded like any unusable answer.
            failure = Failure(stage="model call", error=str(error))
            return AbstractionOutcome(
                task_id=task_id, format=self.abstractor.name, failures=[failure]
            )

    async def _contrast(self, task: Any, result: TaskResult) -> list[AbstractionOutcome]:
        """The contrastive write of a task with a passing and a failing attempt (none else)."""
        assert self.contrast is not None
        problem = self.benchmark.describe(task)
        pair = contrast_pair(
            result, self.contrast.split(result), domain=self.benchmark.domain, problem=problem
        )
        if pair is None:
            return []
        write = self.abstractor.learn_from_contrast(self.memory, pair, self.clients)
        return [await self._write(result.task_id, write)]

    async def _judge(self, result: TaskResult, solution: Step | None) -> dict[str, bool] | None:
        """The aux model's attribution opinions, with ``attribution_judge`` (else None)."""
        if not self.config.attribution_judge:
            return None
        try:
            return await judge_usage(
                self.clients[AUX], self.memory, result, solution, domain=self.benchmark.domain
            )
        except ModelCallError:
            return None  # the lexical verdicts stand

    async def after_batch(self, batch: Batch, done: list[BatchItem]) -> BatchCommit:
        """Write the batch's newly confirmed solutions and final statistics to memory."""
        outcomes: list[AbstractionOutcome] = []
        for task, result, final in done:
            step = None if result.task_id in self.written else self.signal.confirmed_step(result)
            if final and result.error is None and result.task_id not in self.processed:
                confirmed = step is not None or result.task_id in self.written
                record_selection_stats(self.memory, result, confirmed)
                solution = step or located_step(result, self.written.get(result.task_id))
                judged = await self._judge(result, solution)
                attribution = attribute_task(
                    self.memory, result, solution, judged, ignore=self.benchmark.entry_points
                )
                record_attribution(self.memory, attribution)
                self.processed.append(result.task_id)
                if solution is None and self.abstractor.writes_pitfalls:
                    failed = failed_item(
                        result, domain=self.benchmark.domain, problem=self.benchmark.describe(task)
                    )
                    if failed is not None:
                        outcomes.append(
                            await self._write(
                                result.task_id,
                                self.abstractor.learn_from_failure(
                                    self.memory, failed, self.clients
                                ),
                            )
                        )
            if step is None:
                continue
            item = self.benchmark.solved_item(task, step)
            outcome = await self._write(
                item.task_id, self.abstractor.abstract(self.memory, item, self.clients)
            )
            outcomes.append(outcome)
            if self.contrast is not None:
                outcomes += await self._contrast(task, result)
            chosen = written_step(result, step)
            if outcome.failures and not outcome.written:
                # Nothing of it reached the memory: recorded as such (the summary's abstract
                # errors) and left out of `written`, so that a rerun writes it again.
                first = outcome.failures[0]
                self.unwritten[result.task_id] = UnwrittenStep(
                    **chosen.model_dump(), error=f"{first.stage}: {first.error}"
                )
            else:
                self.written[result.task_id] = chosen
                self.unwritten.pop(result.task_id, None)
        target = self.config.memory_out or self.config.memory
        # One checked dump serves the snapshot and the saved file (the same text): the
        # check parses the whole memory again, a second of a batch at 30,000 concepts.
        text = checked_dump(self.memory, target or self.rundir.delta_path(batch.index))
        snapshot = self.rundir.write_snapshot(text, batch.index)
        if target is not None:
            save_checked_text(text, target)
        self.rundir.append_abstraction(outcomes)
        return BatchCommit(
            batch=batch.index,
            snapshot=snapshot.name,
            processed=list(self.processed),
            written=dict(self.written),
            unwritten=dict(self.unwritten),
        )


def written_step(result: TaskResult, step: Step) -> WrittenStep:
    """Which step of ``result`` was written, and (for reporting only) whether it was right."""
    attempt = next(a.index for a in result.attempts if any(s is step for s in a.steps))
    right = None if step.correct is None else bool(step.correct) and all(step.correct)
    return WrittenStep(attempt=attempt, round=step.round, right=right)


def located_step(result: TaskResult, written: WrittenStep | None) -> Step | None:
    """The step of ``result`` that ``written`` names (None when it names none)."""
    if written is None:
        return None
    attempt = next((a for a in result.attempts if a.index == written.attempt), None)
    if attempt is None or not 0 <= written.round < len(attempt.steps):
        return None
    return attempt.steps[written.round]
