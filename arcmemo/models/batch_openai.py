"""The OpenAI Batch API as a :class:`~arcmemo.models.batch.BatchBackend`.

A batch is a JSONL file of ``/v1/chat/completions`` requests uploaded with
``files.create(purpose="batch")``, then ``batches.create``; ``batches.retrieve`` reports its
status (and, for a batch that failed validation, why: ``errors.data``) and ``files.content``
reads the output file (answers) and the error file (requests that failed or expired); once
read, the three files are deleted (``files.delete``); ``batches.cancel`` cancels one
(``POST /v1/batches/{id}/cancel``). Everything goes through the provider's own ``openai``
SDK client.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Final

import openai

from arcmemo.models.base import ProviderError, RetryDecision
from arcmemo.models.batch import (
    EXPIRED,
    N_REJECTED,
    BatchRequest,
    BatchStatus,
    BatchUnsupportedError,
    Outcome,
)
from arcmemo.models.redact import public_url
from arcmemo.models.sdk_support import decision_for_status, map_sdk_error

if TYPE_CHECKING:
    from arcmemo.models.openai_provider import OpenAIProvider

ENDPOINT: Final = "/v1/chat/completions"
_ENDED = frozenset({"completed", "expired", "failed", "cancelled"})
# What an endpoint without the Batch API answers on /v1/batches.
_ABSENT_STATUSES = frozenset({404, 405, 501})
_N_REJECTED_STATUSES = frozenset({400, 422})


class OpenAIBatchBackend:
    """Batches of Chat Completions requests on one OpenAI(-compatible) endpoint."""

    def __init__(self, provider: OpenAIProvider, client: openai.AsyncOpenAI) -> None:
        self.provider = provider
        self.client = client

    def _error(self, error: BaseException) -> ProviderError:
        return map_sdk_error(error, openai, self.provider.name, self.client.api_key)

    async def check(self) -> None:
        try:
            await self.client.batches.list(limit=1)
        except openai.APIStatusError as error:
            if error.status_code in _ABSENT_STATUSES:
                where = public_url(self.provider.base_url) or "api.openai.com"
                raise BatchUnsupportedError(
                    f"--batch: {self.provider.spec} at {where} has no Batch API "
                    f"(/batches answered HTTP {error.status_code}); run without --batch"
                ) from None
            raise self._error(error) from error
        except Exception as error:
            raise self._error(error) from error

    async def submit(self, requests: list[BatchRequest]) -> str:
        lines = [
            json.dumps(
                {
                    "custom_id": request.custom_id,
                    "method": "POST",
                    "url": ENDPOINT,
                    "body": self.provider.batch_body(request.messages, request.params),
                },
                ensure_ascii=False,
            )
            for request in requests
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
        try:
            uploaded = await self.client.files.create(
                file=("arcmemo-batch.jsonl", data, "application/jsonl"), purpose="batch"
            )
            batch = await self.client.batches.create(
                input_file_id=uploaded.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={"created_by": "arcmemo"},
            )
        except Exception as error:
            raise self._error(error) from error
        return batch.id

    async def status(self, batch_id: str) -> BatchStatus:
        try:
            batch = await self.client.batches.retrieve(batch_id)
        except Exception as error:
            raise self._error(error) from error
        return _status(batch)

    async def cancel(self, batch_id: str) -> BatchStatus:
        try:
            batch = await self.client.batches.cancel(batch_id)
        except Exception as error:
            raise self._error(error) from error
        return _status(batch)

    async def results(self, batch_id: str) -> dict[str, Outcome]:
        try:
            batch = await self.client.batches.retrieve(batch_id)
            texts = [
                (await self.client.files.content(file_id)).text
                for file_id in (batch.output_file_id, batch.error_file_id)
                if file_id
            ]
        except Exception as error:
            raise self._error(error) from error
        outcomes: dict[str, Outcome] = {}
        for text in texts:
            for line in text.splitlines():
                if line.strip():
                    entry = json.loads(line)
                    outcomes[str(entry.get("custom_id"))] = self._outcome(entry)
        return outcomes

    async def discard(self, batch_id: str) -> None:
        try:
            batch = await self.client.batches.retrieve(batch_id)
            for file_id in (batch.input_file_id, batch.output_file_id, batch.error_file_id):
                if file_id:
                    await self.client.files.delete(file_id)
        except Exception as error:
            raise self._error(error) from error

    def _outcome(self, entry: dict[str, Any]) -> Outcome:
        name = self.provider.name
        error = entry.get("error")
        response = entry.get("response") or {}
        status = int(response.get("status_code") or 0)
        if error or status != 200:
            body = response.get("body") or {}
            detail = error or body.get("error") or {}
            message = detail.get("message") if isinstance(detail, dict) else str(detail)
            code = detail.get("code") if isinstance(detail, dict) else None
            kind = f"HTTP {status}" if status else "batch"
            decision = decision_for_status(status) if status else RetryDecision.NO
            if code == "batch_expired":
                # Never reached the model before the completion window closed: retryable.
                kind, decision = EXPIRED, RetryDecision.TRANSIENT
            elif status in _N_REJECTED_STATUSES:
                # The synchronous path answers a rejected n > 1 with single calls; only it
                # can tell that from a bad request, so it gets the request again.
                kind, decision = N_REJECTED, RetryDecision.TRANSIENT
            return ProviderError(
                f"{name}: batch request failed ({code or f'HTTP {status}'}): {message}",
                decision=decision,
                status=status or None,
                kind=kind,
            )
        try:
            return self.provider.batch_completions(response.get("body") or {})
        except ProviderError as failure:
            return failure


def _status(batch: Any) -> BatchStatus:
    counts = batch.request_counts
    created = getattr(batch, "created_at", None)
    return BatchStatus(
        ended=batch.status in _ENDED,
        state=batch.status,
        total=counts.total if counts else 0,
        done=counts.completed if counts else 0,
        failed=counts.failed if counts else 0,
        rejected=_rejection(batch) if batch.status == "failed" else None,
        created=datetime.fromtimestamp(created, timezone.utc).isoformat(timespec="seconds")
        if created
        else None,
    )


def _rejection(batch: Any) -> str:
    """Why a failed batch failed: its ``errors.data`` (the validation errors, by line)."""
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    reasons = [
        f"{error.code or 'error'}"
        + (f" (line {error.line})" if error.line is not None else "")
        + f": {error.message or ''}"
        for error in errors
    ]
    return "; ".join(reasons) or "failed validation (the provider gave no reason)"
