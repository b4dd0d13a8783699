"""Putting a run together from its config: models, memory, selector, benchmark, runner.

This is the Python entry point behind ``arcmemo run``::

    from arcmemo.config import RunConfig
    from arcmemo.pipeline import run_benchmark
    summary = asyncio.run(run_benchmark(RunConfig(benchmark="arc-agi-1", ...)))
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from arcmemo.abstraction.base import ABSTRACTORS
from arcmemo.attempt import prepare_prompt
from arcmemo.benchmarks.base import BENCHMARKS, Benchmark, SharedSandbox
from arcmemo.bulk import lasting
from arcmemo.config import (
    DEFAULT_SAMPLING_TEMPERATURE,
    RunConfig,
    SamplingConfig,
    replicate_namespace,
)
from arcmemo.continual import ContinualUpdater, write_precision
from arcmemo.estimate import (
    ABSTRACTION_CALLS,
    ABSTRACTION_INPUT_TOKENS,
    ASKS,
    JUDGE_INPUT_TOKENS,
    RETRY_EXTRA_TOKENS,
    RunEstimate,
    Span,
    output_range,
)
from arcmemo.files import LockHeldError, held_lock
from arcmemo.memory.ontology import Memory
from arcmemo.models.batch import BatchSettings
from arcmemo.models.client import ModelClient, ModelUnreachableError, open_model
from arcmemo.models.limiter import Limiter
from arcmemo.models.prices import PriceTable
from arcmemo.models.registry import PROVIDERS, check_provider_options, parse_spec
from arcmemo.progress import ProgressSink, RunStarted, RunStopped, TaskFinished
from arcmemo.resources import data_dir
from arcmemo.rundir import RunDirectory, RunDirError, RunWriter
from arcmemo.runner import Runner, build_summary, order_tasks, sandbox_isolation
from arcmemo.sandbox import SANDBOXES
from arcmemo.selection.base import SELECTORS
from arcmemo.signals import WRITE_SIGNALS
from arcmemo.tokens import estimate_tokens


def resolve_config(config: RunConfig) -> RunConfig:
    """The config with every setting decided: what the user left to the benchmark (retries,
    write signal, selector) filled in, and each component's options spelled out.

    ``arcmemo run`` and :func:`run_benchmark` both go through here, so the same options give
    the same run from the CLI and from Python.
    """
    benchmark = BENCHMARKS.get(config.benchmark.name)
    defaults = benchmark.factory.defaults  # type: ignore[attr-defined]
    check_options(config)
    if config.memory is None:
        selector = SELECTORS.spec("none")  # nothing to select from
    elif config.selector is None:
        selector = SELECTORS.spec(defaults.selector)
    else:
        selector = SELECTORS.spec(config.selector.name, config.selector.options)
    signal = config.write_signal or WRITE_SIGNALS.spec(defaults.write_signal)
    fields = config.model_dump()
    fields["models"]["cache_namespace"] = replicate_namespace(config.replicate)
    fields["sampling"] = _sampling_for_attempts(config).model_dump()
    fields.update(
        data=_resolved(config.data),
        memory=_resolved(config.memory),
        memory_out=_resolved(config.memory_out),
        fingerprints=fingerprints(config),
        benchmark=BENCHMARKS.spec(config.benchmark.name, config.benchmark.options),
        selector=selector,
        write_signal=WRITE_SIGNALS.spec(signal.name, signal.options),
        memory_format=ABSTRACTORS.spec(config.memory_format.name, config.memory_format.options),
        sandbox=SANDBOXES.spec(config.sandbox.name, config.sandbox.options),
        retries=defaults.retries if config.retries is None else config.retries,
        schedule=config.run_schedule,
        reselect=config.retries_reselect,
    )
    return type(config).model_validate(fields)


class RunOptionsError(ValueError):
    """Options that do not make a run together (one would be silently ignored)."""


def check_options(config: RunConfig) -> None:
    """Refuse options that would be silently ignored, and a run whose tasks nobody chose."""
    if config.memory is None:
        if config.update == "online":
            raise RunOptionsError(
                "--update online needs --memory, the memory file the run grows (start one "
                "with `arcmemo memory init --out FILE`)"
            )
        if config.selector is not None and config.selector.name != "none":
            raise RunOptionsError(
                f"--select {config.selector.name} needs --memory, the memory to select from"
            )
    if config.split is None and config.data is None and not config.tasks:
        raise RunOptionsError(
            "no tasks chosen: give --split (`arcmemo run --help` names the benchmark's "
            "splits), --data FILE_OR_FOLDER or --tasks IDS"
        )


def _resolved(path: str | Path | None) -> str | None:
    """An absolute path where ``path`` names a file or folder (so a resume from another
    directory, or the same file spelled another way, is the same run)."""
    if path is None:
        return None
    candidate = Path(path).expanduser()
    return str(candidate.resolve()) if candidate.exists() else str(path)


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fingerprints(config: RunConfig) -> dict[str, str]:
    """sha256 of the memory file's content and of every prompt template."""
    prints = dict(config.fingerprints)  # a resumed config keeps its first memory print
    if config.memory is not None and "memory" not in prints and Path(config.memory).is_file():
        prints["memory"] = _sha256_file(Path(config.memory))
    templates = sorted(data_dir("prompts").rglob("*.j2"))
    digest = hashlib.sha256()
    for template in templates:
        digest.update(str(template.relative_to(data_dir("prompts"))).encode())
        digest.update(template.read_bytes())
    prints["prompts"] = digest.hexdigest()
    return prints


def _sampling_for_attempts(config: RunConfig) -> SamplingConfig:
    """The solver's sampling, made to sample when several attempts would otherwise all be
    the same greedy decode (a provider that is greedy unless given a temperature)."""
    sampling = config.sampling
    if config.attempts > 1 and sampling.temperature is None:
        provider = PROVIDERS.get(parse_spec(config.model)[0]).factory
        if getattr(provider, "greedy_by_default", False):
            return sampling.model_copy(update={"temperature": DEFAULT_SAMPLING_TEMPERATURE})
    return sampling


def run_warnings(config: RunConfig) -> list[str]:
    """What a reader of the run's numbers must know (also printed by ``arcmemo run``)."""
    warnings = []
    if config.attempts > 1 and config.sampling.temperature == 0:
        warnings.append(
            f"--attempts {config.attempts} with --temperature 0: greedy decoding makes every "
            "attempt the same completion, so attempts beyond the first add no solves"
        )
    if config.leaks_test_labels:
        warnings.append("memory writes used test labels (--update-signal oracle)")
    if benchmark_uses_sandbox(config) and sandbox_isolation(config.sandbox.name) != "kernel":
        warnings.append(f"programs ran with --sandbox {config.sandbox.name} (no kernel isolation)")
    if config.batch and config.update == "online" and config.memory is not None:
        warnings.append(
            f"--batch with --update online: the memory changes after every {config.update_every} "
            "tasks, so a provider batch holds the requests of one such batch only, and the "
            "selection, solving, retry and abstraction batches of each wait on the one before"
        )
    return warnings


def benchmark_uses_sandbox(config: RunConfig) -> bool:
    return bool(getattr(BENCHMARKS.get(config.benchmark.name).factory, "uses_sandbox", False))


def create_run_benchmark(config: RunConfig) -> Benchmark[Any]:
    """The configured benchmark, with the configured sandbox opened on first use."""
    return BENCHMARKS.create(config.benchmark, sandbox=SharedSandbox(config.sandbox))


def load_tasks(config: RunConfig, benchmark: Benchmark[Any]) -> list[Any]:
    """The run's tasks, in processing order (only its shard's, with ``--shard``)."""
    tasks = benchmark.load(
        split=config.split, data=config.data, task_ids=config.tasks, limit=config.limit
    )
    ordered = order_tasks(tasks, config.order_seed)
    return config.shard.take(ordered) if config.shard else ordered


def lasting_run_memory(
    config: RunConfig, rundir: RunDirectory
) -> contextlib.AbstractContextManager[Memory | None]:
    """The memory the run starts from (a resumed online run continues from the snapshot of
    its last finished batch), left out of the collector's walks while the run or dry run
    lasts (:func:`arcmemo.bulk.lasting`); None without one."""
    path = rundir.resume_memory_path(config)
    return contextlib.nullcontext() if path is None else lasting(lambda: Memory.load(path))


def writer_lock_path(memory: Path) -> Path:
    """The lock file a run writing ``memory`` holds for its whole life."""
    return memory.with_name(memory.name + ".writer.lock")


@contextlib.contextmanager
def memory_access(config: RunConfig) -> Iterator[None]:
    """One memory file, one writer: an online run holds the lock of the memory it writes
    while it runs, and any run fails at once (one line) on a memory another live run is
    writing, instead of losing that run's updates or reading a memory that moves."""
    writes = config.update == "online" and config.memory is not None
    target = config.memory_out or config.memory if writes else None
    holder = f"pid {os.getpid()}, run directory {config.out}"
    with contextlib.ExitStack() as stack:
        try:
            if target is not None:
                stack.enter_context(held_lock(writer_lock_path(Path(target)), holder=holder))
            if config.memory is not None and config.memory != target:
                with held_lock(writer_lock_path(Path(config.memory)), holder=holder, shared=True):
                    pass  # only checks that no live run is writing it
        except LockHeldError as error:
            raise RunDirError(
                f"{error.path.with_name(error.path.name.removesuffix('.writer.lock'))} is being "
                f"written by another live run ({error.holder}); wait for it to end, or give "
                "this run its own --memory-out"
            ) from None
        yield


def open_models(config: RunConfig, rundir: RunDirectory) -> tuple[ModelClient, ModelClient]:
    """The solver model and the aux model (selection, description, abstraction).

    Each is built from its own spec, endpoint and options, so a key only ever goes to its
    own provider's host; they share the run's limits and call log.
    """
    limiter = Limiter(config.models.concurrency, rpm=config.models.rpm, tpm=config.models.tpm)
    solver = open_model(
        config.model,
        base_url=config.base_url,
        model_args=config.model_args,
        config=config.models,
        call_log_path=rundir.calls_path,
        limiter=limiter,
    )
    if config.aux_model is None:
        return solver, solver.with_defaults(config.aux_sampling)
    aux = open_model(
        config.aux_model,
        base_url=config.aux_base_url,
        model_args=config.aux_model_args,
        config=config.models,
        call_log_path=rundir.calls_path,
        limiter=limiter,
    )
    return solver, aux.with_defaults(config.aux_sampling)


def _distinct(*clients: ModelClient | None) -> list[ModelClient]:
    """The clients, each once (solver and auxiliary model are often the same client)."""
    return list({id(c): c for c in clients if c is not None}.values())


async def enable_batch_mode(
    clients: list[ModelClient], rundir: RunDirectory, settings: BatchSettings | None = None
) -> None:
    """Put every client in batch mode, recording its batches in the run directory; fails at
    once (BatchUnsupportedError) for a model or endpoint without a batch API."""
    for client in clients:
        client.enable_batch(rundir.batches_path, settings)
        await client.check_batch()


async def run_benchmark(
    config: RunConfig,
    *,
    progress: ProgressSink | None = None,
    solver: ModelClient | None = None,
    aux: ModelClient | None = None,
    force_resume: bool = False,
    batch_settings: BatchSettings | None = None,
) -> dict[str, Any]:
    """Run (or resume) the configured run; returns and writes ``summary.json``.

    ``solver``/``aux`` override the models built from the config (tests pass scripted ones);
    ``force_resume`` continues a run whose settings differ (recorded in ``config.json``);
    ``batch_settings`` tunes ``--batch`` (gathering window, polling, progress callback).
    """
    started = time.perf_counter()
    config = resolve_config(config)
    rundir = RunWriter(config.out)
    benchmark = create_run_benchmark(config)
    progress = progress or ProgressSink()
    access = contextlib.ExitStack()
    try:
        # Everything that can fail on user input (tasks, memory, keys) fails before the
        # run directory is claimed, so a corrected command can reuse the same --out.
        tasks = load_tasks(config, benchmark)
        access.enter_context(memory_access(config))
        memory = access.enter_context(lasting_run_memory(config, rundir))
        selector = SELECTORS.create(config.selector or "none")
        if benchmark.uses_sandbox:
            benchmark.sandbox.get()
        if solver is None:
            solver, built_aux = open_models(config, rundir)
            aux = aux or built_aux
        aux = aux or solver
        online = config.update == "online" and memory is not None
        # A batched run (Runner.batched) has its directory to itself; other runs share it
        # with processes that claim tasks.
        access.enter_context(rundir.occupy(alone=online or config.run_schedule == "passes"))
        if config.batch:
            await enable_batch_mode(_distinct(solver, aux), rundir, batch_settings)
        for client in _distinct(solver, aux):
            client.progress = progress
        config = rundir.start(config, force=force_resume)
        updater: ContinualUpdater | None = None
        if online and memory is not None:
            updater = ContinualUpdater(config, benchmark, memory, rundir, aux)
        runner = Runner(
            config,
            benchmark,
            solver,
            rundir=rundir,
            selector=selector,
            memory=memory,
            selector_model=aux,
            after_batch=updater.after_batch if updater else None,
            on_task_done=lambda result: progress.emit(TaskFinished(result=result)),
            progress=progress,
        )
        progress.emit(RunStarted(total=len(tasks), already_done=len(rundir.completed())))
        aborted: ModelUnreachableError | None = None
        try:
            await runner.run(tasks)
        except ModelUnreachableError as error:
            aborted = error
        finally:
            progress.emit(RunStopped())
        by_id = rundir.finished()
        results = [by_id[i] for i in (benchmark.task_id(t) for t in tasks) if i in by_id]
        summary = build_summary(
            config,
            benchmark,
            results,
            rundir.usage(),
            time.perf_counter() - started,
            n_planned=len(tasks),
            aborted=str(aborted) if aborted else None,
            warnings=run_warnings(config),
        )
        if updater is not None and summary.get("labels") is not False:  # no labels: no precision
            commit = rundir.read_commit()
            summary["write_precision"] = write_precision(
                updater.signal.name, commit.written if commit else {}, results
            )
        rundir.write_summary(summary)
        if aborted is not None:
            raise aborted
        return summary
    finally:
        access.close()
        benchmark.close()
        for client in _distinct(solver, aux):
            await client.aclose()


def estimate_record(estimate: RunEstimate) -> dict[str, Any]:
    """``estimate.json``: the stages and the totals (what ``experiments/all.sh`` adds up)."""

    def span(value: Span | None) -> dict[str, float] | None:
        return None if value is None else value.model_dump()

    return {
        **estimate.model_dump(mode="json"),
        "total": {
            "calls": span(estimate.calls),
            "input_tokens": span(estimate.input_tokens),
            "output_tokens": span(estimate.output_tokens),
            "cost_usd": span(estimate.cost_usd),
        },
    }


class DryRunReport(BaseModel):
    """What a run would send: every stage's calls, tokens and cost as a range."""

    n_tasks: int
    estimate: RunEstimate
    prompts_dir: Path
    estimate_path: Path | None = None


def _joined(prompts: list[str]) -> str:
    """The prompts of one selection as one file, each under a numbered heading."""
    return "\n\n".join(f"[prompt {n} of {len(prompts)}]\n{p}" for n, p in enumerate(prompts, 1))


async def dry_run(config: RunConfig) -> DryRunReport:
    """Render every first-round prompt into ``prompts/`` and estimate the whole run.

    Needs no API key: selectors that would call a model are shown by their prompt instead.
    """
    config = resolve_config(config)
    check_provider_options(config.model, base_url=config.base_url, **config.model_args)
    if config.aux_model is not None:
        check_provider_options(
            config.aux_model, base_url=config.aux_base_url, **config.aux_model_args
        )
    rundir = RunWriter(config.out)
    benchmark = create_run_benchmark(config)
    with contextlib.ExitStack() as stack:
        stack.callback(benchmark.close)
        tasks = load_tasks(config, benchmark)
        memory = stack.enter_context(lasting_run_memory(config, rundir))
        selector = SELECTORS.create(config.selector or "none")
        sampling = config.sampling
        aux = config.aux_model or config.model
        solver_out = output_range(config.model, sampling.max_tokens, sampling.thinking_budget)
        aux_out = output_range(aux, None, None)
        retries = config.retries or 0
        online = config.update == "online" and memory is not None
        estimate = RunEstimate(n_tasks=len(tasks))
        for task in tasks:
            task_id = benchmark.task_id(task)
            prepared = await prepare_prompt(
                benchmark, task, memory=memory, selector=selector, model=None, preview=True
            )
            text = "\n\n".join(f"[{m.role}]\n{m.content}" for m in prepared.messages)
            rundir.write_prompt(task_id, text)
            prompt = estimate_tokens(text)
            attempts = config.attempts
            estimate.stage("solve", config.model).add_calls(
                Span(low=attempts, high=attempts), prompt, solver_out
            )
            if retries:
                estimate.stage("retry", config.model).add_calls(
                    Span(high=attempts * retries), prompt + RETRY_EXTRA_TOKENS, solver_out
                )
            if prepared.selection_prompts:
                rundir.write_prompt(f"{task_id}.select", _joined(prepared.selection_prompts))
            # Retries select again with reselect; every structured answer may be re-asked.
            selections = 1 + (attempts * retries if config.retries_reselect else 0)
            for prompt_text in prepared.selection_prompts:
                estimate.stage("select", aux).add_calls(
                    Span(low=1, high=selections * ASKS), estimate_tokens(prompt_text), aux_out
                )
            if online:
                calls = ABSTRACTION_CALLS.get(config.memory_format.name, 1)
                estimate.stage("abstract", aux).add_calls(
                    Span(high=calls * ASKS), ABSTRACTION_INPUT_TOKENS, aux_out
                )
                if config.attribution_judge:  # only when the solver was shown concepts
                    estimate.stage("attribute", aux).add_calls(
                        Span(high=ASKS), JUDGE_INPUT_TOKENS, aux_out
                    )
        prices = PriceTable.load(config.models.prices_path)
        for stage in estimate.stages.values():
            stage.price(prices.price_for(stage.model))
        estimate.assumptions = [
            f"output tokens per call: {config.model} {solver_out[0]:,}-{solver_out[1]:,}"
            + (f", {aux} {aux_out[0]:,}-{aux_out[1]:,}" if aux != config.model else ""),
            "low: every task solved at the first try, nothing written to memory; high: every "
            f"retry used (+{RETRY_EXTRA_TOKENS:,} prompt tokens each), every task abstracted "
            "(a failed task's pitfalls take its place), every structured answer re-asked "
            f"{ASKS - 1} time(s)",
            "prompt tokens are estimated by counting BPE-like pieces (within ~10% of o200k on "
            "ARC prompts); provider prompt caching (cheaper repeated prefixes) is not "
            "subtracted",
        ]
        if selector.offline() is not selector:
            estimate.assumptions.append(
                "the remote embedder is stood in for by TF-IDF (as many entries picked); its "
                "embedding calls are not counted"
            )
        return DryRunReport(
            n_tasks=len(tasks),
            estimate=estimate,
            prompts_dir=rundir.prompts_dir,
            estimate_path=rundir.write_estimate(estimate_record(estimate)),
        )
