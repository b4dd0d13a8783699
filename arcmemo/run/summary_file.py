"""``summary.json``'s record: :class:`RunSummary` and its parts, its versions, and its
reading (the building is :mod:`arcmemo.run.summary`).

The file is flat, as arcmemo wrote it before it had a version (so that a script reading
``summary["score"]`` keeps working): the run's counts, settings and usage, and the
benchmark's metrics side by side. :class:`RunSummary` holds the metrics apart, typed by the
benchmark's own model (:attr:`arcmemo.benchmarks.base.Benchmark.metrics_model`);
:func:`parse_summary` splits a file's keys between the two.

Versions (``format_version``): 1 is a file without one (arcmemo before it was recorded);
2 adds ``format_version`` and ``roles`` (usage per model role); 3 adds ``prompts_cut`` (model
calls whose prompt was cut to fit the model's window); 4 adds ``sessions`` and
``span_seconds`` (``wall_seconds`` is then the time all the run's sessions ran, not the last
session's), and ``requests`` and ``samples`` (with ``cache_hits``, the run's model traffic
as the final table and the report count it), and names the code convention's scores
``code_score``, ``code_strict_score``, ``code_by_retry`` and ``code_strict_by_retry``
(``published_*`` before, read through :data:`arcmemo.core.spellings.SUMMARY_KEYS`).
:func:`load_summary` reads them all.
"""

from __future__ import annotations

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

from arcmemo.benchmarks.base import BENCHMARKS, RunMetrics
from arcmemo.core.registry import RegistryError
from arcmemo.core.spellings import SUMMARY_KEYS, renamed_fields
from arcmemo.models.accounting import StageUsage
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import RunDirError

SUMMARY_FORMAT = 4
# Keys left out of the file when they are None (absent in the files before the model).
_OPTIONAL_KEYS = frozenset(
    {
        "n_solved",
        "mode",
        "wall_seconds",
        "sessions",
        "span_seconds",
        "requests",
        "samples",
        "write_precision",
        "partial_merge",
        "calls_cut_off",
    }
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
    calls: int = Field(default=0, description="generate() calls.")
    requests: int | None = Field(
        default=None,
        description="Provider requests made, repeats included: the lines of calls.jsonl that "
        "went to the provider (None in summaries before format 4: see stages).",
    )
    samples: int | None = Field(
        default=None,
        description="Completions obtained, those replayed from the cache included (None in "
        "summaries before format 4).",
    )
    cache_hits: int = Field(default=0, description="Completions replayed from the cache.")
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
    wall_seconds: float | None = Field(
        default=None,
        description="The time the run's sessions ran, summed (None: still running; before "
        "format 4, the last session's).",
    )
    sessions: int | None = Field(
        default=None, description="Sessions (processes) that ran the run (None: not recorded)."
    )
    span_seconds: float | None = Field(
        default=None, description="From the first session's start to the last one's end."
    )
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
    # defaults; 4 added sessions, span_seconds, requests and samples (defaults too) and
    # renamed the code convention's keys (published_* before).
    if version < 4:
        raw = renamed_fields(raw, SUMMARY_KEYS)
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
