"""The facade every LLM call in arcmemo goes through.

:class:`ModelClient` is one model's provider composed, when it is built, with the parts
every call goes through: the response cache (:mod:`arcmemo.models.cache`), the sender that
holds a request to the run-wide :class:`~arcmemo.models.limiter.Limiter` and retries it
(:mod:`arcmemo.models.sending`, its policy and circuit breaker in
:mod:`arcmemo.models.retry`), the accounts that log ``calls.jsonl`` and sum usage
(:mod:`arcmemo.models.accounting`), provider batches in batch mode
(:mod:`arcmemo.models.batch_mode`), and the reporting of requests in flight
(:mod:`arcmemo.models.in_flight`). Providers only speak their wire format. A view
(:meth:`ModelClient.with_defaults`, ...) is another client over the same parts.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from pathlib import Path

from arcmemo.core.progress import ProgressSink
from arcmemo.models.accounting import UsageSummary
from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    Provider,
    RequestReport,
    SamplingConfig,
)
from arcmemo.models.batch_mode import BatchMode
from arcmemo.models.cache import ResponseCache, cache_keys
from arcmemo.models.config import ModelConfig
from arcmemo.models.in_flight import Reporting
from arcmemo.models.limiter import Limiter
from arcmemo.models.parts import ClientParts
from arcmemo.models.prices import PriceTable
from arcmemo.models.redact import public_url
from arcmemo.models.registry import create_provider
from arcmemo.models.retry import ModelCallError
from arcmemo.models.sending import Sleep, group_params, prompt_tokens, request_groups


class ModelClient:
    """One model with cache, retries, limits and accounting around it.

    ``batch`` opens it in batch mode (its cache misses go out as provider batches; raises
    :class:`~arcmemo.models.batch.BatchUnsupportedError` for a provider without a batch
    API); ``progress`` and ``in_flight_dir`` are where it reports (a run's display and
    ``in_flight/``); ``defaults`` the sampling of a call that leaves a parameter unset.
    """

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
        batch: BatchMode | None = None,
    ) -> None:
        parts = ClientParts.build(
            provider,
            config=config or ModelConfig(),
            cache=cache,
            limiter=limiter,
            prices=prices,
            call_log_path=call_log_path,
            sleep=sleep,
            clock=clock,
            rng=rng,
            batch=batch,
        )
        reporting = Reporting(progress, in_flight_dir)
        self._bind(parts, defaults or SamplingConfig(), 0, reporting, owner=True)

    def _bind(
        self,
        parts: ClientParts,
        defaults: SamplingConfig,
        sample_offset: int,
        reporting: Reporting,
        *,
        owner: bool = False,
        closes_route: bool = False,
    ) -> None:
        """Build the client (``owner``: it closes the parts) or a view over ``parts``."""
        self._parts = parts
        # Sampling used where a call leaves a parameter unset (a role's settings).
        self.defaults = defaults
        # Added to every call's sample indices (a view for one prompt variant: with_samples).
        self.sample_offset = sample_offset
        self._reporting = reporting
        self._owner = owner
        self._closes_route = owner or closes_route

    @classmethod
    def _view(
        cls,
        parts: ClientParts,
        defaults: SamplingConfig,
        sample_offset: int,
        reporting: Reporting,
        *,
        closes_route: bool = False,
    ) -> ModelClient:
        view = cls.__new__(cls)
        view._bind(parts, defaults, sample_offset, reporting, closes_route=closes_route)
        return view

    @property
    def provider(self) -> Provider:
        return self._parts.provider

    @property
    def prices(self) -> PriceTable:
        return self._parts.accounts.prices

    @property
    def spec(self) -> str:
        """The ``provider:model`` name of the wrapped model."""
        return self._parts.provider.spec

    def backoff_delay(self, attempt: int, retry_after: float | None) -> float:
        """Full-jitter exponential backoff, never shorter than the server's ``Retry-After``."""
        return self._parts.sender.backoff_delay(attempt, retry_after)

    async def context_window(self) -> int | None:
        """The model's context window in tokens: ``--model-arg context_window=N``, else what
        its server reports, else the packaged table (:mod:`arcmemo.models.context`); None
        when nothing says. The server is asked once per client."""
        return await self._parts.window.find()

    async def check_batch(self) -> None:
        """Fail at once (BatchUnsupportedError) when the endpoint has no batch API."""
        if self._parts.route is not None:
            await self._parts.route.batcher.backend.check()

    def with_defaults(self, defaults: SamplingConfig) -> ModelClient:
        """A view of this client (same provider, cache, limits, accounting and log) whose
        calls default to ``defaults``: one model serving two roles with their own settings.
        Closing the view closes nothing; close the client."""
        return self._view(self._parts, defaults, self.sample_offset, self._reporting)

    def with_samples(self, offset: int) -> ModelClient:
        """A view of this client whose calls ask for sample ``offset + i`` where they ask for
        sample ``i``: a second prompt variant's selector call, identical to the first's,
        gets its own answer (and cache entry) instead of the first's. Offset 0 is the
        client itself."""
        if offset == 0:
            return self
        return self._view(self._parts, self.defaults, self.sample_offset + offset, self._reporting)

    def reporting_to(
        self, progress: ProgressSink, in_flight_dir: Path | None, batch: BatchMode | None = None
    ) -> ModelClient:
        """A view of this client that reports its requests and calls to ``progress`` and
        marks its requests in flight in ``in_flight_dir`` (a client given to a run); with
        ``batch``, in batch mode (its own batch queue, which closing the view closes,
        unless this client is in batch mode already)."""
        parts = self._parts
        if batch is not None and parts.route is None:
            parts = parts.in_batch_mode(batch)
        reporting = Reporting(progress, in_flight_dir)
        return self._view(
            parts,
            self.defaults,
            self.sample_offset,
            reporting,
            closes_route=parts is not self._parts,
        )

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
        started = self._parts.clock()
        identity = self.provider.cache_identity()
        if self._parts.config.cache_namespace:
            identity = {**identity, "namespace": self._parts.config.cache_namespace}
        first_sample += self.sample_offset
        indices = range(first_sample, first_sample + n)
        keys = cache_keys(identity, messages, params, indices)
        # Reads stay on the event loop: under WAL a reader never waits for a writer, and a
        # hand-off to a thread costs more than the read (the loop then waits for the GIL).
        results: list[Completion | None] = (
            self._parts.cache.get_many(keys) if self._parts.cache is not None else [None] * n
        )
        missing = [index for index, result in zip(indices, results, strict=True) if result is None]
        if missing:
            await self._parts.window.check_fits(
                prompt_tokens(messages), stage=stage, task_id=task_id
            )
        groups = request_groups(self.provider, missing)
        outcomes = await asyncio.gather(
            *(
                self._request(
                    messages,
                    group_params(params, group),
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
            self._parts.cache.submit_many(self.spec, to_store)
            if self._parts.cache is not None and to_store
            else None
        )
        self._parts.accounts.account(
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
            latency_s=self._parts.clock() - started,
            error=error,
            reporting=self._reporting,
        )
        if write is not None:
            # Awaited: once generate returns, its completions are committed (crash-safe).
            await asyncio.shield(asyncio.wrap_future(write))
        if unexpected is not None:
            raise unexpected
        fresh += batched
        if fresh:
            self._parts.breaker.answered = True
        if error is not None:
            self._parts.breaker.record(error, model=f"{self.spec}{self._endpoint()}")
            raise error
        return [result for result in results if result is not None]

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
        answered it (:class:`~arcmemo.models.batch_mode.BatchRoute` in batch mode)."""
        reporting, route = self._reporting, self._parts.route
        if route is not None:
            return await route.request(
                messages, params, keys, stage=stage, task_id=task_id, reporting=reporting
            )
        completions, reports = await self._parts.sender.send(
            messages, params, stage=stage, task_id=task_id, reporting=reporting
        )
        return completions, reports, False

    def usage_summary(self) -> UsageSummary:
        """Totals and per-stage usage so far (the sums of this client's call records)."""
        return self._parts.accounts.usage()

    async def aclose(self) -> None:
        """Close what this client opened: its provider, cache and batch queue (a view: only
        the batch queue it was opened with, else nothing)."""
        parts = self._parts
        if parts.route is not None and self._closes_route:
            await parts.route.aclose()
        if self._owner:
            await parts.provider.aclose()
            if parts.cache is not None:
                parts.cache.close()


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
    batch: BatchMode | None = None,
) -> ModelClient:
    """Create the provider for ``spec`` and wrap it in a :class:`ModelClient`.

    Pass the same ``limiter`` to every client of a run so they share one budget; a run's
    clients report to its ``progress``, mark their requests in flight in its
    ``in_flight_dir`` and, with ``batch``, send their cache misses as provider batches.
    """
    config = config or ModelConfig()
    provider = create_provider(spec, base_url=base_url, **(model_args or {}))
    cache = None
    if config.cache or config.cache_write:
        cache = ResponseCache(config.cache_dir, read=config.cache, write=config.cache_write)
    try:
        return ModelClient(
            provider,
            config=config,
            cache=cache,
            limiter=limiter,
            call_log_path=call_log_path,
            defaults=defaults,
            progress=progress,
            in_flight_dir=in_flight_dir,
            batch=batch,
        )
    except BaseException:
        if cache is not None:
            cache.close()
        raise
