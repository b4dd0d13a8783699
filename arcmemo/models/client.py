"""The facade every LLM call in arcmemo goes through.

:class:`ModelClient` wraps one provider with the response cache, bounded retries with
backoff (the policy in :mod:`arcmemo.models.retry`), the run-wide
:class:`~arcmemo.models.limiter.Limiter`, per-stage token and cost accounting (the records
and sums in :mod:`arcmemo.models.accounting`), and an append-only ``calls.jsonl`` log.
Providers only speak their wire format.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from arcmemo.core.progress import (
    CallAccounted,
    ProgressEvent,
    ProgressSink,
    RequestEnded,
    RequestStarted,
)
from arcmemo.core.tokens import Usage, estimate_tokens
from arcmemo.models.accounting import CallLog, CallRecord, StageUsage, UsageSummary
from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    Provider,
    ProviderError,
    RequestReport,
    RetryDecision,
    SamplingConfig,
    collect_requests,
)
from arcmemo.models.batch import (
    LOG,
    Batcher,
    BatchSettings,
    BatchUnanswered,
    BatchUnsupportedError,
)
from arcmemo.models.cache import ResponseCache, cache_keys
from arcmemo.models.config import ModelConfig
from arcmemo.models.context import PROMPT_TOO_LONG, PromptTooLongError, WindowProbe
from arcmemo.models.in_flight import mark_in_flight
from arcmemo.models.limiter import Limiter
from arcmemo.models.prices import PriceTable
from arcmemo.models.redact import public_url, redact
from arcmemo.models.registry import create_provider
from arcmemo.models.retry import Breaker, ModelCallError, backoff_delay, next_delay

Sleep = Callable[[float], Awaitable[None]]


def prompt_tokens(messages: list[Message]) -> int:
    """The estimated prompt tokens of ``messages`` (:func:`arcmemo.core.tokens.estimate_tokens`)."""
    return sum(estimate_tokens(message.content) for message in messages)


def _consecutive_runs(indices: list[int]) -> list[list[int]]:
    """``[0, 1, 3]`` -> ``[[0, 1], [3]]``."""
    runs: list[list[int]] = []
    for index in indices:
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def _group_params(params: GenerateParams, group: list[int]) -> GenerateParams:
    """The request for the samples ``group``: seeded from its first sample (seed + index),
    so a request for samples that do not start at 0 (one sample per request, or the
    samples a partly cached call still lacks) does not repeat sample 0's completion."""
    update: dict[str, Any] = {"n": len(group)}
    if params.seed is not None and group and group[0] != 0:
        update["seed"] = params.seed + group[0]
    return params.model_copy(update=update)


def _report_of(
    completions: list[Completion], positions: range, *, seed: int | None
) -> RequestReport:
    """The one request that answered ``completions`` (a provider that reports none)."""
    usage = Usage()
    for completion in completions:
        usage = usage + completion.usage
    reported = [c.cost_usd for c in completions if c.cost_usd is not None]
    return RequestReport(
        positions=list(positions),
        seed=seed,
        usage=usage,
        cost_usd=sum(reported) if reported else None,
        latency_s=max((c.latency_s for c in completions), default=0.0),
    )


def _failed_report(
    params: GenerateParams, failure: BaseException, latency_s: float
) -> RequestReport:
    """The one request of a failed attempt whose provider reported none."""
    return RequestReport(
        seed=params.seed,
        latency_s=latency_s,
        status=getattr(failure, "status", None),
        error=redact(str(failure)) or type(failure).__name__,
    )


class ModelClient:
    """One model with cache, retries, limits and accounting around it."""

    def __init__(
        self,
        provider: Provider,
        *,
        config: ModelConfig | None = None,
        cache: ResponseCache | None = None,
        limiter: Limiter | None = None,
        prices: PriceTable | None = None,
        call_log_path: Path | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        defaults: SamplingConfig | None = None,
        progress: ProgressSink | None = None,
        in_flight_dir: Path | None = None,
    ) -> None:
        self.provider = provider
        self.config = config or ModelConfig()
        if provider.timeout_excludes_queue:
            # The provider times each request from its start; waiting in its queue is free.
            provider.request_timeout_s = self.config.timeout_s
        self.cache = cache
        self.limiter = limiter or Limiter(
            self.config.concurrency, rpm=self.config.rpm, tpm=self.config.tpm
        )
        self.prices = prices or PriceTable.load(self.config.prices_path)
        # calls.jsonl: one line per request (shared by the clients of a run and their views).
        self._call_log = CallLog(call_log_path) if call_log_path is not None else None
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()
        self._usage = UsageSummary(models=[provider.spec])
        # Circuit breaker: fatal-looking failures counted until the first answer arrives.
        self._answered = False
        self._breaker = Breaker()
        # Sampling used where a call leaves a parameter unset (a role's settings).
        self.defaults = defaults or SamplingConfig()
        self._owner: ModelClient | None = None
        # Added to every call's sample indices (a view for one prompt variant: with_samples).
        self.sample_offset = 0
        # Where requests and accounted calls are reported (the run's progress display; a
        # view reports where its client does).
        self.progress = progress
        # Where each provider request in flight leaves a marker file (a run's in_flight/):
        # one left behind names a request a kill or an interrupt cut off, perhaps paid.
        self.in_flight_dir = in_flight_dir
        # Batch mode (enable_batch): cache misses go out as provider batches.
        self._batcher: Batcher | None = None
        # The model's context window, found once (context_window()).
        self._window = WindowProbe(provider, provider.spec)

    @property
    def batcher(self) -> Batcher | None:
        """The batch queue of batch mode (a view shares its client's), else None."""
        return self._owner.batcher if self._owner is not None else self._batcher

    def enable_batch(self, log_path: Path, settings: BatchSettings | None = None) -> Batcher:
        """Send this client's cache misses as provider batches, recorded in ``log_path``.

        Raises :class:`BatchUnsupportedError` for a provider without a batch API; call
        :meth:`check_batch` to also ask the endpoint."""
        factory = getattr(self.provider, "batch_backend", None)
        if factory is None:
            raise BatchUnsupportedError(
                f"--batch: {self.spec} has no batch API (only openai and anthropic have one); "
                "run without --batch"
            )
        if self._owner is not None:
            return self._owner.enable_batch(log_path, settings)
        if self._batcher is None:
            self._batcher = Batcher(
                factory(), model=self.spec, log_path=log_path, cache=self.cache, settings=settings
            )
        return self._batcher

    async def context_window(self) -> int | None:
        """The model's context window in tokens: ``--model-arg context_window=N``, else what
        its server reports, else the packaged table (:mod:`arcmemo.models.context`); None
        when nothing says. The server is asked once per client."""
        return await self._window.find()

    async def check_batch(self) -> None:
        """Fail at once (BatchUnsupportedError) when the endpoint has no batch API."""
        if self.batcher is not None:
            await self.batcher.backend.check()

    def with_defaults(self, defaults: SamplingConfig) -> ModelClient:
        """A view of this client (same provider, cache, limits, accounting and log) whose
        calls default to ``defaults``: one model serving two roles with their own settings.
        Closing the view closes nothing; close the client."""
        view = copy.copy(self)
        view.defaults = defaults
        view._owner = self
        return view

    def with_samples(self, offset: int) -> ModelClient:
        """A view of this client whose calls ask for sample ``offset + i`` where they ask for
        sample ``i``: a second prompt variant's selector call, identical to the first's,
        gets its own answer (and cache entry) instead of the first's. Offset 0 is the
        client itself."""
        if offset == 0:
            return self
        view = copy.copy(self)
        view.sample_offset = self.sample_offset + offset
        view._owner = self
        return view

    def reporting_to(self, progress: ProgressSink, in_flight_dir: Path | None) -> ModelClient:
        """A view of this client that reports its requests and calls to ``progress`` and
        marks its requests in flight in ``in_flight_dir`` (a client given to a run)."""
        view = copy.copy(self)
        view.progress, view.in_flight_dir = progress, in_flight_dir
        view._owner = self
        return view

    @property
    def spec(self) -> str:
        """The ``provider:model`` name of the wrapped model."""
        return self.provider.spec

    async def generate(
        self,
        messages: list[Message],
        *,
        stage: str,
        task_id: str | None = None,
        n: int = 1,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: list[str] | None = None,
        reasoning_effort: str | None = None,
        thinking_budget: int | None = None,
        response_format: dict | None = None,
        seed: int | None = None,
        first_sample: int = 0,
    ) -> list[Completion]:
        """Return ``n`` completions, from the cache where possible.

        They are samples ``first_sample`` .. ``first_sample + n - 1`` of the request: each
        sample index has its own cache entry (and seed offset), so a caller that wants an
        answer independent of an earlier identical request asks for another index.

        Raises :class:`ModelCallError` on a non-retryable error or when retries run out.
        """
        defaults = self.defaults
        params = GenerateParams(
            n=n,
            temperature=defaults.temperature if temperature is None else temperature,
            max_tokens=defaults.max_tokens if max_tokens is None else max_tokens,
            stop=tuple(stop) if stop else None,
            reasoning_effort=reasoning_effort or defaults.reasoning_effort,
            thinking_budget=defaults.thinking_budget
            if thinking_budget is None
            else thinking_budget,
            response_format=response_format,
            seed=seed,
        )
        started = self._clock()
        identity = self.provider.cache_identity()
        if self.config.cache_namespace:
            identity = {**identity, "namespace": self.config.cache_namespace}
        first_sample += self.sample_offset
        indices = range(first_sample, first_sample + n)
        keys = cache_keys(identity, messages, params, indices)
        # Reads stay on the event loop: under WAL a reader never waits for a writer, and a
        # hand-off to a thread costs more than the read (the loop then waits for the GIL).
        results: list[Completion | None] = (
            self.cache.get_many(keys) if self.cache is not None else [None] * n
        )
        missing = [index for index, result in zip(indices, results, strict=True) if result is None]
        if missing:
            await self._check_fits(messages, stage=stage, task_id=task_id)
        # One request for all missing samples, or one per sample when the API samples a
        # single answer per request (then each sample is retried and cached on its own).
        # A request covers consecutive samples only, so its seed (that of its first sample)
        # never repeats a cached neighbour's.
        if getattr(self.provider, "supports_n", True):
            groups = _consecutive_runs(missing)
        else:
            groups = [[index] for index in missing]
        outcomes = await asyncio.gather(
            *(
                self._request(
                    messages,
                    _group_params(params, group),
                    [keys[index - first_sample] for index in group],
                    stage=stage,
                    task_id=task_id,
                )
                for group in groups
            ),
            return_exceptions=True,
        )
        fresh: list[Completion] = []
        batched: list[Completion] = []
        to_store: list[tuple[str, Completion]] = []
        # Each request sent, with the sample indices it answered and whether a batch did.
        sent: list[tuple[RequestReport, list[int], bool]] = []
        error: ModelCallError | None = None
        unexpected: BaseException | None = None
        for group, outcome in zip(groups, outcomes, strict=True):
            if isinstance(outcome, ModelCallError):
                error = error or outcome
                sent += [(report, [], False) for report in outcome.requests]
                continue
            if isinstance(outcome, BaseException):
                unexpected = unexpected or outcome
                continue
            completions, reports, via_batch = outcome
            for report in reports:
                samples = [group[p] for p in report.positions if p < len(group)]
                sent.append((report, samples, via_batch))
            for index, completion in zip(group, completions, strict=True):
                position = index - first_sample
                results[position] = completion
                if via_batch and completion.cost_usd is None:
                    # Its price is the batch price: what the caller records as its cost.
                    completion.cost_usd = self.prices.batch_cost_usd(self.spec, completion.usage)
                (batched if via_batch else fresh).append(completion)
                to_store.append((keys[position], completion))
        # The write starts now on the cache's thread and the paid call is logged before
        # anything is awaited, so a cancellation (another task of the run failed) can neither
        # leave an answer cached but unlogged nor logged but unstored.
        write = (
            self.cache.submit_many(self.spec, to_store)
            if self.cache is not None and to_store
            else None
        )
        self._account(
            stage=stage,
            task_id=task_id,
            n=n,
            cached=[index for index in indices if index not in missing],
            results={
                index: result
                for index, result in zip(indices, results, strict=True)
                if result is not None
            },
            sent=sent,
            latency_s=self._clock() - started,
            error=error,
        )
        if write is not None:
            # Awaited: once generate returns, its completions are committed (crash-safe).
            await asyncio.shield(asyncio.wrap_future(write))
        if unexpected is not None:
            raise unexpected
        fresh += batched
        if fresh:
            self._answered = True
        if error is not None:
            self._breaker.record(
                error, answered=self._answered, model=f"{self.spec}{self._endpoint()}"
            )
            raise error
        return [result for result in results if result is not None]

    async def _check_fits(
        self, messages: list[Message], *, stage: str, task_id: str | None
    ) -> None:
        """Raise :class:`PromptTooLongError` for a prompt that cannot fit the model's window
        (by estimate; a server's own refusal is mapped the same way in the retry loop)."""
        window = await self.context_window()
        if window is None:
            return
        tokens = prompt_tokens(messages)
        if tokens >= window:
            raise PromptTooLongError(
                f"the prompt is about {tokens:,} tokens; {self.spec}'s context window is "
                f"{window:,}",
                stage=stage,
                task_id=task_id,
                prompt_tokens=tokens,
                context_window=window,
            )

    def _endpoint(self) -> str:
        base_url = public_url(getattr(self.provider, "base_url", None))
        return f" at {base_url}" if base_url else ""

    async def _request(
        self,
        messages: list[Message],
        params: GenerateParams,
        keys: list[str],
        *,
        stage: str,
        task_id: str | None,
    ) -> tuple[list[Completion], list[RequestReport], bool]:
        """One request's completions, the provider requests it took, and whether a batch
        answered it. In batch mode, what the batch does not answer takes the synchronous
        path (with the usual retries, and a warning naming its full price) only when it
        expired or met a server error; any other fails the call at once (one attempt
        spent)."""
        if self.batcher is None:
            completions, reports = await self._request_with_retries(
                messages, params, stage=stage, task_id=task_id
            )
            return completions, reports, False
        started = self._clock()
        try:
            completions = await self.batcher.request(messages, params, keys)
        except BatchUnanswered as unanswered:
            failure = unanswered.error
            unanswered_report = RequestReport(
                seed=params.seed,
                latency_s=self._clock() - started,
                status=failure.status,
                error=redact(str(failure)),
            )
            if unanswered.full_price is None:
                error = ModelCallError(
                    redact(str(failure)),
                    stage=stage,
                    task_id=task_id,
                    status=failure.status,
                    attempts=1,
                    kind=failure.kind,
                )
                error.requests = [unanswered_report]
                raise error from failure
            return await self._after_batch(
                messages, params, unanswered_report, stage, task_id, unanswered.full_price
            )
        if len(completions) != params.n:
            # Like a server that ignored n: the synchronous path asks for the rest.
            partial = RequestReport(
                seed=params.seed,
                latency_s=self._clock() - started,
                error=f"the batch answered {len(completions)} of {params.n} samples",
            )
            return await self._after_batch(
                messages, params, partial, stage, task_id, "samples missing"
            )
        for completion in completions:
            completion.latency_s = completion.latency_s or self._clock() - started
        report = _report_of(completions, range(params.n), seed=params.seed)
        return completions, [report], True

    async def _after_batch(
        self,
        messages: list[Message],
        params: GenerateParams,
        batch_report: RequestReport,
        stage: str,
        task_id: str | None,
        why: str,
    ) -> tuple[list[Completion], list[RequestReport], bool]:
        """The synchronous path for what a batch left unanswered (its line comes first),
        with a warning naming what it cost at full price."""
        try:
            completions, reports = await self._request_with_retries(
                messages, params, stage=stage, task_id=task_id
            )
        except ModelCallError as error:
            error.requests.insert(0, batch_report)
            raise
        usage = Usage()
        for report in reports:
            usage = usage + report.usage
        full = self._cost(usage, completions)
        batch = self.prices.batch_cost_usd(self.spec, usage)
        LOG.warning(
            "%s: a request of %s (%s) the batch did not answer (%s) was sent synchronously "
            "at full price: %s",
            self.spec,
            task_id or "the run",
            stage,
            why,
            f"${full:.6f} (${full - batch:.6f} more than in the batch)"
            if full is not None and batch is not None
            else f"cost unknown (no price for {self.spec})",
        )
        return completions, [batch_report, *reports], False

    async def _request_with_retries(
        self, messages: list[Message], params: GenerateParams, *, stage: str, task_id: str | None
    ) -> tuple[list[Completion], list[RequestReport]]:
        """Completions for ``params`` and every provider request sent for them, retries
        included (raised with :class:`ModelCallError` when the call gives up)."""
        reports: list[RequestReport] = []
        try:
            return await self._attempts(messages, params, reports, stage=stage, task_id=task_id)
        except ModelCallError as error:
            error.requests = reports
            raise

    async def _attempts(
        self,
        messages: list[Message],
        params: GenerateParams,
        reports: list[RequestReport],
        *,
        stage: str,
        task_id: str | None,
    ) -> tuple[list[Completion], list[RequestReport]]:
        config = self.config
        started = self._clock()
        estimated = prompt_tokens(messages) + (params.max_tokens or 0) * params.n
        attempt = 0
        while True:
            attempt += 1
            request_started = self._clock()
            # A provider that sends several requests per attempt reports each; one that
            # reports none sent one.
            with collect_requests() as reported:
                try:
                    async with (
                        self.limiter.slot(estimated) as record,
                        self._in_flight(stage, task_id),
                    ):
                        request_started = self._clock()
                        timeout = None if self.provider.timeout_excludes_queue else config.timeout_s
                        completions = await asyncio.wait_for(
                            self.provider.generate(messages, params), timeout=timeout
                        )
                        for completion in completions:
                            if not completion.latency_s:
                                completion.latency_s = self._clock() - request_started
                        spent = sum(
                            c.usage.prompt_tokens + c.usage.completion_tokens for c in completions
                        )
                        Limiter.record_tokens(record, spent)
                except asyncio.TimeoutError:
                    failure = ProviderError(
                        f"no answer within {config.timeout_s:g} s",
                        decision=RetryDecision.TRANSIENT,
                        kind="timeout",
                    )
                except ProviderError as provider_error:
                    if provider_error.kind == PROMPT_TOO_LONG:
                        # The server's tokenizer counts more than the estimate: no retry helps.
                        reports += reported or [
                            _failed_report(params, provider_error, self._clock() - request_started)
                        ]
                        raise PromptTooLongError(
                            redact(str(provider_error)),
                            stage=stage,
                            task_id=task_id,
                            context_window=self._window.known,
                            attempts=attempt,
                        ) from provider_error
                    failure = provider_error
                except Exception as unexpected:  # a provider bug: recorded, then fails the call
                    reports += reported or [
                        _failed_report(params, unexpected, self._clock() - request_started)
                    ]
                    raise ModelCallError(
                        redact(f"{type(unexpected).__name__}: {unexpected}"),
                        stage=stage,
                        task_id=task_id,
                        attempts=attempt,
                    ) from unexpected
                else:
                    reports += reported or [
                        _report_of(completions, range(len(completions)), seed=params.seed)
                    ]
                    if len(completions) != params.n:
                        raise ModelCallError(
                            f"{self.spec} returned {len(completions)} completions, "
                            f"{params.n} were requested",
                            stage=stage,
                            task_id=task_id,
                            attempts=attempt,
                        )
                    return completions, reports
            # A timed-out attempt reports none of the requests it cancelled: one was sent.
            reports += reported or [
                _failed_report(params, failure, self._clock() - request_started)
            ]

            delay = next_delay(
                failure,
                attempt=attempt,
                retries=config.request_retries,
                answered=self._answered,
                elapsed_s=self._clock() - started,
                budget_s=config.retry_budget_s,
                delay=functools.partial(self.backoff_delay, attempt, failure.retry_after),
                stage=stage,
                task_id=task_id,
            )
            await self._sleep(delay)

    def _emit(self, event: ProgressEvent) -> None:
        if self.progress is not None:
            self.progress.emit(event)

    @contextlib.asynccontextmanager
    async def _in_flight(self, stage: str, task_id: str | None) -> AsyncIterator[None]:
        self._emit(RequestStarted(stage=stage, task_id=task_id))
        marker = None
        if self.in_flight_dir is not None:
            marker = mark_in_flight(
                self.in_flight_dir, stage=stage, task_id=task_id, model=self.spec
            )
        cut_off = True
        try:
            yield
            cut_off = False
        except Exception:
            cut_off = False  # the request failed: it is accounted like an answer
            raise
        finally:
            # A cancellation (Ctrl-C) leaves the marker: the request was cut off in flight.
            if marker is not None and not cut_off:
                marker.unlink(missing_ok=True)
            self._emit(RequestEnded(stage=stage, task_id=task_id))

    def backoff_delay(self, attempt: int, retry_after: float | None) -> float:
        """Full-jitter exponential backoff, never shorter than the server's ``Retry-After``."""
        return backoff_delay(
            attempt,
            retry_after,
            base_s=self.config.backoff_base_s,
            max_s=self.config.backoff_max_s,
            rng=self._rng,
        )

    def _account(
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
    ) -> None:
        """Log one line per request the call sent (one line for a call without any: the
        cache answered it, or the provider failed before sending), sum them into the
        usage, and report the call to the progress display."""
        ts = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        call = {
            "ts": ts,
            "call_id": uuid.uuid4().hex[:16],
            "stage": stage,
            "task_id": task_id,
            "model": self.spec,
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
                cost = self.prices.batch_cost_usd(self.spec, report.usage)
            elif report.cost_usd is not None:
                cost = report.cost_usd
            else:
                cost = self._cost(report.usage, completions)
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
        if self._call_log is not None:
            self._call_log.append(records)
        usage = StageUsage.of_call(records)
        self._emit(
            CallAccounted(
                stage=stage,
                tokens=usage.tokens.prompt_tokens + usage.tokens.completion_tokens,
                cost_usd=usage.cost_usd,
                cache_hits=len(cached),
            )
        )

    def _cost(self, tokens: Usage, fresh: list[Completion]) -> float | None:
        """The gateway's own figure where it reports one (on the first completion of each
        response), else the price table's."""
        if not fresh:
            return 0.0
        reported = [c.cost_usd for c in fresh if c.cost_usd is not None]
        return sum(reported) if reported else self.prices.cost_usd(self.spec, tokens)

    def usage_summary(self) -> UsageSummary:
        """Totals and per-stage usage so far (the sums of this client's call records)."""
        return self._usage.model_copy(deep=True)

    async def aclose(self) -> None:
        """Close the provider and the cache (a view from :meth:`with_defaults`: nothing)."""
        if self._owner is not None:
            return
        if self._batcher is not None:
            await self._batcher.aclose()
        await self.provider.aclose()
        if self.cache is not None:
            self.cache.close()


def open_model(
    spec: str,
    *,
    base_url: str | None = None,
    model_args: dict[str, str] | None = None,
    config: ModelConfig | None = None,
    call_log_path: Path | None = None,
    limiter: Limiter | None = None,
    defaults: SamplingConfig | None = None,
    progress: ProgressSink | None = None,
    in_flight_dir: Path | None = None,
) -> ModelClient:
    """Create the provider for ``spec`` and wrap it in a :class:`ModelClient`.

    Pass the same ``limiter`` to every client of a run so they share one budget; a run's
    clients report to its ``progress`` and mark their requests in flight in its
    ``in_flight_dir``.
    """
    config = config or ModelConfig()
    provider = create_provider(spec, base_url=base_url, **(model_args or {}))
    cache = None
    if config.cache or config.cache_write:
        cache = ResponseCache(config.cache_dir, read=config.cache, write=config.cache_write)
    return ModelClient(
        provider,
        config=config,
        cache=cache,
        limiter=limiter,
        call_log_path=call_log_path,
        defaults=defaults,
        progress=progress,
        in_flight_dir=in_flight_dir,
    )
