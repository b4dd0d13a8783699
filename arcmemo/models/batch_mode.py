"""A client in batch mode: its cache misses go out as provider batches.

:class:`BatchMode` is what a run asks for (``--batch``: where batches are recorded, how they
are gathered); :class:`BatchRoute` takes a client's requests through its
:class:`~arcmemo.models.batch.Batcher`, and what a batch leaves unanswered through the
synchronous path, when that is allowed, at full price and with a warning.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arcmemo.core.tokens import Usage
from arcmemo.models.accounting import Accounts
from arcmemo.models.base import Completion, GenerateParams, Message, Provider, RequestReport
from arcmemo.models.batch import LOG, Batcher, BatchSettings, BatchUnanswered, BatchUnsupportedError
from arcmemo.models.cache import ResponseCache
from arcmemo.models.in_flight import Reporting
from arcmemo.models.redact import redact
from arcmemo.models.retry import ModelCallError
from arcmemo.models.sending import Sender, report_of


@dataclass(frozen=True)
class BatchMode:
    """Batch mode as a client is opened in it: batches recorded in ``log_path``."""

    log_path: Path
    settings: BatchSettings | None = None


class BatchRoute:
    """One client's requests through provider batches (see the module docstring)."""

    def __init__(
        self,
        provider: Provider,
        mode: BatchMode,
        *,
        cache: ResponseCache | None,
        sender: Sender,
        accounts: Accounts,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        factory = getattr(provider, "batch_backend", None)
        if factory is None:
            raise BatchUnsupportedError(
                f"--batch: {provider.spec} has no batch API (only openai and anthropic have "
                "one); run without --batch"
            )
        self.batcher = Batcher(
            factory(),
            model=provider.spec,
            log_path=mode.log_path,
            cache=cache,
            settings=mode.settings,
        )
        self.spec = provider.spec
        self.sender = sender
        self.accounts = accounts
        self.clock = clock

    async def request(
        self,
        messages: list[Message],
        params: GenerateParams,
        keys: list[str],
        *,
        stage: str,
        task_id: str | None,
        reporting: Reporting,
    ) -> tuple[list[Completion], list[RequestReport], bool]:
        """One request's completions, the provider requests it took, and whether a batch
        answered it. What the batch does not answer takes the synchronous path (with the
        usual retries, and a warning naming its full price) only when it expired or met a
        server error; any other fails the call at once (one attempt spent)."""
        started = self.clock()
        try:
            completions = await self.batcher.request(messages, params, keys)
        except BatchUnanswered as unanswered:
            failure = unanswered.error
            unanswered_report = RequestReport(
                seed=params.seed,
                latency_s=self.clock() - started,
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
                messages,
                params,
                unanswered_report,
                stage,
                task_id,
                unanswered.full_price,
                reporting,
            )
        if len(completions) != params.n:
            # Like a server that ignored n: the synchronous path asks for the rest.
            partial = RequestReport(
                seed=params.seed,
                latency_s=self.clock() - started,
                error=f"the batch answered {len(completions)} of {params.n} samples",
            )
            return await self._after_batch(
                messages, params, partial, stage, task_id, "samples missing", reporting
            )
        for completion in completions:
            completion.latency_s = completion.latency_s or self.clock() - started
        report = report_of(completions, range(params.n), seed=params.seed)
        return completions, [report], True

    async def _after_batch(
        self,
        messages: list[Message],
        params: GenerateParams,
        batch_report: RequestReport,
        stage: str,
        task_id: str | None,
        why: str,
        reporting: Reporting,
    ) -> tuple[list[Completion], list[RequestReport], bool]:
        """The synchronous path for what a batch left unanswered (its line comes first),
        with a warning naming what it cost at full price."""
        try:
            completions, reports = await self.sender.send(
                messages, params, stage=stage, task_id=task_id, reporting=reporting
            )
        except ModelCallError as error:
            error.requests.insert(0, batch_report)
            raise
        usage = Usage()
        for report in reports:
            usage = usage + report.usage
        full = self.accounts.cost(usage, completions)
        batch = self.accounts.prices.batch_cost_usd(self.spec, usage)
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

    async def aclose(self) -> None:
        await self.batcher.aclose()
