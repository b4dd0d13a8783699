"""``summary.json``: a run's typed, versioned summary, and the one function that builds it.

:func:`build_summary` is the only builder: the runner's pipeline writes what it returns,
``arcmemo merge`` builds the merged run's with it, and the report and ``arcmemo table``
build one with it (:func:`summarize_directory`) for a run that has not written one yet.

The file is flat, as arcmemo wrote it before it had a version (so that a script reading
``summary["score"]`` keeps working): the run's counts, settings and usage, and the
benchmark's metrics side by side. :class:`RunSummary` holds the metrics apart, typed by the
benchmark's own model (:attr:`arcmemo.benchmarks.base.Benchmark.metrics_model`);
:func:`parse_summary` splits a file's keys between the two.

Versions (``format_version``): 1 is a file without one (arcmemo before it was recorded);
2 adds ``format_version`` and ``roles`` (usage per model role); 3 adds ``prompts_cut`` (model
calls whose prompt was cut to fit the model's window). :func:`load_summary` reads them all.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from pydantic import (
    BaseModel,
    Field,
    SerializationInfo,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from arcmemo.benchmarks.base import BENCHMARKS, Benchmark, RunMetrics
from arcmemo.core.records import TaskResult
from arcmemo.core.registry import RegistryError
from arcmemo.core.roles import role_of
from arcmemo.models.accounting import StageUsage, UsageSummary
from arcmemo.run.config import RunConfig
from arcmemo.run.continual import run_write_signal
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import RunDirError, UnwrittenStep, WrittenStep
from arcmemo.run.runner import sandbox_isolation
from arcmemo.signals.base import WRITE_SIGNALS

SUMMARY_FORMAT = 3
INFERENCE_MODE = "inference mode: no labels"
# The errors' kind of confirmed solutions that an online run failed to write to memory.
ABSTRACT_ERROR = "abstract"
# Keys left out of the file when they are None (absent in the files before the model).
_OPTIONAL_KEYS = frozenset(
    {"n_solved", "mode", "wall_seconds", "write_precision", "partial_merge", "calls_cut_off"}
)


class SummaryError(RunDirError):
    """A ``summary.json`` that cannot be read; the message names the file."""


class TokenTotals(BaseModel):
    prompt: int = 0
    completion: int = 0
    reasoning: int = 0
    cached: int = 0


class StatRange(BaseModel):
    """A provider statistic over the run's fresh completions."""

    mean: float
    min: float
    max: float
    count: int


class ErrorKind(BaseModel):
    """Tasks that ended on one kind of model-call failure."""

    count: int
    first: str = Field(description="The first message.")
    task: str = Field(description="The task it ended.")


class SignalPrecision(BaseModel):
    confirmed: int = Field(description="Final results the signal would confirm.")
    right: int = Field(description="Of those, right on every hidden test output.")
    precision: float | None


class WritePrecision(BaseModel):
    """How often the solutions an online run wrote were right (labels read for the report
    only; they never decide a write)."""

    signal: str = Field(description="The run's write signal.")
    confirmed: int | None = Field(
        default=None,
        description="Solutions the write signal chose (None in summaries before it was "
        "counted apart from written).",
    )
    confirmed_right: int | None = Field(
        default=None, description="Of those, right on every hidden test output."
    )
    written: int = Field(description="Of the confirmed solutions, those in the memory.")
    right: int = Field(description="Of the written solutions, right.")
    precision: float | None = Field(description="right / written.")

    @model_serializer(mode="wrap")
    def _without_unknown_counts(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A summary from before confirmed was counted is written back as it was.
        data = handler(self)
        if self.confirmed is None:
            data.pop("confirmed", None)
            data.pop("confirmed_right", None)
        return data

    by_signal: dict[str, SignalPrecision] = Field(
        default_factory=dict,
        description="Per write signal that does not read labels, what it would confirm.",
    )


class RunSummary(BaseModel):
    """``summary.json``. Written flat (``metrics`` beside the other keys, see the module
    docstring); ``complete`` is False when a task ended on a model error, when a confirmed
    solution could not be written to memory (``errors["abstract"]``), when fewer tasks
    than planned have a result, when the run was aborted, or when a merge was partial."""

    format_version: int = SUMMARY_FORMAT
    benchmark: str
    split: str | None = None
    model: str
    select: str = "none"
    memory: str | None = None
    schedule: str = "tasks"
    reselect: bool = False
    n_tasks: int
    n_solved: int | None = Field(default=None, description="None in inference mode.")
    n_errors: int = 0
    complete: bool = True
    mode: str | None = Field(default=None, description="Set in inference mode (no labels).")
    metrics: SerializeAsAny[RunMetrics] = Field(
        default_factory=RunMetrics, description="The benchmark's summarize(), its model."
    )
    tokens: TokenTotals = Field(default_factory=TokenTotals)
    cost_usd: float | None = 0.0
    calls: int = 0
    cache_hits: int = 0
    calls_cut_off: int | None = Field(
        default=None,
        description="Provider requests a kill or an interrupt cut off in flight in earlier "
        "sessions: perhaps paid, made again on resume, in neither calls nor cost (None: none).",
    )
    stages: dict[str, StageUsage] = Field(default_factory=dict)
    roles: dict[str, StageUsage] = Field(
        default_factory=dict,
        description="Usage per model role (solver, aux, and select or abstract when the run "
        "names a model for it).",
    )
    provider_stats: dict[str, StatRange] = Field(default_factory=dict)
    wall_seconds: float | None = Field(default=None, description="None: still running.")
    leaks_test_labels: bool = False
    sandbox: str | None = None
    isolation: str | None = None
    errors: dict[str, ErrorKind] = Field(default_factory=dict)
    prompt_too_long: dict[str, str] = Field(
        default_factory=dict,
        description="Tasks with a prompt longer than the model's context window (an outcome "
        "of the task, not an error: the run stays complete), each as 'stage: why'.",
    )
    truncated: int = Field(
        default=0, description="Answers cut at max_tokens (finish_reason 'length')."
    )
    prompts_cut: int = Field(
        default=0,
        description="Model calls whose prompt was cut to fit the model's context window "
        "(what each lost: its step's prompt_fit in results.jsonl).",
    )
    aborted: str | None = None
    warnings: list[str] = Field(default_factory=list)
    write_precision: WritePrecision | None = None
    partial_merge: list[str] | None = Field(
        default=None, description="Why a merge of shards is incomplete (--allow-partial)."
    )

    @model_validator(mode="before")
    @classmethod
    def _gather_metrics(cls, data: Any) -> Any:
        """A flat file's keys that are not the summary's own are its metrics."""
        if isinstance(data, dict) and "metrics" not in data:
            own = set(cls.model_fields)
            metrics = {k: v for k, v in data.items() if k not in own}
            data = {k: v for k, v in data.items() if k in own} | {"metrics": metrics}
        return data

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        metrics = self.metrics.model_dump(mode=info.mode, exclude_unset=True)
        flat: dict[str, Any] = {}
        for key, value in data.items():
            if key == "metrics":
                flat.update(metrics)  # a metric named like a count wins, as it always did
            elif not (value is None and key in _OPTIONAL_KEYS):
                flat.setdefault(key, value)
        return flat

    def file_dict(self) -> dict[str, Any]:
        """The JSON object of ``summary.json``."""
        return dict(self.model_dump(mode="json"))


def metrics_model(benchmark: str) -> type[RunMetrics]:
    """The metrics model of the benchmark ``benchmark`` (the generic one when it is not
    installed)."""
    try:
        return BENCHMARKS.get(benchmark).cls.metrics_model
    except (RegistryError, ImportError):  # not installed, or a bare factory
        return RunMetrics


def _migrated(raw: dict[str, Any], where: str) -> dict[str, Any]:
    version = raw.get("format_version", 1)
    if not isinstance(version, int) or version < 1:
        raise SummaryError(f"{where}: format_version {version!r} is not a version")
    if version > SUMMARY_FORMAT:
        raise SummaryError(
            f"{where}: format_version {version} was written by a newer arcmemo (this one "
            f"reads up to {SUMMARY_FORMAT}); upgrade arcmemo"
        )
    # 1 -> 2 -> 3 only added keys (format_version, roles; prompts_cut), which read as their
    # defaults.
    return {**raw, "format_version": SUMMARY_FORMAT}


def parse_summary(
    raw: dict[str, Any], model: type[RunMetrics], where: str = "summary"
) -> RunSummary:
    """A ``summary.json`` object of any version, its metrics validated by ``model``."""
    raw = _migrated(raw, where)
    own = set(RunSummary.model_fields)
    try:
        metrics = model.model_validate(
            {k: v for k, v in raw.items() if k not in own or k in model.model_fields}
        )
        return RunSummary.model_validate(
            {k: v for k, v in raw.items() if k in own} | {"metrics": metrics}
        )
    except ValidationError as error:
        first = error.errors()[0]
        place = ".".join(str(part) for part in first["loc"])
        raise SummaryError(f"{where}: {place + ': ' if place else ''}{first['msg']}") from None


def load_summary(rundir: RunDirectory, benchmark: str) -> RunSummary | None:
    """The run's ``summary.json`` (any version), or None when it has none yet."""
    raw = rundir.read_summary()
    if raw is None:
        return None
    return parse_summary(raw, metrics_model(benchmark), str(rundir.summary_path))


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
) -> RunSummary:
    """The summary of a run (finished or not) from its results and usage.

    ``benchmark`` None: one that is not installed (:func:`run_metrics`); ``written``: an
    online run's written solutions (its last commit's), for the write precision;
    ``unwritten``: its confirmed solutions whose write failed (errors of the abstract stage:
    the run is not complete until a rerun writes them); ``cut_off_calls``: requests earlier
    sessions left in flight (``cut_off_calls.jsonl``);
    ``wall_seconds`` None: a run still going; ``partial_merge``: why a merge of shards is
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
