"""``summary.json``: the one function that builds a run's typed, versioned summary (its
record and its reading are :mod:`arcmemo.run.summary_file`).

:func:`build_summary` is the only builder: the runner's pipeline writes what it returns,
``arcmemo merge`` builds the merged run's with it, and the report and ``arcmemo table``
build one with it (:func:`summarize_directory`) for a run that has not written one yet.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from arcmemo.benchmarks.base import Benchmark, RunMetrics
from arcmemo.core.records import TaskResult
from arcmemo.core.roles import role_of
from arcmemo.models.accounting import StageUsage, UsageSummary
from arcmemo.run.config import RunConfig
from arcmemo.run.continual import run_write_signal
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import UnwrittenStep, WrittenStep
from arcmemo.run.directory.sessions import WallTime
from arcmemo.run.runner import sandbox_isolation
from arcmemo.run.summary_file import (
    ErrorKind,
    RunSummary,
    SignalPrecision,
    StatRange,
    TokenTotals,
    WritePrecision,
)
from arcmemo.signals.base import WRITE_SIGNALS

INFERENCE_MODE = "inference mode: no labels"
# The errors' kind of confirmed solutions that an online run failed to write to memory.
ABSTRACT_ERROR = "abstract"


def error_summary(results: list[TaskResult]) -> dict[str, ErrorKind]:
    """Tasks that ended on a model-call failure, by kind: the count and the first message."""
    kinds: dict[str, ErrorKind] = {}
    for result in results:
        if result.error is None:
            continue
        entry = kinds.setdefault(
            result.error_kind or "error",
            ErrorKind(count=0, first=result.error, task=result.task_id),
        )
        entry.count += 1
    return kinds


def selection_warnings(results: list[TaskResult]) -> list[str]:
    """One line for the selections that chose nothing from a non-empty memory (each one's
    reason is in its selection record), naming the first. With prompt variants
    (``--variants``) each variant's selection counts apart and the first is named with its
    variant."""
    warned = [
        (result, variant, selection)
        for result in results
        for variant, selection in result.variant_selection_pairs
        if selection.warning
    ]
    if not warned:
        return []
    first, variant, selection = warned[0]
    if not any(r.variant_selections for r in results):
        return [
            f"{len(warned)} of {len(results)} tasks got no memory entry from the selector "
            f"(first, {first.task_id}: {selection.warning})"
        ]
    # Every variant slot counts, those a failed task never filled too, as tasks do above.
    slots = sum(1 + len(r.variant_selections) for r in results)
    tasks = len({result.task_id for result, _, _ in warned})
    return [
        f"{len(warned)} of {slots} selections ({tasks} of {len(results)} tasks; each prompt "
        f"variant selects on its own) got no memory entry from the selector (first, "
        f"{first.task_id} variant {variant}: {selection.warning})"
    ]


def role_usage(usage: UsageSummary, given: Collection[str]) -> dict[str, StageUsage]:
    """Usage per model role: each stage's under its role when the run names a model for it
    (``given``; the solver and aux always), else under the role it falls back to."""
    roles: dict[str, StageUsage] = {}
    for name, stage in usage.stages.items():
        roles.setdefault(role_of(name, given), StageUsage()).merge(stage)
    return roles


def _right(step: Any) -> bool:
    return step is not None and bool(step.correct) and all(step.correct or [])


def write_precision(
    signal: str,
    written: dict[str, WrittenStep],
    results: list[TaskResult],
    unwritten: dict[str, UnwrittenStep] | None = None,
) -> WritePrecision:
    """How many confirmed and written solutions were right on the hidden test outputs
    (``unwritten``: confirmed ones whose write failed), and, per write signal that does not
    read labels, how many of the solutions it would confirm in the final results are right."""

    def share(right: int, total: int) -> float | None:
        return right / total if total else None

    n_right = sum(bool(w.right) for w in written.values())
    by_signal: dict[str, SignalPrecision] = {}
    for name in WRITE_SIGNALS.names():
        other = WRITE_SIGNALS.create(name)
        if other.leaks_test_labels:
            continue
        steps = [other.confirmed_step(r) for r in results]
        confirmed = [s for s in steps if s is not None]
        right = sum(_right(s) for s in confirmed)
        by_signal[name] = SignalPrecision(
            confirmed=len(confirmed), right=right, precision=share(right, len(confirmed))
        )
    unwritten = unwritten or {}
    return WritePrecision(
        signal=signal,
        confirmed=len(written) + len(unwritten),
        confirmed_right=n_right + sum(bool(w.right) for w in unwritten.values()),
        written=len(written),
        right=n_right,
        precision=share(n_right, len(written)),
        by_signal=by_signal,
    )


def run_metrics(
    benchmark: Benchmark[Any] | None, results: list[TaskResult], attempts: int
) -> RunMetrics:
    """The benchmark's metrics of ``results``; for a benchmark that is not installed, the
    mean of the tasks' scores (none without labels)."""
    if benchmark is not None:
        return benchmark.metrics_model.model_validate(benchmark.summarize(results, attempts))
    scores = [r.score for r in results if r.score is not None]
    if results and not scores:
        return RunMetrics.model_validate({"labels": False})
    return RunMetrics(score=sum(scores) / len(scores) if scores else 0.0)


def build_summary(
    config: RunConfig,
    benchmark: Benchmark[Any] | None,
    results: list[TaskResult],
    usage: UsageSummary,
    wall_seconds: float | None,
    *,
    n_planned: int | None = None,
    aborted: str | None = None,
    warnings: list[str] | None = None,
    written: dict[str, WrittenStep] | None = None,
    unwritten: dict[str, UnwrittenStep] | None = None,
    partial_merge: list[str] | None = None,
    cut_off_calls: int = 0,
    sessions: WallTime | None = None,
) -> RunSummary:
    """The summary of a run (finished or not) from its results and usage.

    ``benchmark`` None: one that is not installed (:func:`run_metrics`); ``written``: an
    online run's written solutions (its last commit's), for the write precision;
    ``unwritten``: its confirmed solutions whose write failed (errors of the abstract stage:
    the run is not complete until a rerun writes them); ``cut_off_calls``: requests earlier
    sessions left in flight (``cut_off_calls.jsonl``);
    ``wall_seconds`` None: a run still going; ``sessions``: how many sessions ran the run and
    its span (:mod:`arcmemo.run.directory.sessions`); ``partial_merge``: why a merge of shards is
    incomplete.
    """
    n_planned = len(results) if n_planned is None else n_planned
    metrics = run_metrics(benchmark, results, config.attempts)
    labels = getattr(metrics, "labels", True) is not False
    n_errors = sum(r.error is not None for r in results)
    total = usage.total
    precision = None
    signal = config.write_signal or (run_write_signal(config, benchmark) if benchmark else None)
    if written is not None and labels and signal is not None:
        precision = write_precision(signal.name, written, results, unwritten)
    errors = error_summary(results)
    if unwritten:
        first_task, first = next(iter(unwritten.items()))
        errors[ABSTRACT_ERROR] = ErrorKind(count=len(unwritten), first=first.error, task=first_task)
    return RunSummary(
        benchmark=config.benchmark.name,
        split=config.split or config.data,
        model=config.model,
        select=config.selector.name if config.selector and config.memory else "none",
        memory=str(config.memory) if config.memory else None,
        schedule=config.run_schedule,
        reselect=config.feedback_rounds_reselect,
        n_tasks=len(results),
        # Inference mode: no task could be scored, so none counts as solved or unsolved.
        n_solved=sum(r.solved for r in results) if labels else None,
        n_errors=n_errors,
        complete=n_errors == 0
        and not unwritten
        and len(results) >= n_planned
        and aborted is None
        and not partial_merge,
        mode=None if labels else INFERENCE_MODE,
        metrics=metrics,
        tokens=TokenTotals(
            prompt=total.tokens.prompt_tokens,
            completion=total.tokens.completion_tokens,
            reasoning=total.tokens.reasoning_tokens,
            cached=total.tokens.cached_tokens,
        ),
        cost_usd=total.cost_usd,
        calls=total.calls,
        requests=total.requests,
        samples=total.samples,
        cache_hits=total.cache_hits,
        calls_cut_off=cut_off_calls or None,
        stages=usage.stages,
        roles=role_usage(usage, config.given_roles),
        # Provider statistics of the run's fresh completions (e.g. JetSpec's tokens per
        # verify round and tokens/s), as mean/min/max over completions.
        provider_stats={
            key: StatRange(mean=stat.mean, min=stat.min, max=stat.max, count=stat.count)
            for key, stat in sorted(total.provider_stats.items())
        },
        wall_seconds=None if wall_seconds is None else round(wall_seconds, 3),
        sessions=sessions.sessions if sessions else None,
        span_seconds=round(sessions.span_seconds, 3) if sessions else None,
        leaks_test_labels=config.leaks_test_labels,
        sandbox=config.sandbox.name,
        isolation=sandbox_isolation(config.sandbox.name),
        errors=errors,
        prompt_too_long={
            r.task_id: f"{r.prompt_too_long.stage}: {r.prompt_too_long.message}"
            for r in results
            if r.prompt_too_long is not None
        },
        truncated=sum(s.truncated for r in results for a in r.attempts for s in a.steps),
        prompts_cut=sum(
            s.prompt_fit is not None and s.error is None
            for r in results
            for a in r.attempts
            for s in a.steps
        ),
        aborted=aborted,
        warnings=[
            *(warnings or []),
            *selection_warnings(results),
            *(
                [
                    f"{cut_off_calls} model request(s) were in flight when an earlier session "
                    "was killed or interrupted: the provider may have billed them, and they "
                    "were made again (calls and cost count only the requests made again)"
                ]
                if cut_off_calls
                else []
            ),
        ],
        write_precision=precision,
        partial_merge=partial_merge,
    )


def written_steps(rundir: RunDirectory, config: RunConfig) -> dict[str, WrittenStep] | None:
    """An online run's written solutions as its last commit records them (None for a run
    that writes no memory)."""
    if config.update != "online" or config.memory is None:
        return None
    commit = rundir.read_commit()
    return dict(commit.written) if commit else {}


def unwritten_steps(rundir: RunDirectory) -> dict[str, UnwrittenStep]:
    """The confirmed solutions whose memory write failed, as the last commit records them."""
    commit = rundir.read_commit()
    return dict(commit.unwritten) if commit else {}


def summarize_directory(
    rundir: RunDirectory, config: RunConfig, benchmark: Benchmark[Any] | None
) -> RunSummary:
    """The summary of a run that has written none (still running, or killed): its results
    so far against the tasks it planned, the usage its call log holds; no wall time."""
    results = rundir.ordered_results()
    order = rundir.read_task_order()
    return build_summary(
        config,
        benchmark,
        results,
        rundir.usage(),
        None,
        n_planned=len(order) if order is not None else None,
        written=written_steps(rundir, config),
        unwritten=unwritten_steps(rundir),
        cut_off_calls=len(rundir.cut_off_calls()),
    )
