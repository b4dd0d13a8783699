"""The generic run loop: select -> solve -> verify -> retry -> grade, for any benchmark.

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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from arcmemo.benchmarks.base import Benchmark, PromptRequest
from arcmemo.core.progress import ProgressSink, StageStarted
from arcmemo.core.records import Attempt, PromptCut, PromptTooLong, Step, TaskResult
from arcmemo.core.tokens import Usage
from arcmemo.library.task import NO_LIBRARY, TaskLibrary
from arcmemo.memory.schema import Memory
from arcmemo.models.base import Completion
from arcmemo.models.client import ModelClient
from arcmemo.models.context import PROMPT_TOO_LONG, PromptTooLongError
from arcmemo.models.retry import ModelCallError
from arcmemo.run.config import ResolvedRunConfig
from arcmemo.run.directory.records import Batch, BatchCommit, RunDirError, Schedule, TaskProgress
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.prompt_fit import FittedPrompt, fit_prompt
from arcmemo.run.solve_prompt import PreparedPrompt, prepare_prompt, selection_library
from arcmemo.sandbox import SANDBOXES
from arcmemo.selection.base import Selector

# How often a process looks again at tasks that another live process of the run holds.
CLAIM_POLL_S = 0.5

# (task, its result so far, whether that result is final), for each task of a batch.
BatchItem = tuple[Any, TaskResult, bool]
# Called after each batch of a batched run; returns what the commit records of the memory.
BatchHook = Callable[[Batch, list[BatchItem]], Awaitable[BatchCommit]]


def order_tasks(tasks: list[Any], seed: int | None) -> list[Any]:
    """The order tasks are processed in: as loaded, or shuffled by ``seed``."""
    if seed is None:
        return list(tasks)
    shuffled = list(tasks)
    random.Random(seed).shuffle(shuffled)
    return shuffled


def judge_attempts(benchmark: Benchmark[Any], task: Any, attempts: list[Attempt]) -> None:
    """Record, from the hidden labels, which test inputs each step and attempt got right
    (an attempt counts by its final step)."""
    for attempt in attempts:
        for step in attempt.steps:
            step.correct = benchmark.judge(task, step.prediction)
        attempt.correct = (
            attempt.steps[-1].correct or [] if attempt.steps else benchmark.judge(task, None)
        )


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


def too_long_record(
    error: PromptTooLongError, cuts: list[PromptCut] | None = None
) -> PromptTooLong:
    """The task's record of a prompt that could not fit the model's window (with ``cuts``
    made before it still did not)."""
    return PromptTooLong(
        stage=error.stage,
        message=error.cause,
        prompt_tokens=error.prompt_tokens,
        context_window=error.context_window,
        cuts=cuts or [],
    )


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Answer:
    """One completion of a solver call with what the step records of the call."""

    completion: Completion
    cost_usd: float | None
    started_at: str
    finished_at: str


@dataclass
class TaskState:
    """A task between passes: its attempts so far and, per prompt variant, the memory
    section of its first prompt and its library (what retries that do not select again
    show)."""

    task: Any
    result: TaskResult
    concepts: list[str] = field(default_factory=lambda: [""])
    libraries: list[TaskLibrary] = field(default_factory=lambda: [NO_LIBRARY])


class Runner:
    """Runs one configured benchmark run in its run directory.

    Collaborators come in through the constructor: the memory (shared with the
    ``after_batch`` hook, which grows it in online runs), the selector and its model, and
    the hook called after each batch with that batch's tasks and results.
    """

    def __init__(
        self,
        config: ResolvedRunConfig,
        benchmark: Benchmark[Any],
        model: ModelClient,
        *,
        rundir: RunWriter,
        selector: Selector,
        memory: Memory | None = None,
        selector_model: ModelClient | None = None,
        after_batch: BatchHook | None = None,
        on_task_done: Callable[[TaskResult], None] | None = None,
        progress: ProgressSink | None = None,
    ) -> None:
        self.config = config
        self.benchmark = benchmark
        self.model = model
        self.rundir = rundir
        self.selector = selector
        self.memory = memory
        self.selector_model = selector_model or model
        self.after_batch = after_batch
        self.on_task_done = on_task_done
        self.feedback_rounds = config.feedback_rounds if config.feedback_rounds is not None else 0
        self.schedule = config.run_schedule
        self.reselect = config.feedback_rounds_reselect and memory is not None
        self.progress = progress or ProgressSink()

    # -- one task --------------------------------------------------------------------------

    async def _generate(
        self, task: Any, messages: list[Any], previous: Step | None, n: int, first: int = 0
    ) -> list[Answer]:
        sampling = self.config.solver.sampling
        started = _now()
        completions = await self.model.generate(
            messages,
            stage="solve" if previous is None else "retry",
            task_id=self.benchmark.task_id(task),
            n=n,
            first_sample=first,
            temperature=sampling.temperature,
            max_tokens=sampling.max_tokens,
            reasoning_effort=sampling.reasoning_effort,
            thinking_budget=sampling.thinking_budget,
            seed=self.config.request_seed,
        )
        finished = _now()
        return [Answer(c, self._cost(c), started, finished) for c in completions]

    def _cost(self, completion: Completion) -> float | None:
        """What ``completion`` cost when it was generated (the model layer's rule: the
        gateway's figure, else the price table's), the same when it comes from the response
        cache, so a resumed run records what an uninterrupted one does."""
        if completion.cost_usd is not None:
            return completion.cost_usd
        return self.model.prices.cost_usd(self.model.spec, completion.usage)

    async def _step(
        self,
        task: Any,
        answer: Answer,
        round_: int,
        selected: list[str],
        library: TaskLibrary = NO_LIBRARY,
        fitted: FittedPrompt | None = None,
    ) -> Step:
        completion = answer.completion
        check = await asyncio.to_thread(self.benchmark.check, task, completion.text, library)
        return Step(
            **dict(check),
            round=round_,
            completion=completion.text,
            reasoning=completion.reasoning,
            usage=completion.usage,
            cost_usd=answer.cost_usd,
            started_at=answer.started_at,
            finished_at=answer.finished_at,
            concepts=selected,
            truncated=completion.finish_reason == "length",
            prompt_fit=fitted.fit if fitted is not None else None,
        )

    async def _prepare(
        self, task: Any, previous: Step | None = None, variant: int = 0
    ) -> PreparedPrompt:
        return await prepare_prompt(
            self.benchmark,
            task,
            memory=self.memory,
            selector=self.selector,
            # Variant v's selector calls are sample v of their request: each variant gets
            # its own selection, also from the response cache.
            model=self.selector_model.with_samples(variant),
            previous=previous,
            library_scope=self.config.library,
        )

    async def _first_tries(self, task: Any) -> TaskState:
        """Per prompt variant: select, then sample ``attempts`` first tries and check them."""
        per_variant, variants = self.config.attempts, self.config.variants
        attempts = [
            Attempt(index=v * per_variant + i, variant=v)
            for v in range(variants)
            for i in range(per_variant)
        ]
        result = TaskResult(
            task_id=self.benchmark.task_id(task),
            attempts=attempts,
            variant_selections=[None] * (variants - 1),
        )
        state = TaskState(task, result, [""] * variants, [NO_LIBRARY] * variants)
        failures = await asyncio.gather(
            *(self._variant_first_tries(state, v) for v in range(variants))
        )
        failure, cuts = next(((f, c) for f, c in failures if f is not None), (None, []))
        if isinstance(failure, PromptTooLongError):
            result.prompt_too_long = too_long_record(failure, cuts)
        elif failure is not None:
            result.error, result.error_kind = str(failure), failure.kind
        return state

    async def _fit(self, task: Any, request: PromptRequest) -> FittedPrompt:
        """The prompt of ``request`` fitted to the solver's context window
        (:mod:`arcmemo.run.prompt_fit`), with room for an answer of the solver's max_tokens."""
        window = await self.model.context_window()
        answer = self.config.solver.sampling.max_tokens
        return fit_prompt(
            lambda cuts: self.benchmark.fitted_prompt(task, request, cuts),
            request.library,
            window=window,
            answer_tokens=answer if answer is not None else self.model.defaults.max_tokens,
        )

    async def _variant_first_tries(
        self, state: TaskState, variant: int
    ) -> tuple[ModelCallError | None, list[PromptCut]]:
        """Variant ``variant``'s selection and first tries (samples ``v * attempts`` on of
        its prompt, so two variants with the same prompt still sample apart); the failure
        that stopped it, if any, with what had been cut from its prompt."""
        task, result = state.task, state.result
        attempts = [a for a in result.attempts if a.variant == variant]
        fitted = FittedPrompt([])
        try:
            prepared = await self._prepare(task, variant=variant)
            # Recorded before the call, so that the report shows what was chosen also when
            # the prompt gets no answer; TaskResult.shown leaves such a selection out of the
            # memory's evidence (the solver never saw it).
            if variant == 0:
                result.selection = prepared.selection
            else:
                result.variant_selections[variant - 1] = prepared.selection
            state.concepts[variant] = prepared.concepts
            state.libraries[variant] = prepared.library
            selected = prepared.selection.selected if prepared.selection else []
            request = PromptRequest(prepared.concepts, library=prepared.library)
            fitted = await self._fit(task, request)
            answers = await self._generate(
                task, fitted.messages, None, len(attempts), attempts[0].index
            )
            shown = fitted.shown(selected, "memory block")
            first_steps = await asyncio.gather(
                *(self._step(task, c, 0, shown, prepared.library, fitted) for c in answers)
            )
            for attempt, step in zip(attempts, first_steps, strict=True):
                attempt.steps.append(step)
        except ModelCallError as failure:  # PromptTooLongError included
            return failure, fitted.cuts
        return None, []

    def _wants_retry(self, attempt: Attempt) -> bool:
        """The attempt's last step earns feedback (it fails its visible examples) and retries
        are left."""
        return (
            bool(attempt.steps)
            and self.benchmark.wants_feedback(attempt.steps[-1])
            and len(attempt.steps) <= self.feedback_rounds
        )

    def _waiting(self, state: TaskState) -> bool:
        return any(self._wants_retry(a) for a in state.result.attempts)

    async def _retry(self, state: TaskState, attempt: Attempt) -> None:
        """One retry of ``attempt`` with feedback on its last step; with reselection, from
        the memory as it stands now."""
        task, previous, variant = state.task, attempt.steps[-1], attempt.variant
        selection = state.result.selection_of(variant)
        selected = selection.selected if selection else []
        library, concepts = state.libraries[variant], state.concepts[variant]
        fitted = FittedPrompt([])
        try:
            request = PromptRequest(concepts, previous, library)
            if self.reselect:
                prepared = await self._prepare(task, previous, variant)
                library = library.union(prepared.library)
                request = PromptRequest(concepts, previous, library, reselected=prepared.concepts)
                selected = prepared.selection.selected if prepared.selection else []
            fitted = await self._fit(task, request)
            # Attempt i's retries are sample i of their prompt: two attempts that failed the
            # same way (byte-identical retry prompts) still get independent answers.
            (answer,) = await self._generate(task, fitted.messages, previous, 1, attempt.index)
        except ModelCallError as error:
            attempt.steps.append(
                Step(
                    round=len(attempt.steps),
                    completion="",
                    error=str(error),
                    error_kind=error.kind,
                    prompt_fit=fitted.fit,
                )
            )
            if isinstance(error, PromptTooLongError) and state.result.prompt_too_long is None:
                state.result.prompt_too_long = too_long_record(error, fitted.cuts)
            return
        # The step's concepts are its block's: a retry that selected again lists the new
        # choice (the reselected block), one that did not the first try's (the memory block).
        shown = fitted.shown(selected, "reselected concepts" if self.reselect else "memory block")
        attempt.steps.append(
            await self._step(task, answer, len(attempt.steps), shown, library, fitted)
        )

    async def _retry_all_waiting(self, state: TaskState) -> None:
        """One retry of every attempt of the task that wants one (a pass of retries)."""
        waiting = [a for a in state.result.attempts if self._wants_retry(a)]
        await asyncio.gather(*(self._retry(state, a) for a in waiting))

    async def _retry_until_done(self, state: TaskState) -> None:
        """Every retry of every attempt, inline (the tasks schedule)."""

        async def attempt_rounds(attempt: Attempt) -> None:
            while self._wants_retry(attempt):
                await self._retry(state, attempt)

        await asyncio.gather(*(attempt_rounds(a) for a in state.result.attempts))

    def _finish(self, state: TaskState) -> TaskResult:
        """Grade the task from the hidden labels: its final result."""
        result = state.result
        failed_step = next(
            (
                s
                for a in result.attempts
                for s in a.steps
                if s.error and s.error_kind != PROMPT_TOO_LONG
            ),
            None,
        )
        if result.error is None and failed_step is not None:
            result.error, result.error_kind = failed_step.error, failed_step.error_kind
        judge_attempts(self.benchmark, state.task, result.attempts)
        grade = self.benchmark.grade(state.task, result.attempts)
        tokens = sum((s.usage for a in result.attempts for s in a.steps), Usage())
        for selection in result.selections:
            tokens = tokens + selection.usage
        return result.model_copy(
            update={
                "solved": grade.solved,
                "score": grade.score,
                "metrics": grade.metrics,
                "tokens": tokens,
            }
        )

    async def solve(self, task: Any) -> TaskResult:
        """Select, solve (``attempts`` attempts, each with up to ``feedback_rounds`` retries),
        grade."""
        state = await self._first_tries(task)
        await self._retry_until_done(state)
        return self._finish(state)

    # -- the whole run -------------------------------------------------------------------

    @property
    def batched(self) -> bool:
        """Whether the run goes batch by batch with commits (see the module docstring)."""
        return self.after_batch is not None or self.schedule == "passes"

    async def run(self, tasks: list[Any]) -> list[TaskResult]:
        """Solve every task not already finished in the run directory; return all results.

        Tasks whose earlier result records a model-call error are solved again (in a
        batched run: in a new round of batches once the schedule is done).

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
                        result = await self.solve(task)
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

    # -- batched runs ----------------------------------------------------------------------

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
                f"{self.rundir.path}: its batches were fixed over {len(schedule.task_ids)} "
                f"tasks in batches of {schedule.batch_size} when it started (schedule.json); "
                f"this resume has {len(ids)} tasks in batches of {size}; use the same "
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
            ids = [i for i in schedule.task_ids if i in waiting and self._waiting(waiting[i])]
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
        where = f"pass {batch.pass_number}, batch {same.index(batch.index) + 1}/{len(same)}"
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
                    await self._retry_all_waiting(state)
                    return state
                state = await self._first_tries(by_id[task_id])
                if self.schedule == "tasks":
                    await self._retry_until_done(state)
                return state

        states = await asyncio.gather(*(one(task_id) for task_id in batch.task_ids))
        last_pass = self.schedule == "tasks" or batch.pass_number >= self.feedback_rounds
        items: list[BatchItem] = []
        progress: list[TaskProgress] = []
        finals: list[TaskResult] = []
        for state in states:
            task_id = state.result.task_id
            final = last_pass or not self._waiting(state)
            if final:
                waiting.pop(task_id, None)
                result = self._finish(state)
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
            self.progress.emit(StageStarted(stage="abstract", where=f"batch {batch.index + 1}"))
            commit = await self.after_batch(batch, items)
        self.rundir.write_commit(
            commit.model_copy(
                update={"batch": batch.index, "lengths": self.rundir.appended_lengths()}
            )
        )


def sandbox_isolation(name: str) -> str:
    """How the sandbox ``name`` contains programs: ``kernel`` or ``process``."""
    return SANDBOXES.get(name).cls.isolation
