"""The parts a :class:`~arcmemo.models.client.ModelClient` is composed of, built together
once per model and shared by the client and its views."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arcmemo.models.accounting import Accounts, CallLog
from arcmemo.models.base import Provider
from arcmemo.models.batch_mode import BatchMode, BatchRoute
from arcmemo.models.cache import ResponseCache
from arcmemo.models.config import ModelConfig
from arcmemo.models.context import WindowProbe
from arcmemo.models.limiter import Limiter
from arcmemo.models.prices import PriceTable
from arcmemo.models.retry import Breaker
from arcmemo.models.sending import Sender, Sleep


@dataclass(frozen=True)
class ClientParts:
    """One model and everything its calls go through: the response ``cache``, the run's
    ``limiter``, the context ``window``, the ``breaker``, the ``sender`` (retries), the
    ``accounts`` (``calls.jsonl`` and usage) and, in batch mode, the batch ``route``."""

    provider: Provider
    config: ModelConfig
    cache: ResponseCache | None
    limiter: Limiter
    window: WindowProbe
    breaker: Breaker
    sender: Sender
    accounts: Accounts
    route: BatchRoute | None
    clock: Callable[[], float]

    @classmethod
    def build(
        cls,
        provider: Provider,
        *,
        config: ModelConfig,
        cache: ResponseCache | None,
        limiter: Limiter | None,
        prices: PriceTable | None,
        call_log_path: Path | None,
        sleep: Sleep,
        clock: Callable[[], float],
        rng: random.Random | None,
        batch: BatchMode | None,
    ) -> ClientParts:
        """The parts of ``provider``'s client; a provider without a batch API in ``batch``
        mode raises :class:`~arcmemo.models.batch.BatchUnsupportedError`."""
        if provider.timeout_excludes_queue:
            # The provider times each request from its start; waiting in its queue is free.
            provider.request_timeout_s = config.timeout_s
        limiter = limiter or Limiter(config.concurrency, rpm=config.rpm, tpm=config.tpm)
        window, breaker = WindowProbe(provider, provider.spec), Breaker()
        sender = Sender(
            provider, config, limiter, breaker, window, sleep, clock, rng or random.Random()
        )
        accounts = Accounts(
            provider,
            prices or PriceTable.load(config.prices_path),
            # calls.jsonl: one line per request (shared by a run's clients and their views).
            CallLog(call_log_path) if call_log_path is not None else None,
        )
        route = None
        if batch is not None:
            route = BatchRoute(
                provider, batch, cache=cache, sender=sender, accounts=accounts, clock=clock
            )
        return cls(
            provider, config, cache, limiter, window, breaker, sender, accounts, route, clock
        )

    def in_batch_mode(self, batch: BatchMode) -> ClientParts:
        """These parts with a batch route of their own (a given client put in batch mode)."""
        route = BatchRoute(
            self.provider,
            batch,
            cache=self.cache,
            sender=self.sender,
            accounts=self.accounts,
            clock=self.clock,
        )
        return dataclasses.replace(self, route=route)
