"""Run-wide limits on concurrent requests, requests per minute and tokens per minute.

One :class:`Limiter` is shared by every :class:`~arcmemo.models.client.ModelClient` of a
run (e.g. the solver's and the abstraction model's), so all stages draw from one budget.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

Sleep = Callable[[float], Awaitable[None]]
_WINDOW_S = 60.0


class Limiter:
    """At most ``concurrency`` requests in flight, and optional rpm / tpm ceilings.

    The token ceiling is enforced on an estimate at admission (prompt size plus the
    requested output cap) and corrected with the real count once the call returns.
    """

    def __init__(
        self,
        concurrency: int = 16,
        *,
        rpm: int | None = None,
        tpm: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.concurrency = concurrency
        self.rpm = rpm
        self.tpm = tpm
        self._clock = clock
        self._sleep = sleep
        self._requests: deque[float] = deque()
        self._tokens: deque[list[float]] = deque()  # [time, tokens], mutable for corrections
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._admission: asyncio.Lock | None = None
        self.in_flight = 0
        self.max_in_flight = 0

    def _primitives(self) -> tuple[asyncio.Semaphore, asyncio.Lock]:
        # asyncio primitives belong to one event loop; a limiter reused under a new loop
        # (e.g. successive asyncio.run calls) gets fresh ones.
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._semaphore is None or self._admission is None:
            self._loop = loop
            self._semaphore = asyncio.Semaphore(self.concurrency)
            self._admission = asyncio.Lock()
        return self._semaphore, self._admission

    def _prune(self, now: float) -> None:
        while self._requests and now - self._requests[0] >= _WINDOW_S:
            self._requests.popleft()
        while self._tokens and now - self._tokens[0][0] >= _WINDOW_S:
            self._tokens.popleft()

    def _wait_needed(self, now: float, tokens: int) -> float:
        waits = [0.0]
        if self.rpm is not None and len(self._requests) >= self.rpm:
            waits.append(self._requests[0] + _WINDOW_S - now)
        if self.tpm is not None and self._tokens:
            used = sum(entry[1] for entry in self._tokens)
            if used + tokens > self.tpm:
                # Wait for the oldest entry to leave the window; re-checked in a loop.
                waits.append(self._tokens[0][0] + _WINDOW_S - now)
        return max(waits)

    @asynccontextmanager
    async def slot(self, estimated_tokens: int = 0) -> AsyncIterator[list[float]]:
        """Hold one request slot; yields a token record to correct with the real count."""
        semaphore, admission = self._primitives()
        async with semaphore:
            async with admission:
                while True:
                    now = self._clock()
                    self._prune(now)
                    wait = self._wait_needed(now, estimated_tokens)
                    if wait <= 0:
                        break
                    await self._sleep(wait)
                record = [now, float(estimated_tokens)]
                self._requests.append(now)
                if self.tpm is not None:
                    self._tokens.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                yield record
            finally:
                self.in_flight -= 1

    @staticmethod
    def record_tokens(record: list[float], actual_tokens: int) -> None:
        """Replace the admission estimate in ``record`` with the real token count."""
        record[1] = float(actual_tokens)
