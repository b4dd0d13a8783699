"""The generic run loop: select -> solve -> verify -> retry -> grade, for any benchmark.

Tasks run concurrently (the model layer bounds requests in flight); each finished task is
appended to ``results.jsonl`` at once, so an interrupted run resumes where it stopped and,
thanks to the response cache, never pays twice for a call it already made. With
``--update online`` tasks run in batches and the memory grows between batches
(:mod:`arcmemo.continual`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

from arcmemo.attempt import PreparedPrompt, prepare_prompt
from arcmemo.benchmarks.base import Benchmark
from arcmemo.config import RunConfig
from arcmemo.memory.ontology import Memory
from arcmemo.models.base import Completion, Usage
from arcmemo.models.client import ModelCallError, ModelClient, UsageSummary
from arcmemo.records import Attempt, Selection, Step, TaskResult
from arcmemo.rundir import RunWriter
from arcmemo.selection.base import Selector

BatchHook = Callable[[list[tuple[Any, TaskResult]]], Awaitable[None]]


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


class Runner:
    """Runs one configured benchmark run in its run directory.

    Collaborators come in through the constructor: the memory (shared with the
    ``after_batch`` hook, which grows it in online runs), the selector and its model, and
    the hook called after each batch with that batch's tasks and results.
    """

    def __init__(
        self,
        config: RunConfig,
        benchmark: Benchmark[Any],
        model: ModelClient,
        *,
        rundir: RunWriter,
        selector: Selector,
        memory: Memory | None = None,
        selector_model: ModelClient | None = None,
        after_batch: BatchHook | None = None,
        on_task_done: Callable[[TaskResult], None] | None = None,
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
        self.retries = config.retries if config.retries is not None else 0

    # -- one task --------------------------------------------------------------------------

    async def _generate(
        self, task: Any, messages: list[Any], previous: Step | None, n: int
    ) -> list[Completion]:
        sampling = self.config.sampling
        return await self.model.generate(
            messages,
            stage="solve" if previous is None else "retry",
            task_id=self.benchmark.task_id(task),
            n=n,
            temperature=sampling.temperature,
            max_tokens=sampling.max_tokens,
            reasoning_effort=sampling.reasoning_effort,
            thinking_budget=sampling.thinking_budget,
            seed=self.config.request_seed,
        )

    async def _step(
        self, task: Any, completion: Completion, round_: int, selected: list[str]
    ) -> Step:
        check = await asyncio.to_thread(self.benchmark.check, task, completion.text)
        return Step(
            **dict(check),
            round=round_,
            completion=completion.text,
            reasoning=completion.reasoning,
            usage=completion.usage,
            concepts=selected,
        )

    async def _continue_attempt(
        self, task: Any, attempt: Attempt, concepts: str, selected: list[str]
    ) -> None:
        """Retry with feedback while the last step fails its visible examples."""
        while attempt.steps[-1].verified is False and len(attempt.steps) <= self.retries:
            previous = attempt.steps[-1]
            if self.config.update == "online" and self.memory is not None:
                # Reselect: the memory may have grown since this task started.
                prepared = await self._prepare(task, previous)
                messages, concepts = prepared.messages, prepared.concepts
                selected = prepared.selection.selected if prepared.selection else []
            else:
                messages = self.benchmark.prompt(task, concepts=concepts, previous=previous)
            try:
                (completion,) = await self._generate(task, messages, previous, 1)
            except ModelCallError as error:
                attempt.steps.append(
                    Step(
                        round=len(attempt.steps),
                        completion="",
                        error=str(error),
                        error_kind=error.kind,
                    )
                )
                return
            attempt.steps.append(await self._step(task, completion, len(attempt.steps), selected))

    async def _prepare(self, task: Any, previous: Step | None = None) -> PreparedPrompt:
        return await prepare_prompt(
            self.benchmark,
            task,
            memory=self.memory,
            selector=self.selector,
            model=self.selector_model,
            previous=previous,
        )

    def _judge(self, task: Any, attempts: list[Attempt]) -> None:
        """Mark every step's and attempt's test correctness from the hidden labels."""
        for attempt in attempts:
            for step in attempt.steps:
                step.correct = self.benchmark.judge(task, step.prediction)
            attempt.correct = (
                attempt.steps[-1].correct or []
                if attempt.steps
                else self.benchmark.judge(task, None)
            )

    async def solve(self, task: Any) -> TaskResult:
        """Select, solve (``attempts`` samples, each with up to ``retries`` retries), grade."""
        task_id = self.benchmark.task_id(task)
        attempts = [Attempt(index=i) for i in range(self.config.attempts)]
        error: str | None = None
        error_kind: str | None = None
        selection: Selection | None = None
        try:
            prepared = await self._prepare(task)
            selection = prepared.selection
            selected = selection.selected if selection else []
            completions = await self._generate(task, prepared.messages, None, self.config.attempts)
            first_steps = await asyncio.gather(
                *(self._step(task, c, 0, selected) for c in completions)
            )
            for attempt, step in zip(attempts, first_steps, strict=True):
                attempt.steps.append(step)
            await asyncio.gather(
                *(self._continue_attempt(task, a, prepared.concepts, selected) for a in attempts)
            )
        except ModelCallError as failure:
            error, error_kind = str(failure), failure.kind
        failed_step = next((s for a in attempts for s in a.steps if s.error), None)
        if error is None and failed_step is not None:
            error, error_kind = failed_step.error, failed_step.error_kind
        judge_attempts(self.benchmark, task, attempts)
        grade = self.benchmark.grade(task, attempts)
        tokens = sum((s.usage for a in attempts for s in a.steps), Usage())
        if selection is not None:
            tokens = tokens + selection.usage
        return TaskResult(
            task_id=task_id,
            solved=grade.solved,
            score=grade.score,
            attempts=attempts,
            selection=selection,
            metrics=grade.metrics,
            error=error,
            error_kind=error_kind,
            tokens=tokens,
        )

    # -- the whole run -------------------------------------------------------------------

    async def _run_batch(self, batch: list[Any]) -> list[tuple[Any, TaskResult]]:
        # Keep a bounded number of tasks alive; the model layer bounds requests anyway.
        gate = asyncio.Semaphore(max(2 * self.config.models.concurrency, 1))

        async def one(task: Any) -> tuple[Any, TaskResult]:
            async with gate:
                result = await self.solve(task)
            self.rundir.append_result(result)
            if self.on_task_done:
                self.on_task_done(result)
            return task, result

        return list(await asyncio.gather(*(one(task) for task in batch)))

    async def run(self, tasks: list[Any]) -> list[TaskResult]:
        """Solve every task not already finished in the run directory; return all results.

        Tasks whose earlier result records a model-call error are solved again.

        ``tasks`` are processed in the given order (the caller shuffles, see
        :func:`order_tasks`); the order is recorded in ``task_order.json``.
        """
        ids = [self.benchmark.task_id(t) for t in tasks]
        self.rundir.write_task_order(ids)
        # A task that failed on a model error is tried again (its good calls are cached).
        finished = self.rundir.completed()
        if self.after_batch is not None and finished:
            # A resumed online run first catches up on tasks finished before the interruption.
            await self.after_batch(
                [(t, finished[i]) for t, i in zip(tasks, ids, strict=True) if i in finished]
            )
        pending = [t for t, i in zip(tasks, ids, strict=True) if i not in finished]
        size = self.config.update_every if self.config.update == "online" else max(len(pending), 1)
        for start in range(0, len(pending), size):
            done = await self._run_batch(pending[start : start + size])
            if self.after_batch is not None:
                await self.after_batch(done)
        results = self.rundir.finished()
        return [results[i] for i in ids if i in results]


def sandbox_isolation(name: str) -> str:
    """How the sandbox ``name`` contains programs: ``kernel`` or ``process``."""
    from arcmemo.sandbox import SANDBOXES

    return str(getattr(SANDBOXES.get(name).factory, "isolation", "unknown"))


def error_summary(results: list[TaskResult]) -> dict[str, dict[str, Any]]:
    """Tasks that ended on a model-call failure, by kind: the count and the first message."""
    kinds: dict[str, dict[str, Any]] = {}
    for result in results:
        if result.error is None:
            continue
        entry = kinds.setdefault(
            result.error_kind or "error",
            {"count": 0, "first": result.error, "task": result.task_id},
        )
        entry["count"] += 1
    return kinds


def build_summary(
    config: RunConfig,
    benchmark: Benchmark[Any],
    results: list[TaskResult],
    usage: UsageSummary,
    wall_seconds: float,
    *,
    n_planned: int | None = None,
    aborted: str | None = None,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """The contents of ``summary.json``.

    ``complete`` is False when a task ended on a model error, when fewer than ``n_planned``
    tasks have a result, or when the run was ``aborted`` (the reason is kept): such numbers
    are not a result.
    """
    n_planned = len(results) if n_planned is None else n_planned
    metrics = benchmark.summarize(results, config.attempts)
    summary: dict[str, Any] = {
        "benchmark": config.benchmark.name,
        "split": config.split or config.data,
        "model": config.model,
        "select": config.selector.name if config.selector and config.memory else "none",
        "memory": str(config.memory) if config.memory else None,
        "n_tasks": len(results),
        "n_solved": sum(r.solved for r in results),
        "n_errors": sum(r.error is not None for r in results),
    }
    summary["complete"] = summary["n_errors"] == 0 and len(results) >= n_planned and aborted is None
    summary.update(metrics)
    summary.update(
        {
            "tokens": {
                "prompt": usage.total.tokens.prompt_tokens,
                "completion": usage.total.tokens.completion_tokens,
                "reasoning": usage.total.tokens.reasoning_tokens,
                "cached": usage.total.tokens.cached_tokens,
            },
            "cost_usd": usage.total.cost_usd,
            "calls": usage.total.calls,
            "cache_hits": usage.total.cache_hits,
            "stages": {name: stage.model_dump(mode="json") for name, stage in usage.stages.items()},
            # Provider statistics of the run's fresh completions (e.g. JetSpec's
            # tokens per verify round and tokens/s), as mean/min/max over completions.
            "provider_stats": {
                key: {"mean": stat.mean, "min": stat.min, "max": stat.max, "count": stat.count}
                for key, stat in sorted(usage.total.provider_stats.items())
            },
            "wall_seconds": round(wall_seconds, 3),
            "leaks_test_labels": config.leaks_test_labels,
            "sandbox": config.sandbox.name,
            "isolation": sandbox_isolation(config.sandbox.name),
            "errors": error_summary(results),
            "aborted": aborted,
            "warnings": list(warnings or []),
        }
    )
    return summary
