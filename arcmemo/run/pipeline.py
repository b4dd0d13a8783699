"""The plan of a run: resolve the config, open its session, run or estimate, summarize.

This is the Python entry point behind ``arcmemo run``::

    from arcmemo.run.config import RunConfig
    from arcmemo.run.pipeline import run_benchmark
    summary = asyncio.run(run_benchmark(RunConfig(benchmark="arc-agi-1", ...)))

Each step lives in a module of its own: :mod:`arcmemo.run.resolve` decides the settings,
:mod:`arcmemo.run.session` opens the benchmark, memory, locks and models,
:mod:`arcmemo.run.estimate` prices a dry run, :mod:`arcmemo.run.warnings` says what a reader
must know.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from arcmemo.core.progress import ProgressSink, RunStarted, RunStopped, TaskFinished
from arcmemo.core.roles import AUX, SOLVER
from arcmemo.models.batch import BatchSettings, ProgressCallback, log_progress
from arcmemo.models.batch_mode import BatchMode
from arcmemo.models.client import ModelClient
from arcmemo.models.retry import ModelUnreachableError
from arcmemo.run.config import RunConfig
from arcmemo.run.continual import ContinualUpdater
from arcmemo.run.directory.records import RunDirError
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.estimate import DryRunReport, estimate_record, estimate_run
from arcmemo.run.resolve import resolve_config
from arcmemo.run.runner import Runner
from arcmemo.run.session import check_batch_mode, open_session
from arcmemo.run.summary import build_summary, unwritten_steps, written_steps
from arcmemo.run.warnings import run_warnings

# What cancelled a run, when its caller does not say: asyncio.run cancels the run on Ctrl-C,
# and a caller may cancel its task. `arcmemo run` names the signal.
CANCELLED = "a cancellation (Ctrl-C or the caller)"


def interrupted(cause: str) -> str:
    """summary.json's `aborted` of a run that ``cause`` stopped (a partial summary, marked
    incomplete): ``SIGTERM``, ``SIGINT (Ctrl-C)``, ..."""
    return f"interrupted by {cause}; run the same command again to resume"


async def run_benchmark(
    config: RunConfig,
    *,
    progress: ProgressSink | None = None,
    models: Mapping[str, ModelClient] | None = None,
    force_resume: bool = False,
    batch_progress: ProgressCallback = log_progress,
    stop_cause: Callable[[], str] = lambda: CANCELLED,
    solver: ModelClient | None = None,
    aux: ModelClient | None = None,
) -> dict[str, Any]:
    """Run (or resume) the configured run; returns and writes ``summary.json``.

    ``models`` gives clients by role name (:mod:`arcmemo.core.roles`) instead of the models
    the config names (tests pass scripted ones; with the solver's given, the config opens
    none, and a role left out calls its fallback's);
    ``force_resume`` continues a run whose settings differ (recorded in ``config.json``);
    ``batch_progress`` shows ``--batch`` progress (the config sets window and polling);
    ``stop_cause`` names what cancelled the run, for the summary's ``aborted``;
    ``solver``/``aux``: deprecated spellings of ``models={"solver": ..., "aux": ...}``.
    """
    started = time.perf_counter()
    resolved = resolve_config(config)
    rundir = RunWriter(resolved.out)
    rundir.refuse_a_file()
    progress = progress or ProgressSink()
    # Everything that can fail on user input (tasks, memory, keys) fails while the session
    # opens, before the run directory is claimed, so a corrected command can reuse --out.
    given = {**legacy_role_keywords(solver=solver, aux=aux), **(models or {})}
    # A client the caller gives is used through a view that reports to this run (one view
    # per client, so that a client given for two roles stays one).
    batch = batch_mode(resolved, rundir, batch_progress)
    views: dict[int, ModelClient] = {}
    clients = {
        name: views.setdefault(id(c), c.reporting_to(progress, rundir.in_flight_dir, batch))
        for name, c in given.items()
    }
    async with open_session(
        resolved, rundir, clients=clients, progress=progress, batch=batch
    ) as session:
        # A run in task batches (Runner.batched) has its directory to itself; other runs
        # share it with processes that claim tasks.
        with rundir.occupy(alone=session.online or resolved.run_schedule == "passes"):
            await check_batch_mode(session.clients())
            resolved = rundir.start(session.config, force=force_resume)
            rundir.begin_session()
            rundir.collect_cut_off_calls()
            updater = None
            if session.online and session.memory is not None:
                updater = ContinualUpdater(
                    resolved, session.benchmark, session.memory, rundir, session.models
                )
            runner = Runner(
                resolved,
                session.benchmark,
                session.models,
                rundir=rundir,
                selector=session.selector,
                memory=session.memory,
                after_batch=updater.after_batch if updater else None,
                on_task_done=lambda result: progress.emit(TaskFinished(result=result)),
                progress=progress,
            )
            completed = list(rundir.completed().values())
            progress.emit(
                RunStarted(
                    roles=resolved.given_roles,
                    total=len(session.tasks),
                    already_done=len(completed),
                    already_solved=sum(r.solved for r in completed),
                    already_unscored=sum(r.score is None for r in completed),
                )
            )
            unreachable: ModelUnreachableError | None = None
            stopped: str | None = None
            try:
                await runner.run(session.tasks)
            except ModelUnreachableError as error:
                unreachable = error
                stopped = str(error)
            except asyncio.CancelledError:
                # Ctrl-C or SIGTERM (asyncio.run cancels the run): the summary of what is
                # done so far, marked incomplete, is written before the interrupt goes on.
                stopped = interrupted(stop_cause())
            finally:
                progress.emit(RunStopped())
            by_id = rundir.finished()
            ids = (session.benchmark.task_id(t) for t in session.tasks)
            results = [by_id[i] for i in ids if i in by_id]
            rundir.mark_session("end")
            # The time all the run's sessions ran (a killed one up to its last progress).
            sessions = rundir.wall_time()
            summary = build_summary(
                resolved,
                session.benchmark,
                results,
                rundir.usage(),
                sessions.seconds if sessions else time.perf_counter() - started,
                n_planned=len(session.tasks),
                aborted=stopped,
                warnings=list(
                    dict.fromkeys([*run_warnings(resolved), *session.benchmark.data_warnings])
                ),
                written=written_steps(rundir, resolved),
                unwritten=unwritten_steps(rundir),
                cut_off_calls=len(rundir.cut_off_calls()),
                sessions=sessions,
            )
            rundir.write_summary(summary)
        compact_results(rundir)
        if unreachable is not None:
            raise unreachable
        if stopped is not None:
            raise asyncio.CancelledError
        return summary.file_dict()


def batch_mode(
    config: RunConfig, rundir: RunWriter, on_progress: ProgressCallback
) -> BatchMode | None:
    """How the run's clients are opened with ``--batch``: provider batches recorded in the
    run directory, gathered and watched as the config says; None without it."""
    if not config.batch:
        return None
    settings = BatchSettings(
        quiet_s=config.batch_window,
        poll_s=config.batch_poll,
        keep_files=config.batch_keep_files,
        on_progress=on_progress,
    )
    return BatchMode(rundir.batches_path, settings)


def legacy_role_keywords(
    *, solver: ModelClient | None, aux: ModelClient | None
) -> dict[str, ModelClient]:
    """The clients given by :func:`run_benchmark`'s retired keywords, by role (with a
    DeprecationWarning): the one place they are read."""
    given = {name: c for name, c in ((SOLVER, solver), (AUX, aux)) if c is not None}
    if given:
        warnings.warn(
            "run_benchmark(solver=..., aux=...) is deprecated: pass the clients by role, "
            f"models={{{', '.join(repr(name) + ': ...' for name in given)}}}",
            DeprecationWarning,
            stacklevel=2,
        )
    return given


def compact_results(rundir: RunWriter) -> None:
    """One line per task in ``results.jsonl``, when no other process of the run is live
    (the last one to end compacts)."""
    try:
        with rundir.occupy(alone=True):
            rundir.compact_results()
    except RunDirError:
        pass


async def dry_run(config: RunConfig) -> DryRunReport:
    """Render every first-round prompt into ``prompts/`` and estimate the whole run.

    Needs no API key: the models' options are checked, none is opened.
    """
    resolved = resolve_config(config)
    rundir = RunWriter(resolved.out)
    rundir.refuse_a_file()
    async with open_session(resolved, rundir, models=False) as session:
        estimate = await estimate_run(session)
        return DryRunReport(
            n_tasks=len(session.tasks),
            estimate=estimate,
            prompts_dir=rundir.prompts_dir,
            estimate_path=rundir.write_estimate(estimate_record(estimate)),
        )
