"""One task's loop: select -> solve -> verify -> retry -> grade, for any benchmark.

A :class:`TaskLoop` takes a task through its first tries (per prompt variant: select, ask
one request for ``attempts`` answers, check them) and its retries with feedback, and grades
it from the hidden labels. When the retries run is the scheduler's choice
(:mod:`arcmemo.run.runner`): all inline after the first tries, or one pass at a time across
the run's tasks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from arcmemo.benchmarks.base import Benchmark, PromptCuts, PromptRequest
from arcmemo.core.records import Attempt, PromptCut, PromptTooLong, Step, TaskResult
from arcmemo.core.roles import SELECT, SOLVER, with_fallbacks
from arcmemo.core.tokens import Usage
from arcmemo.library.task import NO_LIBRARY, TaskLibrary
from arcmemo.memory.schema import Memory
from arcmemo.models.base import Completion, Message
from arcmemo.models.client import ModelClient
from arcmemo.models.context import PROMPT_TOO_LONG, PromptTooLongError
from arcmemo.models.retry import ModelCallError
from arcmemo.models.structured import parsed_window
from arcmemo.run.citations import cited_names, resolve_citations, with_citation_request
from arcmemo.run.config import ResolvedRunConfig
from arcmemo.run.prompt_fit import FittedPrompt, fit_prompt
from arcmemo.run.solve_prompt import PreparedPrompt, prepare_prompt
from arcmemo.selection.base import Selector


def judge_attempts(benchmark: Benchmark[Any], task: Any, attempts: list[Attempt]) -> None:
    """Record, from the hidden labels, which test inputs each step and attempt got right
    (an attempt counts by its final step)."""
    for attempt in attempts:
        for step in attempt.steps:
            step.correct = benchmark.judge(task, step.prediction)
        attempt.correct = (
            attempt.steps[-1].correct or [] if attempt.steps else benchmark.judge(task, None)
        )


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


class TaskLoop:
    """Solves one task at a time with the selector and the memory it reads (grown between
    batches by an online run), calling the solver and select roles' clients of ``clients``
    (a role without one calls its fallback's: :func:`arcmemo.core.roles.with_fallbacks`)."""

    def __init__(
        self,
        config: ResolvedRunConfig,
        benchmark: Benchmark[Any],
        clients: Mapping[str, ModelClient],
        *,
        selector: Selector,
        memory: Memory | None = None,
    ) -> None:
        self.config = config
        self.benchmark = benchmark
        self.clients = with_fallbacks(clients)
        self.selector = selector
        self.memory = memory
        self.feedback_rounds = config.feedback_rounds if config.feedback_rounds is not None else 0
        self.reselect = config.feedback_rounds_reselect and memory is not None

    async def _generate(
        self, task: Any, messages: list[Any], previous: Step | None, n: int, first: int = 0
    ) -> list[Answer]:
        sampling = self.config.solver.sampling
        started = _now()
        completions = await self.clients[SOLVER].generate(
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
        solver = self.clients[SOLVER]
        return solver.prices.cost_usd(solver.spec, completion.usage)

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
        window, left_unparsed = parsed_window(completion.text)
        check = await asyncio.to_thread(self.benchmark.check, task, window, library)
        cited, unshown = (
            resolve_citations(cited_names(window), self.memory, selected)
            if self.config.cite
            else ([], [])
        )
        return Step(
            **dict(check),
            cited=cited,
            cited_unshown=unshown,
            left_unparsed=left_unparsed,
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
            clients={**self.clients, SELECT: self.clients[SELECT].with_samples(variant)},
            previous=previous,
            library_scope=self.config.library,
        )

    async def first_tries(self, task: Any) -> TaskState:
        """Per prompt variant: select, then ask for ``attempts`` first tries and check them."""
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
        solver = self.clients[SOLVER]
        window = await solver.context_window()
        answer = self.config.solver.sampling.max_tokens

        def prompt(cuts: PromptCuts) -> list[Message]:
            messages = self.benchmark.fitted_prompt(task, request, cuts)
            kept = request.cut(cuts)  # asked only of a prompt whose memory block is kept
            shows = bool(kept.concepts or kept.reselected)
            return with_citation_request(messages) if self.config.cite and shows else messages

        return fit_prompt(
            prompt,
            request.library,
            window=window,
            answer_tokens=answer if answer is not None else solver.defaults.max_tokens,
        )

    async def _variant_first_tries(
        self, state: TaskState, variant: int
    ) -> tuple[ModelCallError | None, list[PromptCut]]:
        """Variant ``variant``'s selection and first tries (sample indices ``v * attempts``
        on of its request, so two variants with the same prompt still get their own answers);
        the failure that stopped it, if any, with what had been cut from its prompt."""
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

    def waiting(self, state: TaskState) -> bool:
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

    async def retry_all_waiting(self, state: TaskState) -> None:
        """One retry of every attempt of the task that wants one (a pass of retries)."""
        waiting = [a for a in state.result.attempts if self._wants_retry(a)]
        await asyncio.gather(*(self._retry(state, a) for a in waiting))

    async def retry_until_done(self, state: TaskState) -> None:
        """Every retry of every attempt, inline (the tasks schedule)."""

        async def attempt_rounds(attempt: Attempt) -> None:
            while self._wants_retry(attempt):
                await self._retry(state, attempt)

        await asyncio.gather(*(attempt_rounds(a) for a in state.result.attempts))

    def finish(self, state: TaskState) -> TaskResult:
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
        state = await self.first_tries(task)
        await self.retry_until_done(state)
        return self.finish(state)
