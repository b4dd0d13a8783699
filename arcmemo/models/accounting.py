"""What model calls spent: the ``calls.jsonl`` record of one call and its sums.

:class:`CallRecord` is the schema of one line of ``calls.jsonl``; :class:`StageUsage` and
:class:`UsageSummary` add records up per stage and in total, the same way for a live
client and for a log read back (:func:`usage_from_records`).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from arcmemo.tokens import Usage


class StatSummary(BaseModel):
    """Aggregate of one numeric provider statistic over completions."""

    count: int = 0
    total: float = 0.0
    min: float | None = None
    max: float | None = None

    @property
    def mean(self) -> float | None:
        """Average value, or ``None`` before any sample."""
        return self.total / self.count if self.count else None

    def add(self, value: float) -> None:
        """Fold in one observation."""
        self.count += 1
        self.total += value
        self.min = value if self.min is None else min(self.min, value)
        self.max = value if self.max is None else max(self.max, value)

    def merge(self, other: StatSummary) -> None:
        """Fold in another aggregate."""
        self.count += other.count
        self.total += other.total
        for value in (other.min, other.max):
            if value is not None:
                self.min = value if self.min is None else min(self.min, value)
                self.max = value if self.max is None else max(self.max, value)


class CallRecord(BaseModel):
    """One line of ``calls.jsonl``: one ``generate()`` call, what it spent and reported."""

    ts: str
    stage: str
    task_id: str | None
    model: str
    n: int
    cache_hits: int
    cache_hit: bool = Field(description="True when every sample came from the cache.")
    tokens: Usage
    cost_usd: float | None
    latency_s: float
    attempts: int = Field(description="Provider requests made (0 when fully cached).")
    error: str | None = None
    provider_stats: list[dict[str, float]] = Field(
        default_factory=list,
        description="Numeric provider statistics of each fresh completion (e.g. JetSpec's "
        "tokens/s and acceptance length); labels such as an engine index are left out.",
    )
    batch: bool = Field(
        default=False,
        description="Fresh completions came from a provider batch (priced at the batch "
        "discount, see arcmemo.models.prices.BATCH_DISCOUNT).",
    )


class StageUsage(BaseModel):
    """What one stage (or a whole run) spent."""

    calls: int = Field(default=0, description="generate() calls.")
    samples: int = Field(default=0, description="Completions obtained (cached ones included).")
    cache_hits: int = Field(default=0, description="Completions served from the response cache.")
    requests: int = Field(default=0, description="Provider requests made, retries included.")
    errors: int = Field(default=0, description="generate() calls that raised ModelCallError.")
    batch_calls: int = Field(
        default=0, description="generate() calls answered (in part) by a provider batch."
    )
    tokens: Usage = Field(default_factory=Usage, description="Tokens of fresh completions.")
    cost_usd: float | None = Field(
        default=0.0, description="USD of fresh completions; None = unknown."
    )
    latency_s: float = Field(default=0.0, description="Summed wall time of generate() calls.")
    provider_stats: dict[str, StatSummary] = Field(
        default_factory=dict,
        description="Each numeric provider statistic over the fresh completions.",
    )

    @classmethod
    def of_call(cls, record: CallRecord) -> StageUsage:
        """The usage of one logged call (a failed call obtained only its cached samples)."""
        usage = cls(
            calls=1,
            samples=record.n if record.error is None else record.cache_hits,
            cache_hits=record.cache_hits,
            requests=record.attempts,
            errors=int(record.error is not None),
            batch_calls=int(record.batch),
            tokens=record.tokens,
            cost_usd=record.cost_usd,
            latency_s=record.latency_s,
        )
        for stats in record.provider_stats:
            for key, value in stats.items():
                usage.provider_stats.setdefault(key, StatSummary()).add(value)
        return usage

    def merge(self, other: StageUsage) -> None:
        """Add ``other``'s counts into this one."""
        self.calls += other.calls
        self.samples += other.samples
        self.cache_hits += other.cache_hits
        self.requests += other.requests
        self.errors += other.errors
        self.batch_calls += other.batch_calls
        self.tokens = self.tokens + other.tokens
        self.cost_usd = add_cost(self.cost_usd, other.cost_usd)
        self.latency_s += other.latency_s
        for key, stat in other.provider_stats.items():
            self.provider_stats.setdefault(key, StatSummary()).merge(stat)


class UsageSummary(BaseModel):
    """Totals and per-stage usage of one or more model clients."""

    models: list[str] = Field(default_factory=list, description="Model specs included.")
    total: StageUsage = Field(default_factory=StageUsage)
    stages: dict[str, StageUsage] = Field(default_factory=dict)

    def add(self, record: CallRecord) -> None:
        """Count one call into its stage and the total."""
        usage = StageUsage.of_call(record)
        self.stages.setdefault(record.stage, StageUsage()).merge(usage)
        self.total.merge(usage)
        if record.model not in self.models:
            self.models = sorted([*self.models, record.model])


def usage_from_records(records: Iterable[CallRecord]) -> UsageSummary:
    """Usage per stage and in total of logged calls (e.g. every line of ``calls.jsonl``)."""
    summary = UsageSummary()
    for record in records:
        summary.add(record)
    return summary


def add_cost(left: float | None, right: float | None) -> float | None:
    """The sum of two costs; unknown (None) when either is."""
    return None if left is None or right is None else left + right
