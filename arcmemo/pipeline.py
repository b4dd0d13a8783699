"""Putting a run together from its config: models, memory, selector, benchmark, runner.

This is the Python entry point behind ``arcmemo run``::

    from arcmemo.config import RunConfig
    from arcmemo.pipeline import run_benchmark
    summary = asyncio.run(run_benchmark(RunConfig(benchmark="arc-agi-1", ...)))
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.benchmarks.base import Benchmark, TaskResult, create_benchmark
from arcmemo.config import RunConfig
from arcmemo.files import atomic_write_text
from arcmemo.memory.ontology import Memory
from arcmemo.memory.render import estimate_tokens
from arcmemo.models.client import ModelClient, StatSummary, open_model
from arcmemo.models.limiter import Limiter
from arcmemo.models.prices import PriceTable
from arcmemo.rundir import RunDirectory, usage_from_call_log
from arcmemo.runner import Runner, build_summary, hide_own_concepts, order_tasks
from arcmemo.selection.base import Selector, create_selector


def load_tasks(config: RunConfig, benchmark: Benchmark[Any]) -> list[Any]:
    """The run's tasks, in processing order."""
    tasks = benchmark.load(
        split=config.split, data=config.data, task_ids=config.tasks, limit=config.limit
    )
    return order_tasks(tasks, config.seed)


def load_run_memory(config: RunConfig) -> Memory | None:
    """The memory the run starts from (a resumed online run continues its last snapshot)."""
    if config.memory is None:
        return None
    snapshots = sorted((config.out / "memory").glob("batch-*.json"))
    return Memory.load(snapshots[-1] if snapshots else config.memory)


def build_selector(
    name: str, *, memory_budget: int | None, top_k: int, embedder: str = "tfidf"
) -> Selector:
    """The selector ``name`` with the options that apply to it."""
    options: dict[str, Any] = {}
    if name == "llm":
        options["budget_tokens"] = memory_budget
    if name == "embedding":
        options.update(top_k=top_k, embedder=embedder)
    return create_selector(name, **options)


def make_selector(config: RunConfig) -> Selector:
    """The run's selector (``none`` when the run has no memory)."""
    return build_selector(
        config.select if config.memory is not None else "none",
        memory_budget=config.memory_budget,
        top_k=config.top_k,
        embedder=config.embedder,
    )


def open_models(config: RunConfig, rundir: RunDirectory) -> tuple[ModelClient, ModelClient]:
    """The solver model and the auxiliary model (selection, abstraction), sharing limits."""
    limiter = Limiter(config.models.concurrency, rpm=config.models.rpm, tpm=config.models.tpm)
    solver = open_model(
        config.model,
        base_url=config.base_url,
        model_args=config.model_args,
        config=config.models,
        call_log_path=rundir.calls_path,
        limiter=limiter,
    )
    if not config.aux_model or config.aux_model == config.model:
        return solver, solver
    aux = open_model(
        config.aux_model,
        base_url=config.base_url,
        config=config.models,
        call_log_path=rundir.calls_path,
        limiter=limiter,
    )
    return solver, aux


def _distinct(*clients: ModelClient | None) -> list[ModelClient]:
    """The clients, each once (solver and auxiliary model are often the same client)."""
    return list({id(c): c for c in clients if c is not None}.values())


class ProgressSink:
    """Receives task completions (the CLI shows a progress bar through it)."""

    def start(self, total: int, already_done: int) -> None: ...

    def task_done(self, result: TaskResult) -> None: ...

    def stop(self) -> None: ...


async def run_benchmark(
    config: RunConfig,
    *,
    progress: ProgressSink | None = None,
    solver: ModelClient | None = None,
    aux: ModelClient | None = None,
) -> dict[str, Any]:
    """Run (or resume) the configured run; returns and writes ``summary.json``.

    ``solver``/``aux`` override the models built from the config (tests pass scripted ones).
    """
    started = time.perf_counter()
    rundir = RunDirectory(config.out)
    benchmark = create_benchmark(config.benchmark)
    progress = progress or ProgressSink()
    try:
        # Everything that can fail on user input (tasks, memory, keys) fails before the
        # run directory is claimed, so a corrected command can reuse the same --out.
        tasks = load_tasks(config, benchmark)
        memory = load_run_memory(config)
        if solver is None:
            solver, built_aux = open_models(config, rundir)
            aux = aux or built_aux
        aux = aux or solver
        config = rundir.start(config)
        runner = Runner(
            config,
            benchmark,
            solver,
            memory=memory,
            selector=make_selector(config),
            selector_model=aux,
            on_task_done=progress.task_done,
        )
        if config.update == "online" and memory is not None:
            from arcmemo.continual import ContinualUpdater

            runner.after_batch = ContinualUpdater(config, benchmark, runner, aux).after_batch
        progress.start(len(tasks), len(rundir.completed()))
        try:
            results = await runner.run(tasks)
        finally:
            progress.stop()
        usage = usage_from_call_log(rundir.calls_path)
        for client in _distinct(solver, aux):
            for key, stat in client.usage_summary().total.provider_stats.items():
                usage.total.provider_stats.setdefault(key, StatSummary()).merge(stat)
        summary = build_summary(config, benchmark, results, usage, time.perf_counter() - started)
        rundir.write_summary(summary)
        return summary
    finally:
        benchmark.close()
        for client in _distinct(solver, aux):
            await client.aclose()


class DryRunReport(BaseModel):
    """What a run would send in its first round."""

    n_tasks: int
    calls: int = Field(description="Model calls of the first round (selection + samples).")
    prompt_tokens: int = Field(description="Estimated prompt tokens of those calls.")
    cost_usd: float | None = Field(description="Estimated prompt-side cost; None if unknown.")
    prompts_dir: Path


async def dry_run(config: RunConfig) -> DryRunReport:
    """Render every first-round prompt into ``prompts/`` and estimate calls, tokens and cost.

    Needs no API key: selectors that would call a model are shown by their prompt instead.
    """
    rundir = RunDirectory(config.out)
    rundir.path.mkdir(parents=True, exist_ok=True)
    benchmark = create_benchmark(config.benchmark)
    try:
        tasks = load_tasks(config, benchmark)
        memory = load_run_memory(config)
        selector = make_selector(config)
        calls = tokens = 0
        for task in tasks:
            task_id = benchmark.task_id(task)
            concepts = ""
            if memory is not None:
                visible = hide_own_concepts(memory, task_id)
                preview = selector.preview(visible, benchmark.describe(task))
                if preview is not None:
                    calls += 1
                    tokens += estimate_tokens(preview)
                    atomic_write_text(rundir.prompts_dir / f"{task_id}.select.txt", preview)
                    concepts = "(concepts chosen by the selector at run time)"
                else:
                    selection = await selector.select(
                        visible, benchmark.describe(task), task_id=task_id, model=None
                    )
                    concepts = selector.render(visible, selection)
            messages = benchmark.prompt(task, concepts=concepts, previous=None)
            text = "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)
            atomic_write_text(rundir.prompts_dir / f"{task_id}.txt", text)
            calls += config.attempts
            tokens += estimate_tokens(text) * config.attempts
        price = PriceTable.load(config.models.prices_path).price_for(config.model)
        cost = tokens * price.input / 1_000_000 if price and price.input is not None else None
        return DryRunReport(
            n_tasks=len(tasks),
            calls=calls,
            prompt_tokens=tokens,
            cost_usd=cost,
            prompts_dir=rundir.prompts_dir,
        )
    finally:
        benchmark.close()
