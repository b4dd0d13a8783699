"""Several base URLs of one OpenAI-compatible deployment (e.g. one vLLM or SGLang replica
per GPU or node) used as one: ``--base-url URL --base-url URL`` or ``--base-url URL,URL``.

Each request goes to the endpoint with the fewest requests in flight (ties in turn), up to
``endpoint_concurrency`` in flight per endpoint when that is set (the run-wide
``--concurrency`` bounds them all). An endpoint that fails with a connection error, a
timeout or an HTTP 5xx is taken out for ``endpoint_cooldown_s`` and the request is sent
again, at once, to another endpoint; only when every endpoint has failed it does the error
go to the client's retry loop (which backs off and tries again: an endpoint whose cool-down
is over, or the one that recovers first, is then tried once more). The request was not
answered where it failed, so nothing is lost and nothing is answered twice.

The replicas serve the same model, so which one answered is not part of a response's
identity: the cache identity is the set of URLs, spelled canonically (order, trailing
slashes and credentials do not count); one URL keeps the identity it always had.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import openai
from pydantic import BaseModel, Field

from arcmemo.models.redact import public_url
from arcmemo.models.sdk_support import is_local_url

ClientT = TypeVar("ClientT")
T = TypeVar("T")
DEFAULT_COOLDOWN_S = 30.0


class EndpointOptions(BaseModel):
    """Options of a provider that spreads requests over several ``--base-url`` endpoints."""

    endpoint_concurrency: int | None = Field(
        default=None,
        ge=1,
        description="Requests in flight per endpoint of several --base-url (None: no cap "
        "beyond --concurrency, which the endpoints share, fewest in flight first).",
    )
    endpoint_cooldown_s: float = Field(
        default=DEFAULT_COOLDOWN_S,
        ge=0,
        description="Seconds an endpoint that failed (connection error, timeout, HTTP 5xx) "
        "gets no requests while the others take them.",
    )


def split_urls(text: str | None) -> list[str]:
    """The base URLs in ``text`` (comma-separated); [] for none."""
    return [url.strip() for url in (text or "").split(",") if url.strip()]


def key_url(text: str | None) -> str | None:
    """The URL that decides whether an API key is needed: a remote one if any is remote
    (a local server needs no key, a remote one does)."""
    urls = split_urls(text)
    return next((url for url in urls if not is_local_url(url)), urls[0] if urls else None)


def pool_identity(urls: list[str]) -> str | None:
    """The endpoints as part of a cache identity (see the module docstring)."""
    spelled = sorted({str(public_url(url)) for url in urls})
    return ",".join(spelled) if spelled else None


def openai_endpoint_failed(error: BaseException) -> bool:
    """The endpoint, not the request, failed: try another endpoint."""
    if isinstance(error, openai.APIStatusError):
        return error.status_code >= 500
    return isinstance(error, openai.APIConnectionError)  # timeouts included


@dataclass(eq=False)
class Endpoint(Generic[ClientT]):
    url: str | None
    client: ClientT
    in_flight: int = 0
    down_until: float = 0.0
    served: int = 0
    failed: int = 0


class EndpointPool(Generic[ClientT]):
    """Clients for several endpoints of one deployment, used as one (module docstring)."""

    def __init__(
        self,
        urls: list[str],
        make_client: Callable[[str | None], ClientT],
        *,
        failed: Callable[[BaseException], bool],
        concurrency: int | None = None,
        cooldown_s: float = DEFAULT_COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        spelled: list[str | None] = list(urls) or [None]  # None: the SDK's default host
        self.endpoints = [Endpoint(url, make_client(url)) for url in spelled]
        self.identity = pool_identity(urls)
        self._failed = failed
        self._concurrency = concurrency
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._turn = itertools.count()
        self._freed: asyncio.Condition | None = None

    @property
    def clients(self) -> list[ClientT]:
        return [endpoint.client for endpoint in self.endpoints]

    def _pick(self, tried: set[int]) -> Endpoint[ClientT] | None:
        """The endpoint for the next request: an untried healthy one with room, fewest in
        flight, ties in turn; else the untried cooling one that recovers first. None when
        every untried endpoint is full (wait), or every endpoint was tried."""
        now = self._clock()
        untried = [e for e in self.endpoints if id(e) not in tried]
        room = [e for e in untried if self._concurrency is None or e.in_flight < self._concurrency]
        healthy = [e for e in room if e.down_until <= now]
        if healthy:
            turn = next(self._turn)
            count = len(self.endpoints)
            return min(
                healthy,
                key=lambda e: (e.in_flight, (self.endpoints.index(e) - turn) % count),
            )
        if room and len(room) == len(untried):  # every untried one is cooling down: probe
            return min(room, key=lambda e: e.down_until)
        return None

    async def call(self, request: Callable[[ClientT], Awaitable[T]]) -> T:
        """``request(client)`` on one endpoint, failing over to the others (see above)."""
        if len(self.endpoints) == 1:
            return await request(self.endpoints[0].client)
        if self._freed is None:
            self._freed = asyncio.Condition()
        tried: set[int] = set()
        while True:
            async with self._freed:
                # Some endpoint is untried here (the last failure is raised below).
                while (endpoint := self._pick(tried)) is None:
                    await self._freed.wait()
                endpoint.in_flight += 1
            try:
                answer = await request(endpoint.client)
            except Exception as error:
                if not self._failed(error):
                    raise
                endpoint.failed += 1
                endpoint.down_until = self._clock() + self._cooldown_s
                tried.add(id(endpoint))
                if len(tried) == len(self.endpoints):
                    raise
                continue
            else:
                endpoint.served += 1
                return answer
            finally:
                async with self._freed:
                    endpoint.in_flight -= 1
                    self._freed.notify_all()

    def statistics(self) -> dict[str | None, dict[str, int]]:
        """Requests each endpoint served and failed (for tests and benchmarks)."""
        return {e.url: {"served": e.served, "failed": e.failed} for e in self.endpoints}
