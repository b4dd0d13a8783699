"""The scheduler of a run: which tasks are solved when, for any benchmark (each task by its
loop, select -> solve -> verify -> retry -> grade: :mod:`arcmemo.run.task_loop`).

Tasks run concurrently (the model layer bounds requests in flight); an interrupted run
resumes where it stopped and, thanks to the response cache, never pays twice for a call it
already made.

Two schedules decide when retries run (``--schedule``):

* ``tasks``: each task's retries run inline, right after its first tries;
* ``passes`` (the paper's continual setting, the default of ``--update online``): pass 0
  gives every task its first tries, batch by batch; pass p = 1..feedback_rounds then retries every
  attempt still failing its visible examples, again in batches. With ``--update online``
  the memory grows after every batch (:mod:`arcmemo.run.continual`), so a retry in pass p sees
  what every batch before it wrote, the later tasks of pass 0 included.

A run without memory writes on the tasks schedule writes each task's result as it finishes
and redoes, on resume, the tasks without one. Every other run is *batched*: its batches are
fixed in ``schedule.json`` when it starts, each batch ends with a commit
(``memory/processed.json``) written after everything else the batch changed, and a resume
redoes exactly the batch after the last commit, from the memory snapshot that commit names
(:mod:`arcmemo.run.directory` describes the files).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from arcmemo.benchmarks.base import Benchmark
from arcmemo.core.progress import ProgressSink, StageStarted
from arcmemo.core.records import TaskResult
from arcmemo.library.task import NO_LIBRARY, TaskLibrary
from arcmemo.memory.schema import Memory
from arcmemo.models.client import ModelClient
from arcmemo.run.config import ResolvedRunConfig
from arcmemo.run.directory.records import Batch, BatchCommit, RunDirError, Schedule, TaskProgress
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.solve_prompt import selection_library
from arcmemo.run.task_loop import TaskLoop, TaskState, judge_attempts
from arcmemo.sandbox import SANDBOXES
from arcmemo.selection.base import Selector

# How often a process looks again at tasks that another live process of the run holds.
CLAIM_POLL_S = 0.5

# (task, its result so far, whether that result is final), for each task of a batch.
BatchItem = tuple[Any, TaskResult, bool]
# Called after each batch of a run in task batches; returns what the commit records of the memory.
BatchHook = Callable[[Batch, list[BatchItem]], Awaitable[BatchCommit]]


def order_tasks(tasks: list[Any], seed: int | None) -> list[Any]:
    """The order tasks are processed in: as loaded, or shuffled by ``seed``."""
    if seed is None:
        return list(tasks)
    shuffled = list(tasks)
    random.Random(seed).shuffle(shuffled)
    return shuffled


def cut_batches(
    task_ids: list[str], size: int, *, first: int, pass_number: int, rerun: int = 0
) -> list[Batch]:
    """``task_ids`` in batches of ``size``, indexed from ``first``."""
    return [
        Batch(
            index=first + n,
            rerun=rerun,
            pass_number=pass_number,
            task_ids=task_ids[start : start + size],
        )
        for n, start in enumerate(range(0, len(task_ids), size))
    ]


class Runner:
    """Runs one configured benchmark run in its run directory: which tasks are solved when
    (each under a claim, or batch by batch with commits), each by its :class:`TaskLoop`.

    Collaborators come in through the constructor: the client of each model role
    (``clients``, by role name: :mod:`arcmemo.core.roles`; a role left out calls its
    fallback's), the memory (shared with the ``after_batch`` hook, which grows it in online
    runs), the selector, and the hook called after each batch with that batch's tasks and
    results.
    """

    def __init__(
        self,
        config: ResolvedRunConfig,
        benchmark: Benchmark[Any],
        clients: Mapping[str, ModelClient],
        *,
        rundir: RunWriter,
        selector: Selector,
        memory: Memory | None = None,
        after_batch: BatchHook | None = None,
        on_task_done: Callable[[TaskResult], None] | None = None,
        progress: ProgressSink | None = None,
    ) -> None:
        self.config = config
        self.benchmark = benchmark
        self.rundir = rundir
        self.memory = memory
        self.after_batch = after_batch
        self.on_task_done = on_task_done
        self.schedule = config.run_schedule
        self.progress = progress or ProgressSink()
        self.loop = TaskLoop(config, benchmark, clients, selector=selector, memory=memory)
        self.feedback_rounds = self.loop.feedback_rounds

    @property
    def batched(self) -> bool:
        """Whether the run goes task batch by task batch with commits (see the module
        docstring)."""
        return self.after_batch is not None or self.schedule == "passes"

    async def run(self, tasks: list[Any]) -> list[TaskResult]:
        """Solve every task not already finished in the run directory; return all results.

        Tasks whose earlier result records a model-call error are solved again (in a
        run in task batches: in a new round of batches once the schedule is done).

        ``tasks`` are processed in the given order (the caller shuffles, see
        :func:`order_tasks`); the order is recorded in ``task_order.json``.
        """
        ids = [self.benchmark.task_id(t) for t in tasks]
        self.rundir.write_task_order(ids)
        if self.batched:
            await self._run_batched(tasks, ids)
        else:
            # A task that failed on a model error is tried again (its good calls are cached).
            finished = self.rundir.completed()
            pending = [t for t, i in zip(tasks, ids, strict=True) if i not in finished]
            await self._run_tasks(pending)
        results = self.rundir.finished()
        return [results[i] for i in ids if i in results]

    def _task_gate(self, count: int) -> asyncio.Semaphore:
        # Keep a bounded number of tasks alive; the model layer bounds requests anyway. In
        # batch mode every task is alive, so all their requests can join one provider batch.
        if self.config.batch:
            return asyncio.Semaphore(max(count, 1))
        return asyncio.Semaphore(max(2 * self.config.models.concurrency, 1))

    async def _run_tasks(self, tasks: list[Any]) -> None:
        """Solve ``tasks``, each under a claim (:meth:`RunWriter.claim`), so that several
        processes on one run directory split the tasks instead of each doing them all.
        Tasks claimed by another live process are waited for; a claim whose holder died
        is free again, and its task is done here."""
        self.progress.emit(StageStarted(stage="solve", where=f"{len(tasks)} tasks"))
        gate = self._task_gate(len(tasks))
        before = dict(self.rundir.finished_now())

        async def one(task: Any) -> bool:
            """False while another live process holds the task."""
            task_id = self.benchmark.task_id(task)
            async with gate:
                claim = self.rundir.claim(task_id)
                if claim is None:
                    return False
                with claim:
                    result = self.rundir.finished_now().get(task_id)
                    if result is None or result == before.get(task_id):
                        result = await self.loop.solve(task)
                        self.rundir.append_result(result)
                    # else: another process finished it since this session started
            if self.on_task_done:
                self.on_task_done(result)
            return True

        waiting = tasks
        while waiting:
            done = await asyncio.gather(*(one(task) for task in waiting))
            waiting = [task for task, ok in zip(waiting, done, strict=True) if not ok]
            if waiting:
                await asyncio.sleep(CLAIM_POLL_S)

    # -- runs in task batches ---------------------------------------------------------------

    def _schedule(self, ids: list[str]) -> Schedule:
        """The run's schedule: as recorded, or cut now from the task order."""
        size = self.config.update_every if self.after_batch is not None else max(len(ids), 1)
        schedule = self.rundir.read_schedule()
        if schedule is None:
            if self.rundir.finished() or self.rundir.processed_path.exists():
                raise RunDirError(
                    f"{self.rundir.path} holds results but no schedule.json (an arcmemo from "
                    "before batch records wrote it), so it cannot be resumed batch by batch; "
                    "use a new --out"
                )
            schedule = Schedule(
                schedule=self.schedule,
                batch_size=size,
                task_ids=ids,
                lengths=self.rundir.appended_lengths(),
                batches=cut_batches(ids, size, first=0, pass_number=0),
            )
            self.rundir.write_schedule(schedule)
        elif schedule.task_ids != ids or schedule.batch_size != size:
            raise RunDirError(
                f"{self.rundir.path}: its task batches were fixed over {len(schedule.task_ids)} "
                f"tasks, {schedule.batch_size} a batch, when it started (schedule.json); "
                f"this resume has {len(ids)} tasks, {size} a batch; use the same "
                "tasks (--split/--data/--tasks/--limit) or a new --out"
            )
        return schedule

    def _restore(self, by_id: dict[str, Any]) -> dict[str, TaskState]:
        """The tasks waiting for retries after the last finished batch (passes schedule)."""
        return {
            task_id: TaskState(
                by_id[task_id],
                record.result,
                [record.concepts, *record.variant_concepts],
                [
                    self._restored_library(record.result, variant)
                    for variant in range(1 + len(record.variant_concepts))
                ],
            )
            for task_id, record in self.rundir.task_progress().items()
            if not record.final and task_id in by_id
        }

    def _restored_library(self, result: TaskResult, variant: int) -> TaskLibrary:
        """A resumed task's library for prompt variant ``variant``, rebuilt from its recorded
        selection: the library is not saved between passes, and without it a resumed retry
        would list no functions and its programs' imports would fail."""
        selection = result.selection_of(variant)
        if self.memory is None or selection is None:
            return NO_LIBRARY
        return selection_library(
            self.memory, result.task_id, selection.selected, self.config.library
        )

    def _more_batches(
        self, schedule: Schedule, waiting: dict[str, TaskState], *, rerun_errors: bool
    ) -> list[Batch]:
        """The batches after the last one planned: the next pass of retries, or (once per
        session, when ``rerun_errors``) a rerun of the tasks that ended on a model error."""
        last = schedule.batches[-1]
        first = last.index + 1
        if self.schedule == "passes" and last.pass_number < self.feedback_rounds:
            ids = [i for i in schedule.task_ids if i in waiting and self.loop.waiting(waiting[i])]
            if ids:
                return cut_batches(
                    ids,
                    schedule.batch_size,
                    first=first,
                    pass_number=last.pass_number + 1,
                    rerun=last.rerun,
                )
        if rerun_errors:
            finished = self.rundir.finished()
            ids = [i for i in schedule.task_ids if i in finished and finished[i].error]
            batches = cut_batches(
                ids, schedule.batch_size, first=first, pass_number=0, rerun=last.rerun + 1
            )
            # Confirmed solutions whose memory write failed are written again, without
            # solving their tasks again, in the same rerun.
            commit = self.rundir.read_commit()
            unwritten = commit.unwritten if commit is not None else {}
            ids = [i for i in schedule.task_ids if i in unwritten and i in finished]
            if ids:
                batches.append(
                    Batch(
                        index=first + len(batches),
                        rerun=last.rerun + 1,
                        pass_number=0,
                        task_ids=ids,
                        writes_only=True,
                    )
                )
            return batches
        return []

    async def _run_batched(self, tasks: list[Any], ids: list[str]) -> None:
        by_id = dict(zip(ids, tasks, strict=True))
        schedule = self._schedule(ids)
        if not schedule.batches:
            return
        commit = self.rundir.read_commit()
        index = commit.batch + 1 if commit is not None else 0
        waiting = self._restore(by_id)
        # Tasks that ended on a model error get a rerun when the schedule was already
        # done before this session (a rerun), not in the session that saw them fail.
        rerun_errors = index >= len(schedule.batches) and not self._more_batches(
            schedule, waiting, rerun_errors=False
        )
        while True:
            if index >= len(schedule.batches):
                more = self._more_batches(schedule, waiting, rerun_errors=rerun_errors)
                if not more:
                    return
                rerun_errors = rerun_errors and more[0].rerun == schedule.batches[-1].rerun
                schedule.batches += more
                self.rundir.write_schedule(schedule)
            self._announce(schedule, schedule.batches[index])
            await self._run_batch(schedule.batches[index], by_id, waiting)
            index += 1

    def _announce(self, schedule: Schedule, batch: Batch) -> None:
        """Report the stage a batch starts: first tries (solve) or a pass of retries."""
        if batch.writes_only:
            return  # it only writes the memory: the abstract stage reports it
        same = [
            b.index
            for b in schedule.batches
            if b.pass_number == batch.pass_number and b.rerun == batch.rerun
        ]
        position = f"{same.index(batch.index) + 1}/{len(same)}"
        where = f"pass {batch.pass_number}, task batch {position}"
        if batch.rerun:
            where += f", rerun {batch.rerun}"
        stage = "retry" if batch.pass_number > 0 else "solve"
        self.progress.emit(StageStarted(stage=stage, where=where))

    async def _run_batch(
        self, batch: Batch, by_id: dict[str, Any], waiting: dict[str, TaskState]
    ) -> None:
        """Run one batch, record its results and tasks' states, let the hook write the
        memory, then commit the batch."""
        if batch.writes_only:
            await self._write_batch(batch, by_id)
            return
        gate = self._task_gate(len(batch.task_ids))

        async def one(task_id: str) -> TaskState:
            async with gate:
                if batch.pass_number > 0:
                    state = waiting[task_id]
                    await self.loop.retry_all_waiting(state)
                    return state
                state = await self.loop.first_tries(by_id[task_id])
                if self.schedule == "tasks":
                    await self.loop.retry_until_done(state)
                return state

        states = await asyncio.gather(*(one(task_id) for task_id in batch.task_ids))
        last_pass = self.schedule == "tasks" or batch.pass_number >= self.feedback_rounds
        items: list[BatchItem] = []
        progress: list[TaskProgress] = []
        finals: list[TaskResult] = []
        for state in states:
            task_id = state.result.task_id
            final = last_pass or not self.loop.waiting(state)
            if final:
                waiting.pop(task_id, None)
                result = self.loop.finish(state)
                finals.append(result)
            else:
                waiting[task_id] = state
                judge_attempts(self.benchmark, state.task, state.result.attempts)
                result = state.result
            items.append((state.task, result, final))
            if self.schedule == "passes":
                progress.append(
                    TaskProgress(
                        batch=batch.index,
                        final=final,
                        result=result,
                        concepts=state.concepts[0],
                        variant_concepts=state.concepts[1:],
                    )
                )
        self.rundir.append_results(finals)
        self.rundir.append_progress(progress)
        await self._commit(batch, items)
        if self.on_task_done:
            for result in finals:
                self.on_task_done(result)

    async def _write_batch(self, batch: Batch, by_id: dict[str, Any]) -> None:
        """A writes-only batch: the hook writes the tasks' recorded (final) results again."""
        finished = self.rundir.finished()
        items: list[BatchItem] = [
            (by_id[i], finished[i], True) for i in batch.task_ids if i in finished
        ]
        await self._commit(batch, items)

    async def _commit(self, batch: Batch, items: list[BatchItem]) -> None:
        """Let the hook write the batch's memory, then commit the batch."""
        commit = BatchCommit(batch=batch.index)
        if self.after_batch is not None:
            where = f"task batch {batch.index + 1}"
            self.progress.emit(StageStarted(stage="abstract", where=where))
            commit = await self.after_batch(batch, items)
        self.rundir.write_commit(
            commit.model_copy(
                update={"batch": batch.index, "lengths": self.rundir.appended_lengths()}
            )
        )


def sandbox_isolation(name: str) -> str:
    """How the sandbox ``name`` contains programs: ``kernel`` or ``process``."""
    return SANDBOXES.get(name).cls.isolation
