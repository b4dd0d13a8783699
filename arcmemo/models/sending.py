"""One request of a model call sent to its provider until it is answered or gives up.

:class:`Sender` holds a request to the run's :class:`~arcmemo.models.limiter.Limiter`,
times it out, retries it with backoff as :mod:`arcmemo.models.retry` decides, and returns
the completions with every provider request it took (each a ``calls.jsonl`` line).
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from arcmemo.core.tokens import Usage, estimate_tokens
from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    Provider,
    ProviderError,
    RequestReport,
    RetryDecision,
    collect_requests,
)
from arcmemo.models.config import ModelConfig
from arcmemo.models.context import PROMPT_TOO_LONG, PromptTooLongError, WindowProbe
from arcmemo.models.in_flight import Reporting
from arcmemo.models.limiter import Limiter
from arcmemo.models.redact import redact
from arcmemo.models.retry import Breaker, ModelCallError, backoff_delay, next_delay

Sleep = Callable[[float], Awaitable[None]]


def prompt_tokens(messages: list[Message]) -> int:
    """The estimated prompt tokens of ``messages`` (:func:`arcmemo.core.tokens.estimate_tokens`)."""
    return sum(estimate_tokens(message.content) for message in messages)


def request_groups(provider: Provider, missing: list[int]) -> list[list[int]]:
    """The requests that ask for the ``missing`` samples of a call: one for each run of
    consecutive samples, or one per sample when the API samples a single answer per request
    (then each sample is retried and cached on its own). A request covers consecutive
    samples only, so its seed (that of its first sample) never repeats a cached
    neighbour's: ``[0, 1, 3]`` -> ``[[0, 1], [3]]``."""
    if not getattr(provider, "supports_n", True):
        return [[index] for index in missing]
    runs: list[list[int]] = []
    for index in missing:
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def group_params(params: GenerateParams, group: list[int]) -> GenerateParams:
    """The request for the samples ``group``: seeded from its first sample (seed + index),
    so a request for samples that do not start at 0 (one sample per request, or the
    samples a partly cached call still lacks) does not repeat sample 0's completion."""
    update: dict[str, Any] = {"n": len(group)}
    if params.seed is not None and group and group[0] != 0:
        update["seed"] = params.seed + group[0]
    return params.model_copy(update=update)


def report_of(
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


@dataclass
class Sender:
    """Sends the requests of one model's calls: a slot of ``limiter``, the ``config``'s
    timeout, retries with backoff (``sleep``, ``clock`` and ``rng`` are the test's seams);
    ``breaker`` says whether the model ever answered, ``window`` what its window is."""

    provider: Provider
    config: ModelConfig
    limiter: Limiter
    breaker: Breaker
    window: WindowProbe
    sleep: Sleep = asyncio.sleep
    clock: Callable[[], float] = field(default=lambda: 0.0)
    rng: random.Random = field(default_factory=random.Random)

    async def send(
        self,
        messages: list[Message],
        params: GenerateParams,
        *,
        stage: str,
        task_id: str | None,
        reporting: Reporting,
    ) -> tuple[list[Completion], list[RequestReport]]:
        """Completions for ``params`` and every provider request sent for them, retries
        included (raised with :class:`ModelCallError` when the call gives up)."""
        reports: list[RequestReport] = []
        try:
            return await self._attempts(
                messages, params, reports, stage=stage, task_id=task_id, reporting=reporting
            )
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
        reporting: Reporting,
    ) -> tuple[list[Completion], list[RequestReport]]:
        config, provider = self.config, self.provider
        started = self.clock()
        estimated = prompt_tokens(messages) + (params.max_tokens or 0) * params.n
        attempt = 0
        while True:
            attempt += 1
            request_started = self.clock()
            # A provider that sends several requests per attempt reports each; one that
            # reports none sent one.
            with collect_requests() as reported:
                try:
                    async with (
                        self.limiter.slot(estimated) as record,
                        reporting.request(stage=stage, task_id=task_id, model=provider.spec),
                    ):
                        request_started = self.clock()
                        timeout = None if provider.timeout_excludes_queue else config.timeout_s
                        completions = await asyncio.wait_for(
                            provider.generate(messages, params), timeout=timeout
                        )
                        for completion in completions:
                            if not completion.latency_s:
                                completion.latency_s = self.clock() - request_started
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
                            _failed_report(params, provider_error, self.clock() - request_started)
                        ]
                        raise PromptTooLongError(
                            redact(str(provider_error)),
                            stage=stage,
                            task_id=task_id,
                            context_window=self.window.known,
                            attempts=attempt,
                        ) from provider_error
                    failure = provider_error
                except Exception as unexpected:  # a provider bug: recorded, then fails the call
                    reports += reported or [
                        _failed_report(params, unexpected, self.clock() - request_started)
                    ]
                    raise ModelCallError(
                        redact(f"{type(unexpected).__name__}: {unexpected}"),
                        stage=stage,
                        task_id=task_id,
                        attempts=attempt,
                    ) from unexpected
                else:
                    reports += reported or [
                        report_of(completions, range(len(completions)), seed=params.seed)
                    ]
                    if len(completions) != params.n:
                        raise ModelCallError(
                            f"{provider.spec} returned {len(completions)} completions, "
                            f"{params.n} were requested",
                            stage=stage,
                            task_id=task_id,
                            attempts=attempt,
                        )
                    return completions, reports
            # A timed-out attempt reports none of the requests it cancelled: one was sent.
            reports += reported or [_failed_report(params, failure, self.clock() - request_started)]

            delay = next_delay(
                failure,
                attempt=attempt,
                retries=config.request_retries,
                answered=self.breaker.answered,
                elapsed_s=self.clock() - started,
                budget_s=config.retry_budget_s,
                delay=functools.partial(self.backoff_delay, attempt, failure.retry_after),
                stage=stage,
                task_id=task_id,
            )
            await self.sleep(delay)

    def backoff_delay(self, attempt: int, retry_after: float | None) -> float:
        """Full-jitter exponential backoff, never shorter than the server's ``Retry-After``."""
        return backoff_delay(
            attempt,
            retry_after,
            base_s=self.config.backoff_base_s,
            max_s=self.config.backoff_max_s,
            rng=self.rng,
        )
