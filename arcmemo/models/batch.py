"""Batch mode: provider batch APIs (half price) under :class:`~arcmemo.models.client.ModelClient`.

A run already issues its requests concurrently; in batch mode each cache miss is queued
here instead of sent. When no new request has arrived for ``quiet_s`` seconds (or the queue
holds ``max_requests``), the queue goes out as one provider batch; the batch id and the
cache keys of its requests are appended to the run's ``batches.jsonl`` before anything
waits on it. A poller reports progress until the batch ends, writes every answer into the
response cache, marks the batch collected and hands each waiting call its completions, so
the call finishes exactly as a synchronous one would (same cache entries, same results).

A run that restarts reads ``batches.jsonl``: a request whose keys are in a batch submitted
but never collected is awaited from that batch (retrieved, not submitted again).

What a batch does not answer comes back as :class:`BatchUnanswered`. Only a request that
expired or met a server error (5xx, or a submission that never reached the provider) is
sent again synchronously, at full price, through the normal retry loop, and the client
warns with what that cost (:func:`full_price_reason`); any other fails its call at once with
the reason: an error the synchronous path would not retry (HTTP 400, ...), a request
canceled (``arcmemo batches RUN --cancel``), and every request of a batch the provider
refused as a whole (failed validation: the reason is logged and recorded in
``batches.jsonl``). Once a batch's results are read, what it left in the user's storage is
deleted (OpenAI: the uploaded input file and the output and error files; Anthropic: the
batch and its results), unless :attr:`BatchSettings.keep_files`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from arcmemo.core.files import append_lines, read_json_lines
from arcmemo.models.base import Completion, GenerateParams, Message, ProviderError, RetryDecision
from arcmemo.models.cache import ResponseCache

LOG = logging.getLogger("arcmemo.batch")


class BatchUnsupportedError(ProviderError):
    """``--batch`` was asked of a model or endpoint without a batch API."""


class BatchUnanswered(Exception):
    """A request the batch did not answer, with the reason as a classified provider error;
    ``full_price`` says why it may be sent again synchronously (None: it may not)."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(str(error))
        self.error = error
        self.full_price = full_price_reason(error)


# The kinds of a request a batch left unanswered that are worth paying full price for.
EXPIRED = "batch expired"
# A request for several samples the endpoint refused (HTTP 400/422): the synchronous path
# answers it with one request per sample, as a synchronous run would.
N_REJECTED = "n rejected"


def full_price_reason(error: ProviderError) -> str | None:
    """Why a request a batch did not answer may be sent synchronously at full price: it
    expired, met a server error (5xx) or never reached the provider (a connection that
    failed or timed out), or is a refused ``n``; None for anything else, whose call fails."""
    if error.decision is RetryDecision.NO:
        return None
    if error.kind in (EXPIRED, N_REJECTED, "connection", "timeout"):
        return error.kind
    if error.status is not None and error.status >= 500:
        return f"HTTP {error.status}"
    return None


# -- what a backend speaks ---------------------------------------------------------------------


@dataclass(frozen=True)
class BatchRequest:
    """One request of a batch: ``custom_id`` is its name within the batch."""

    custom_id: str
    messages: list[Message]
    params: GenerateParams


class BatchStatus(BaseModel):
    """Where a submitted batch stands."""

    ended: bool = Field(description="No request will change any more (completed, expired, ...).")
    state: str = Field(description="The provider's own word (validating, in_progress, ended).")
    total: int = 0
    done: int = Field(default=0, description="Requests answered so far.")
    failed: int = Field(default=0, description="Requests that errored, expired or were canceled.")
    rejected: str | None = Field(
        default=None,
        description="Why the provider refused the batch as a whole (OpenAI: a batch that "
        "failed validation, its errors.data); None when it ran.",
    )
    created: str | None = Field(default=None, description="When the provider created it (UTC).")


# A request's outcome: its completions, or why the batch did not answer it.
Outcome = list[Completion] | ProviderError


class BatchBackend(Protocol):
    """A provider's batch API (see :mod:`arcmemo.models.batch_openai`, ``batch_anthropic``)."""

    async def check(self) -> None:
        """Raise :class:`BatchUnsupportedError` when the endpoint has no batch API."""

    async def submit(self, requests: list[BatchRequest]) -> str:
        """Create a batch of ``requests``; return its id (raise ProviderError on failure)."""

    async def status(self, batch_id: str) -> BatchStatus:
        """The batch's progress."""

    async def results(self, batch_id: str) -> dict[str, Outcome]:
        """Each answered (or errored) request's outcome by custom id, once the batch ended."""

    async def discard(self, batch_id: str) -> None:
        """Delete what the batch left in the user's storage (uploaded and result files, the
        batch itself where the API deletes one) once its results are read."""

    async def cancel(self, batch_id: str) -> BatchStatus:
        """Ask the provider to cancel the batch (requests not yet run are not billed); its
        status after the request."""


# -- batches.jsonl -------------------------------------------------------------------------


class BatchedRequestRef(BaseModel):
    """A request of a recorded batch: its name in the batch and its samples' cache keys."""

    custom_id: str
    keys: list[str]


class BatchRecord(BaseModel):
    """One line of ``batches.jsonl``: a batch submitted, or a batch collected."""

    event: Literal["submitted", "collected"]
    ts: str
    model: str = Field(description="The provider:model spec the batch belongs to.")
    batch_id: str
    requests: list[BatchedRequestRef] = Field(
        default_factory=list, description="The batch's requests (submitted lines only)."
    )
    state: str | None = Field(default=None, description="How it ended (collected lines only).")
    reason: str | None = Field(
        default=None, description="Why the provider refused the batch (collected lines only)."
    )
    answered: int | None = Field(default=None, description="Requests it answered (collected).")


def read_batch_log(path: Path) -> list[BatchRecord]:
    """Every complete, valid line of a ``batches.jsonl`` (a line torn by a crash is skipped)."""
    return [record for _, record, _ in read_json_lines(path, BatchRecord) if record]


def pending_batches(records: list[BatchRecord], model: str) -> list[BatchRecord]:
    """The batches of ``model`` submitted and not yet collected, oldest first."""
    collected = {r.batch_id for r in records if r.event == "collected"}
    return [
        r
        for r in records
        if r.event == "submitted" and r.model == model and r.batch_id not in collected
    ]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


# -- the batcher -----------------------------------------------------------------------------


class BatchProgress(BaseModel):
    """What the poller reports after each look at a batch."""

    batch_id: str
    model: str
    status: BatchStatus
    elapsed_s: float


ProgressCallback = Callable[[BatchProgress], None]


def log_progress(progress: BatchProgress) -> None:
    """The default progress display: one log line per poll."""
    status = progress.status
    LOG.info(
        "batch %s (%s): %s, %d/%d done, %d failed, %.0f s",
        progress.batch_id,
        progress.model,
        status.state,
        status.done,
        status.total,
        status.failed,
        progress.elapsed_s,
    )


@dataclass
class BatchSettings:
    """How requests are gathered into batches and how batches are watched."""

    quiet_s: float = 5.0  # flush once no request has arrived for this long
    max_requests: int = 10_000  # flush at this many queued requests
    poll_s: float = 30.0  # between looks at a submitted batch
    submit_retries: int = 3  # transient submission failures retried before falling back
    keep_files: bool = False  # leave the batch's files (and Anthropic's batch) in storage
    on_progress: ProgressCallback = log_progress


@dataclass
class _Queued:
    messages: list[Message]
    params: GenerateParams
    keys: tuple[str, ...]
    future: asyncio.Future[list[Completion]]


@dataclass
class _Waiting:
    """The requests of one submitted batch still waiting for it."""

    refs: list[BatchedRequestRef]
    futures: dict[str, asyncio.Future[list[Completion]]] = field(default_factory=dict)


class Batcher:
    """Queues one model's requests into provider batches (see the module docstring)."""

    def __init__(
        self,
        backend: BatchBackend,
        *,
        model: str,
        log_path: Path,
        cache: ResponseCache | None = None,
        settings: BatchSettings | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.backend = backend
        self.model = model
        self.log_path = log_path
        self.cache = cache
        self.settings = settings or BatchSettings()
        self._clock = clock
        self._queue: list[_Queued] = []
        self._last_arrival = 0.0
        self._flusher: asyncio.Task[None] | None = None
        self._pollers: dict[str, asyncio.Task[None]] = {}
        self._waiting: dict[str, _Waiting] = {}
        # Requests of batches recorded by an earlier process: keys -> (batch id, custom id).
        self._recorded: dict[tuple[str, ...], deque[tuple[str, str]]] = {}
        # Their outcomes once collected, for calls that arrive after the batch ended.
        self._collected: dict[tuple[str, ...], deque[Outcome]] = {}
        self._loaded = False
        self._log_lock = threading.Lock()
        self.submitted = 0  # batches this process created

    async def request(
        self, messages: list[Message], params: GenerateParams, keys: list[str]
    ) -> list[Completion]:
        """The completions of one request, answered by a batch (raises BatchUnanswered)."""
        self._load()
        key = tuple(keys)
        done = self._collected.get(key)
        if done:
            return _unwrap(done.popleft())
        recorded = self._recorded.get(key)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Completion]] = loop.create_future()
        if recorded:
            batch_id, custom_id = recorded.popleft()
            self._waiting[batch_id].futures[custom_id] = future
            self._watch(batch_id)
        else:
            self._queue.append(_Queued(messages, params, key, future))
            self._last_arrival = self._clock()
            if self._flusher is None or self._flusher.done():
                self._flusher = asyncio.create_task(self._flush_when_quiet())
        return await future

    # -- resume --------------------------------------------------------------------------

    def _load(self) -> None:
        """Register the requests of batches an earlier process submitted and never collected."""
        if self._loaded:
            return
        self._loaded = True
        for record in pending_batches(read_batch_log(self.log_path), self.model):
            self._waiting[record.batch_id] = _Waiting(refs=record.requests)
            for ref in record.requests:
                entry = (record.batch_id, ref.custom_id)
                self._recorded.setdefault(tuple(ref.keys), deque()).append(entry)

    # -- gathering and submitting -----------------------------------------------------------

    async def _flush_when_quiet(self) -> None:
        settings = self.settings
        while self._queue:
            if len(self._queue) < settings.max_requests:
                wait = self._last_arrival + settings.quiet_s - self._clock()
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue
            items = self._queue[: settings.max_requests]
            del self._queue[: settings.max_requests]
            await self._submit(items)

    async def _submit(self, items: list[_Queued]) -> None:
        requests = [
            BatchRequest(f"r{index}", item.messages, item.params)
            for index, item in enumerate(items)
        ]
        try:
            batch_id = await self._create(requests)
        except ProviderError as error:
            LOG.warning(
                "%s: batch submission failed (%s); sending synchronously", self.model, error
            )
            for item in items:
                if not item.future.done():
                    item.future.set_exception(BatchUnanswered(error))
            return
        refs = [
            BatchedRequestRef(custom_id=request.custom_id, keys=list(item.keys))
            for request, item in zip(requests, items, strict=True)
        ]
        self.submitted += 1
        self._append(
            BatchRecord(
                event="submitted", ts=_now(), model=self.model, batch_id=batch_id, requests=refs
            )
        )
        self._waiting[batch_id] = _Waiting(
            refs=refs,
            futures={ref.custom_id: item.future for ref, item in zip(refs, items, strict=True)},
        )
        self._watch(batch_id)

    async def _create(self, requests: list[BatchRequest]) -> str:
        attempt = 0
        while True:
            try:
                return await self.backend.submit(requests)
            except ProviderError as error:
                attempt += 1
                if error.decision is RetryDecision.NO or attempt > self.settings.submit_retries:
                    raise
                await asyncio.sleep(min(self.settings.poll_s, 2.0**attempt))

    # -- watching and collecting ----------------------------------------------------------

    def _watch(self, batch_id: str) -> None:
        if batch_id not in self._pollers:
            self._pollers[batch_id] = asyncio.create_task(self._collect(batch_id))

    async def _collect(self, batch_id: str) -> None:
        waiting = self._waiting[batch_id]
        lost: ProviderError | None = None
        reason: str | None = None
        try:
            status, outcomes = await self._wait_for(batch_id)
            state, reason = status.state, status.rejected
        except ProviderError as error:
            # The batch cannot be read (gone, or the API refuses): its requests go synchronous.
            state, outcomes, lost = "unreadable", {}, error
        except asyncio.CancelledError:
            for pending in waiting.futures.values():
                pending.cancel()
            raise
        except Exception as error:  # e.g. the progress callback raised: the waiters learn it
            for pending in waiting.futures.values():
                if not pending.done():
                    pending.set_exception(error)
            raise
        if reason is not None:
            # The same requests would be refused synchronously too (and the next batch again):
            # their calls fail at once with the provider's reason.
            LOG.warning("%s: batch %s %s: %s", self.model, batch_id, state, reason)
            lost = ProviderError(
                f"{self.model}: batch {batch_id} {state}: {reason}",
                decision=RetryDecision.NO,
                kind="batch",
            )
        answered = fallbacks = 0
        resolved: list[tuple[asyncio.Future[list[Completion]], Outcome]] = []
        for ref in waiting.refs:
            outcome = outcomes.get(ref.custom_id)
            if outcome is None:
                outcome = lost or _unanswered(self.model, batch_id, state, ref.custom_id)
            if isinstance(outcome, list):
                answered += 1
                self._store(ref.keys, outcome)
            elif full_price_reason(outcome) is not None:
                fallbacks += 1
            future = waiting.futures.get(ref.custom_id)
            if future is not None:
                resolved.append((future, outcome))
            else:
                self._collected.setdefault(tuple(ref.keys), deque()).append(outcome)
        self._append(
            BatchRecord(
                event="collected",
                ts=_now(),
                model=self.model,
                batch_id=batch_id,
                state=state,
                reason=reason,
                answered=answered,
            )
        )
        if fallbacks:
            LOG.warning(
                "%s: batch %s (%s) left %d of %d requests unanswered: they go synchronous at "
                "full price (twice the batch price)",
                self.model,
                batch_id,
                state,
                fallbacks,
                len(waiting.refs),
            )
        try:
            # Before the waiters are answered: a run that ends once they are (its client
            # closed, this poller cancelled) leaves no file behind.
            if state != "unreadable" and not self.settings.keep_files:
                await self.backend.discard(batch_id)
        except ProviderError as error:
            LOG.warning("%s: files of batch %s not deleted: %s", self.model, batch_id, error)
        finally:
            for future, outcome in resolved:
                if not future.done():
                    if isinstance(outcome, list):
                        future.set_result(outcome)
                    else:
                        future.set_exception(BatchUnanswered(outcome))
        # Unclaimed requests of this batch are no longer awaited from it.
        for ref in waiting.refs:
            entries = self._recorded.get(tuple(ref.keys))
            if entries:
                self._recorded[tuple(ref.keys)] = deque(e for e in entries if e[0] != batch_id)

    async def _wait_for(self, batch_id: str) -> tuple[BatchStatus, dict[str, Outcome]]:
        started = self._clock()
        failures = 0
        while True:
            try:
                status = await self.backend.status(batch_id)
            except ProviderError as error:
                failures += 1
                if error.decision is RetryDecision.NO or failures > self.settings.submit_retries:
                    raise
                await asyncio.sleep(self.settings.poll_s)
                continue
            failures = 0
            self.settings.on_progress(
                BatchProgress(
                    batch_id=batch_id,
                    model=self.model,
                    status=status,
                    elapsed_s=self._clock() - started,
                )
            )
            if status.ended:
                return status, await self.backend.results(batch_id)
            await asyncio.sleep(self.settings.poll_s)

    def _store(self, keys: list[str], completions: list[Completion]) -> None:
        # Before the batch is marked collected: a crash after that finds every answer cached.
        if self.cache is None:
            return
        for key, completion in zip(keys, completions, strict=False):
            self.cache.put(key, self.model, completion)

    def _append(self, record: BatchRecord) -> None:
        with self._log_lock:
            append_lines(self.log_path, [record.model_dump_json() + "\n"])

    async def aclose(self) -> None:
        """Stop watching (a resumed run picks the batches up from ``batches.jsonl``)."""
        tasks = [task for task in (self._flusher, *self._pollers.values()) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _unanswered(model: str, batch_id: str, state: str, custom_id: str) -> ProviderError:
    """Why a request has no outcome in a batch that ended: it expired (sent again at full
    price), or the batch was canceled or ended otherwise (the call fails)."""
    expired = state == "expired"
    return ProviderError(
        f"{model}: batch {batch_id} ended ({state}) without answering request {custom_id}",
        decision=RetryDecision.TRANSIENT if expired else RetryDecision.NO,
        kind=EXPIRED if expired else "batch",
    )


def _unwrap(outcome: Outcome) -> list[Completion]:
    if isinstance(outcome, ProviderError):
        raise BatchUnanswered(outcome)
    return outcome
