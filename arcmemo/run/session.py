"""What a run and a dry run both hold while they last: the benchmark and its tasks, the
memory (with its writer lock), the selector and the models, opened in the order that lets
every mistake in the user's input fail before the run directory is claimed."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcmemo.benchmarks.base import BENCHMARKS, Benchmark, SharedSandbox, tasks_sha256
from arcmemo.core.bulk import lasting
from arcmemo.core.files import LockHeldError, held_lock
from arcmemo.core.progress import ProgressSink
from arcmemo.core.prompting import prompt_overlay
from arcmemo.core.roles import FALLBACK, MODEL_ROLES, SOLVER
from arcmemo.memory.schema import Memory
from arcmemo.models.batch_mode import BatchMode
from arcmemo.models.client import ModelClient, open_model
from arcmemo.models.limiter import Limiter
from arcmemo.models.registry import check_provider_options
from arcmemo.run.config import ResolvedRunConfig, RunConfig
from arcmemo.run.data_settings import DataProvenance
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import RunDirError
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.runner import order_tasks
from arcmemo.selection.base import SELECTORS, Selector


@dataclass
class RunSession:
    """The open pieces of one run (or dry run) of ``config``."""

    config: ResolvedRunConfig
    rundir: RunWriter
    benchmark: Benchmark[Any]
    tasks: list[Any]
    memory: Memory | None
    selector: Selector
    # The client of every model role (arcmemo.core.roles), each role's own or its
    # fallback's view: what the runner, the task loop and the updater are given. Empty in a
    # dry run.
    models: dict[str, ModelClient] = field(default_factory=dict)

    @property
    def online(self) -> bool:
        """Whether the run writes its memory as it goes."""
        return self.config.update == "online" and self.memory is not None

    def clients(self) -> list[ModelClient]:
        """The model clients, each once (one client often serves several roles)."""
        return _distinct(*self.models.values())


@contextlib.asynccontextmanager
async def open_session(
    config: ResolvedRunConfig,
    rundir: RunWriter,
    *,
    models: bool = True,
    clients: Mapping[str, ModelClient] | None = None,
    progress: ProgressSink | None = None,
    batch: BatchMode | None = None,
) -> AsyncIterator[RunSession]:
    """Open what ``config`` runs on, and close it all afterwards.

    ``models``: open the models (a real run; ``clients`` give some roles' clients instead
    of the ones the config names, as tests do: with the solver's given, the config opens
    none) or only check their options (a dry run, which needs no key) and leave the sandbox
    closed. A real run also takes the memory's writer lock. ``batch`` opens the models in
    batch mode (:class:`~arcmemo.models.batch_mode.BatchMode`).
    """
    given = dict(clients or {})
    opened: dict[str, ModelClient] = {}  # the clients opened here, by role
    benchmark = create_run_benchmark(config)
    session: RunSession | None = None
    with contextlib.ExitStack() as stack:
        stack.callback(benchmark.close)
        stack.enter_context(prompt_overlay(config.prompts))  # every prompt of the run
        try:
            if not models:
                check_model_options(config)
            tasks, dataset = load_tasks(config, benchmark)
            config = config.model_copy(update={"dataset": dataset})
            if models:
                stack.enter_context(memory_access(config))
            memory = stack.enter_context(lasting_run_memory(config, rundir))
            selector = SELECTORS.create(config.selector)
            session = RunSession(config, rundir, benchmark, tasks, memory, selector)
            if models:
                if benchmark.uses_sandbox:
                    benchmark.sandbox.get()
                if SOLVER not in given:
                    open_models(config, rundir, opened, progress=progress, batch=batch)
                session.models = role_clients(config, opened, given)
            yield session
        finally:
            for client in _distinct(*given.values(), *opened.values()):
                await client.aclose()


def check_model_options(config: RunConfig) -> None:
    """Validate every role's provider options as opening the models would, opening none."""
    for name, role in config.roles.items():
        if role.provider is not None:
            spec, endpoint, options = config.role_spec(name)
            check_provider_options(spec, base_url=endpoint, **options)


def create_run_benchmark(config: RunConfig) -> Benchmark[Any]:
    """The configured benchmark, with the configured sandbox opened on first use."""
    return BENCHMARKS.create(config.benchmark, sandbox=SharedSandbox(config.sandbox))


def load_tasks(config: RunConfig, benchmark: Benchmark[Any]) -> tuple[list[Any], DataProvenance]:
    """The run's tasks, in processing order (only its shard's, with ``--shard``), and where
    they came from (every shard of a run records the same: its hash is taken before
    ``--shard`` takes its part)."""
    tasks = benchmark.load(
        split=config.split, data=config.data, task_ids=config.tasks, limit=config.limit
    )
    ordered = order_tasks(tasks, config.order_seed)
    provenance = data_provenance(config, benchmark, tasks)
    return (config.shard.take(ordered) if config.shard else ordered), provenance


def data_provenance(
    config: RunConfig, benchmark: Benchmark[Any], tasks: list[Any]
) -> DataProvenance:
    """``config.json``'s ``dataset``: where ``tasks`` were read from and their hash."""
    origin = benchmark.data_origin(split=config.split, data=config.data)
    return DataProvenance(
        path=origin.path,
        version=origin.version,
        tasks=len(tasks),
        sha256=tasks_sha256(benchmark, tasks),
    )


def lasting_run_memory(
    config: RunConfig, rundir: RunDirectory
) -> contextlib.AbstractContextManager[Memory | None]:
    """The memory the run starts from (a resumed online run continues from the snapshot of
    its last finished batch), left out of the collector's walks while the run or dry run
    lasts (:func:`arcmemo.core.bulk.lasting`); None without one."""
    if config.memory is None:
        return contextlib.nullcontext()
    return lasting(lambda: rundir.resume_memory(config))


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


def open_models(
    config: RunConfig,
    rundir: RunDirectory,
    opened: dict[str, ModelClient],
    *,
    progress: ProgressSink | None = None,
    batch: BatchMode | None = None,
) -> None:
    """Open into ``opened`` a client for each role that names a model of its own (the solver
    always does), each added as it opens (so that the caller closes those opened before
    one that fails).

    Each is built from its own spec, endpoint and options, so a key only ever goes to its
    own provider's host; they share the run's limits, call log, progress display, folder
    of requests in flight and batch mode.
    """
    limiter = Limiter(config.models.concurrency, rpm=config.models.rpm, tpm=config.models.tpm)

    def open_role(name: str) -> ModelClient:
        spec, endpoint, options = config.role_spec(name)
        return open_model(
            spec,
            base_url=endpoint,
            model_args=options,
            config=config.models,
            call_log_path=rundir.calls_path,
            limiter=limiter,
            progress=progress,
            in_flight_dir=rundir.in_flight_dir,
            batch=batch,
        )

    for name in MODEL_ROLES:
        if config.roles[name].provider is not None:
            opened[name] = open_role(name)


def role_clients(
    config: RunConfig, opened: Mapping[str, ModelClient], given: Mapping[str, ModelClient]
) -> dict[str, ModelClient]:
    """The client of every role: the one ``given`` for it as it is; else a view of the one
    ``opened`` for it, or of its fallback role's client, that calls with the role's sampling
    (:meth:`~arcmemo.run.config.RunConfig.role_sampling`)."""
    clients: dict[str, ModelClient] = {}
    for name in MODEL_ROLES:
        fallback = FALLBACK[name]
        if name in given or fallback is None:
            clients[name] = given.get(name) or opened[name]
            continue
        base = opened.get(name) or clients[fallback]
        sampling = config.role_sampling(name)
        if name not in opened and fallback != SOLVER and sampling == config.role_sampling(fallback):
            clients[name] = base  # its fallback's client, calling as its fallback does
        else:
            clients[name] = base.with_defaults(sampling)
    return clients


def _distinct(*clients: ModelClient | None) -> list[ModelClient]:
    """The clients, each once (solver and auxiliary model are often the same client)."""
    return list({id(c): c for c in clients if c is not None}.values())


async def check_batch_mode(clients: list[ModelClient]) -> None:
    """Fail at once (BatchUnsupportedError) for a client in batch mode whose endpoint has no
    batch API."""
    for client in clients:
        await client.check_batch()
