"""What model calls spent: the ``calls.jsonl`` record of one request and its sums.

:class:`CallRecord` is the schema of one line of ``calls.jsonl``: one HTTP request (or one
``generate()`` call answered wholly from the cache). The lines of one ``generate()`` call
share its ``call_id``; :class:`StageUsage` and :class:`UsageSummary` add them up per call,
per stage and in total, the same way for a live client and for a log read back
(:func:`usage_from_records`); :class:`Accounts` writes a model's lines and keeps their sums.
Logs written before ``call_id`` existed have one line per
call; they read the same way (a line without ``call_id`` is a call of its own).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field

from arcmemo.core.files import append_lines
from arcmemo.core.progress import CallAccounted
from arcmemo.core.tokens import Usage
from arcmemo.models.base import Completion, Provider, RequestReport
from arcmemo.models.in_flight import Reporting
from arcmemo.models.prices import PriceTable
from arcmemo.models.redact import redact
from arcmemo.models.retry import ModelCallError


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
    """One line of ``calls.jsonl``: one request of a ``generate()`` call (or the call
    itself when the cache answered it all), what it spent and reported.

    ``n``, ``cache_hits``, ``cache_hit`` and ``call_failed`` describe the call and repeat on
    each of its lines; the rest describes the line's request."""

    call_id: str | None = Field(
        default=None,
        description="The generate() call this request belongs to (shared by its lines); "
        "None in logs with one line per call.",
    )

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
    attempts: int = Field(
        description="Provider requests this line stands for: 1 for a request, 0 for a call "
        "answered from the cache (logs without call_id: the call's requests)."
    )
    error: str | None = Field(
        default=None,
        description="Why the request failed (logs without call_id: why the call failed).",
    )
    call_failed: bool | None = Field(
        default=None,
        description="The generate() call raised ModelCallError (None in logs without "
        "call_id: there, error says it).",
    )
    samples: list[int] = Field(
        default_factory=list,
        description="The sample indices whose completions this line delivered (for a call "
        "answered from the cache: the cached ones); empty for a failed request.",
    )
    seed: int | None = Field(default=None, description="The seed the request carried.")
    status: int | None = Field(
        default=None, description="The request's HTTP status where the provider knows it."
    )
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
    latency_s: float = Field(
        default=0.0,
        description="Summed wall time of requests (and of calls answered from the cache).",
    )
    provider_stats: dict[str, StatSummary] = Field(
        default_factory=dict,
        description="Each numeric provider statistic over the fresh completions.",
    )

    @classmethod
    def of_call(cls, records: Sequence[CallRecord]) -> StageUsage:
        """The usage of one logged call from its lines (a failed call obtained only its
        cached samples)."""
        first = records[0]
        failed = any(
            record.error is not None if record.call_failed is None else record.call_failed
            for record in records
        )
        usage = cls(
            calls=1,
            samples=first.cache_hits if failed else first.n,
            cache_hits=first.cache_hits,
            errors=int(failed),
            batch_calls=int(any(record.batch for record in records)),
        )
        for record in records:
            usage.requests += record.attempts
            usage.tokens = usage.tokens + record.tokens
            usage.cost_usd = add_cost(usage.cost_usd, record.cost_usd)
            usage.latency_s += record.latency_s
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

    def add(self, records: Sequence[CallRecord]) -> None:
        """Count one call (its lines) into its stage and the total."""
        usage = StageUsage.of_call(records)
        self.stages.setdefault(records[0].stage, StageUsage()).merge(usage)
        self.total.merge(usage)
        for record in records:
            if record.model not in self.models:
                self.models = sorted([*self.models, record.model])


def usage_from_records(records: Iterable[CallRecord]) -> UsageSummary:
    """Usage per stage and in total of logged lines (e.g. every line of ``calls.jsonl``),
    the lines of one call (one ``call_id``) counted as one call."""
    calls: dict[str | int, list[CallRecord]] = {}
    for position, record in enumerate(records):
        calls.setdefault(record.call_id or position, []).append(record)
    summary = UsageSummary()
    for lines in calls.values():
        summary.add(lines)
    return summary


def add_cost(left: float | None, right: float | None) -> float | None:
    """The sum of two costs; unknown (None) when either is."""
    return None if left is None or right is None else left + right


class CallLog:
    """``calls.jsonl``: the call records of a client, appended one line per request."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, records: list[CallRecord]) -> None:
        with self._lock:
            # Not fsynced: that would put a disk flush on every model call.
            append_lines(
                self.path, [record.model_dump_json() + "\n" for record in records], durable=False
            )


class Accounts:
    """One model's ledger: each ``generate()`` call's lines in ``calls.jsonl`` (``log``,
    shared by a run's clients), their sums (:meth:`usage`), and the call reported to the
    progress display. Prices come from the gateway where it reports one, else ``prices``."""

    def __init__(
        self,
        provider: Provider,
        prices: PriceTable,
        log: CallLog | None = None,
    ) -> None:
        self.provider = provider
        self.prices = prices
        self.log = log
        self._usage = UsageSummary(models=[provider.spec])

    def cost(self, tokens: Usage, fresh: list[Completion]) -> float | None:
        """The gateway's own figure where it reports one (on the first completion of each
        response), else the price table's."""
        if not fresh:
            return 0.0
        reported = [c.cost_usd for c in fresh if c.cost_usd is not None]
        return sum(reported) if reported else self.prices.cost_usd(self.provider.spec, tokens)

    def account(
        self,
        *,
        stage: str,
        task_id: str | None,
        n: int,
        cached: list[int],
        results: dict[int, Completion],
        sent: list[tuple[RequestReport, list[int], bool]],
        latency_s: float,
        error: ModelCallError | None,
        reporting: Reporting,
    ) -> None:
        """Log one line per request the call sent (one line for a call without any: the
        cache answered it, or the provider failed before sending), sum them into the
        usage, and report the call to the progress display."""
        spec = self.provider.spec
        call = {
            "ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            "call_id": uuid.uuid4().hex[:16],
            "stage": stage,
            "task_id": task_id,
            "model": spec,
            "n": n,
            "cache_hits": len(cached),
            "cache_hit": len(cached) == n,
            "call_failed": error is not None,
        }
        records = []
        for report, samples, via_batch in sent:
            completions = [results[index] for index in samples if index in results]
            if report.error is not None:
                cost: float | None = 0.0
            elif via_batch:
                cost = self.prices.batch_cost_usd(spec, report.usage)
            elif report.cost_usd is not None:
                cost = report.cost_usd
            else:
                cost = self.cost(report.usage, completions)
            records.append(
                CallRecord(
                    **call,
                    tokens=report.usage,
                    cost_usd=cost,
                    latency_s=round(report.latency_s, 4),
                    attempts=1,
                    error=None if report.error is None else redact(report.error),
                    samples=samples,
                    seed=report.seed,
                    status=report.status,
                    provider_stats=[self.provider.statistics(c) for c in completions],
                    batch=via_batch,
                )
            )
        if not records:
            records.append(
                CallRecord(
                    **call,
                    tokens=Usage(),
                    cost_usd=0.0,
                    latency_s=round(latency_s, 4),
                    attempts=0,
                    error=None if error is None else redact(error.cause),
                    samples=cached,
                )
            )
        self._usage.add(records)
        if self.log is not None:
            self.log.append(records)
        usage = StageUsage.of_call(records)
        reporting.emit(
            CallAccounted(
                stage=stage,
                tokens=usage.tokens.prompt_tokens + usage.tokens.completion_tokens,
                cost_usd=usage.cost_usd,
                cache_hits=len(cached),
            )
        )

    def usage(self) -> UsageSummary:
        """Totals and per-stage usage so far (a copy)."""
        return self._usage.model_copy(deep=True)
