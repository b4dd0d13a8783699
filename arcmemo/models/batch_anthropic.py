"""Anthropic Message Batches as a :class:`~arcmemo.models.batch.BatchBackend`.

``messages.batches.create`` takes the requests (each the ``params`` of one Messages call),
``messages.batches.retrieve`` reports progress and ``messages.batches.results`` streams each
request's result: succeeded (a message), errored, canceled or expired;
``messages.batches.cancel`` cancels one (``POST /v1/messages/batches/{id}/cancel``) and
``messages.batches.delete`` deletes an ended batch with its results
(``DELETE /v1/messages/batches/{id}``; Anthropic would otherwise keep them 29 days).
Everything goes through the provider's own ``anthropic`` SDK client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import anthropic

from arcmemo.models.base import Completion, GenerateParams, Message, ProviderError, RetryDecision
from arcmemo.models.batch import (
    EXPIRED,
    BatchRequest,
    BatchStatus,
    BatchUnsupportedError,
    Outcome,
)
from arcmemo.models.redact import public_url
from arcmemo.models.sdk_support import map_sdk_error

# Error types a retry would not fix (the request itself is wrong).
_FINAL_ERRORS = frozenset(
    {"invalid_request_error", "authentication_error", "permission_error", "not_found_error"}
)
_ABSENT_STATUSES = frozenset({404, 405, 501})
# The HTTP status a synchronous call would have met for a server-side error result.
_SERVER_ERRORS = {"api_error": 500, "overloaded_error": 529}


class BatchingProvider(Protocol):
    """What the backend asks of the Anthropic provider that drives it."""

    base_url: str | None

    @property
    def name(self) -> str: ...

    @property
    def spec(self) -> str: ...

    def batch_params(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]: ...


class AnthropicBatchBackend:
    """Message Batches of one Anthropic endpoint."""

    def __init__(
        self,
        provider: BatchingProvider,
        client: anthropic.AsyncAnthropic,
        completion_of_message: Callable[[Any], Completion],
    ) -> None:
        self.provider = provider
        self.client = client
        # The provider's reading of a Messages response (a batch result holds the same).
        self.completion_of_message = completion_of_message

    def _error(self, error: BaseException) -> ProviderError:
        return map_sdk_error(error, anthropic, self.provider.name, self.client.api_key or "")

    async def check(self) -> None:
        try:
            await self.client.messages.batches.list(limit=1)
        except anthropic.APIStatusError as error:
            if error.status_code in _ABSENT_STATUSES:
                where = public_url(self.provider.base_url) or "api.anthropic.com"
                raise BatchUnsupportedError(
                    f"--batch: {self.provider.spec} at {where} has no Message Batches API "
                    f"(/v1/messages/batches answered HTTP {error.status_code}); run without "
                    "--batch"
                ) from None
            raise self._error(error) from error
        except Exception as error:
            raise self._error(error) from error

    async def submit(self, requests: list[BatchRequest]) -> str:
        entries: list[Any] = [
            {
                "custom_id": request.custom_id,
                "params": self.provider.batch_params(request.messages, request.params),
            }
            for request in requests
        ]
        try:
            batch = await self.client.messages.batches.create(requests=entries)
        except Exception as error:
            raise self._error(error) from error
        return batch.id

    async def status(self, batch_id: str) -> BatchStatus:
        try:
            batch = await self.client.messages.batches.retrieve(batch_id)
        except Exception as error:
            raise self._error(error) from error
        return _status(batch)

    async def cancel(self, batch_id: str) -> BatchStatus:
        try:
            batch = await self.client.messages.batches.cancel(batch_id)
        except Exception as error:
            raise self._error(error) from error
        return _status(batch)

    async def discard(self, batch_id: str) -> None:
        # No file was uploaded (the requests go in the create call), but the batch and its
        # results stay in the workspace until deleted.
        try:
            await self.client.messages.batches.delete(batch_id)
        except Exception as error:
            raise self._error(error) from error

    async def results(self, batch_id: str) -> dict[str, Outcome]:
        outcomes: dict[str, Outcome] = {}
        name = self.provider.name
        try:
            async for entry in await self.client.messages.batches.results(batch_id):
                result = entry.result
                if result.type == "succeeded":
                    outcomes[entry.custom_id] = [self.completion_of_message(result.message)]
                elif result.type == "errored":
                    detail = result.error.error
                    kind = getattr(detail, "type", "api_error")
                    status = _SERVER_ERRORS.get(kind)
                    outcomes[entry.custom_id] = ProviderError(
                        f"{name}: batch request failed ({kind}): {getattr(detail, 'message', '')}",
                        decision=RetryDecision.NO
                        if kind in _FINAL_ERRORS
                        else RetryDecision.TRANSIENT,
                        status=status,
                        kind=f"HTTP {status}" if status else "batch",
                    )
                else:  # canceled or expired: never reached the model
                    expired = result.type == "expired"
                    outcomes[entry.custom_id] = ProviderError(
                        f"{name}: batch request {result.type}",
                        decision=RetryDecision.TRANSIENT if expired else RetryDecision.NO,
                        kind=EXPIRED if expired else "batch",
                    )
        except Exception as error:
            raise self._error(error) from error
        return outcomes


def _status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    failed = counts.errored + counts.canceled + counts.expired
    created = getattr(batch, "created_at", None)
    return BatchStatus(
        ended=batch.processing_status == "ended",
        state=batch.processing_status,
        total=counts.processing + counts.succeeded + failed,
        done=counts.succeeded,
        failed=failed,
        created=created.isoformat(timespec="seconds") if created else None,
    )
