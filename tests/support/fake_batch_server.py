"""The fake LLM server with the batch endpoints: OpenAI's ``/v1/files`` and ``/v1/batches``
and Anthropic's ``/v1/messages/batches``, as the official SDKs call them, on 127.0.0.1.

Each request line of a batch is answered exactly as the synchronous endpoint would answer
it (the same handler code). A batch moves one state per status request: OpenAI
``validating -> in_progress -> finalizing -> completed``, Anthropic ``in_progress -> ended``.
Faults: :meth:`FakeBatchServer.fail_next_requests` gives the next batch lines an error
result; :meth:`FakeBatchServer.expire_next_batch` ends the next batch as expired with only
its first lines answered; :meth:`FakeBatchServer.fail_next_batch_validation` fails the next
OpenAI batch's validation; :meth:`FakeBatchServer.hold_batches` keeps batches in progress
(until canceled). Files can be deleted (``DELETE /v1/files/ID``), an ended Anthropic batch
too (``DELETE /v1/messages/batches/ID``; one in progress is refused, as Anthropic does), and
batches canceled (``POST /v1/batches/ID/cancel``, ``POST /v1/messages/batches/ID/cancel``:
the requests not yet run end canceled). ``batch_api=False`` plays a server without batch
endpoints (404).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import default as default_policy
from typing import Any
from urllib.parse import urlparse

from tests.support.fake_llm_server import FakeLLMServer, _error_payload, _Handler

_OPENAI_STATES = ("validating", "in_progress", "finalizing", "completed")


@dataclass
class FakeBatch:
    """One batch as the server keeps it."""

    id: str
    kind: str  # "openai" or "anthropic"
    custom_ids: list[str]
    results: list[dict[str, Any]]  # one result line per request, in request order
    input_file_id: str | None = None
    step: int = 0
    expired: bool = False
    answered: int | None = None  # with expired: how many lines were answered
    invalid: str | None = None  # a validation error: the batch fails with it, nothing runs
    held: bool = False  # stays in progress until canceled
    canceled: bool = False


@dataclass
class BatchState:
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    created: int = 0  # batches created (a resume must not add any)
    retrieves: int = 0
    fail_next: list[int] = field(default_factory=list)  # statuses for the next batch lines
    expire_next: int | None = None  # answered lines of the next batch, which expires
    invalid_next: str | None = None  # the next batch fails validation with this message
    deleted: list[str] = field(default_factory=list)  # file and batch ids deleted, in order
    canceled: list[str] = field(default_factory=list)  # batch ids canceled, in order
    hold: bool = False  # new batches stay in progress until canceled
    lock: threading.Lock = field(default_factory=threading.Lock)


class _BatchHandler(_Handler):
    def do_GET(self) -> None:
        path = urlparse(self.path).path.rstrip("/")
        parts = path.split("/")
        if not self._batch_api():
            return
        if path == "/v1/batches":
            self._json(200, {"object": "list", "data": [], "has_more": False})
        elif path == "/v1/messages/batches":
            self._json(200, {"data": [], "has_more": False, "first_id": None, "last_id": None})
        elif path.startswith("/v1/batches/"):
            self._openai_batch(parts[3], advance=True)
        elif path.startswith("/v1/files/") and path.endswith("/content"):
            data = self.server.batch.files.get(parts[3])
            if data is None:
                self._json(404, _error_payload("no such file", False))
            else:
                self._raw(200, data, "application/octet-stream")
        elif path.startswith("/v1/messages/batches/") and path.endswith("/results"):
            self._anthropic_results(parts[4])
        elif path.startswith("/v1/messages/batches/"):
            self._anthropic_batch(parts[4], advance=True)
        else:
            self._json(404, _error_payload(f"no route {path}", False))

    def do_DELETE(self) -> None:
        parts = urlparse(self.path).path.rstrip("/").split("/")
        if parts[2:4] == ["messages", "batches"] and len(parts) == 5:
            self._delete_anthropic(parts[4])
            return
        state = self.server.batch
        with state.lock:
            found = len(parts) == 4 and parts[2] == "files" and parts[3] in state.files
            if found:
                del state.files[parts[3]]
                state.deleted.append(parts[3])
        if not found:
            self._json(404, _error_payload("no such file", False))
        else:
            self._json(200, {"id": parts[3], "object": "file", "deleted": True})

    def _delete_anthropic(self, batch_id: str) -> None:
        state = self.server.batch
        with state.lock:
            batch = state.batches.get(batch_id)
            ended = batch is not None and batch.kind == "anthropic" and batch.step >= 1
            if ended:
                del state.batches[batch_id]
                state.deleted.append(batch_id)
        if batch is None:
            self._json(404, _error_payload("no such batch", True))
        elif not ended:
            message = "a batch in progress cannot be deleted; cancel it first"
            self._json(400, _error_payload(message, True))
        else:
            self._json(200, {"id": batch_id, "type": "message_batch_deleted"})

    def _cancel(self, batch_id: str) -> None:
        state = self.server.batch
        with state.lock:
            batch = state.batches.get(batch_id)
            if batch is not None:
                batch.canceled, batch.held = True, False
                state.canceled.append(batch_id)
        if batch is None:
            self._json(404, _error_payload("no such batch", "/messages" in self.path))
        elif batch.kind == "openai":
            self._json(200, self._openai_object(batch))
        else:
            self._json(200, self._anthropic_object(batch))

    def do_POST(self) -> None:
        path = urlparse(self.path).path.rstrip("/")
        if path.endswith("/cancel") and path.startswith(("/v1/batches/", "/v1/messages/batches/")):
            if self._batch_api():
                self._cancel(path.split("/")[-2])
            return
        if path not in ("/v1/files", "/v1/batches", "/v1/messages/batches"):
            super().do_POST()
            return
        if not self._batch_api():
            return
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        if path == "/v1/files":
            self._upload(raw)
        elif path == "/v1/batches":
            self._create_openai(json.loads(raw))
        else:
            self._create_anthropic(json.loads(raw))

    # -- plumbing ----------------------------------------------------------------------------

    def _batch_api(self) -> bool:
        if self.server.batch_api:
            return True
        self._json(404, _error_payload("Not Found", "/messages" in self.path))
        return False

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), {})

    def _raw(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _line_fault(self) -> int | None:
        state = self.server.batch
        with state.lock:
            return state.fail_next.pop(0) if state.fail_next else None

    def _new_batch(
        self, kind: str, custom_ids: list[str], results: list[dict[str, Any]]
    ) -> FakeBatch:
        state = self.server.batch
        with state.lock:
            state.created += 1
            batch = FakeBatch(f"batch_{kind}_{state.created}", kind, custom_ids, results)
            if state.expire_next is not None:
                batch.expired, batch.answered = True, state.expire_next
                state.expire_next = None
            batch.invalid, state.invalid_next = state.invalid_next, None
            batch.held = state.hold
            state.batches[batch.id] = batch
        return batch

    def _advance(self, batch: FakeBatch, last: int) -> None:
        with self.server.batch.lock:
            self.server.batch.retrieves += 1
            if batch.canceled:
                batch.step = last
            elif not batch.held:
                batch.step = min(batch.step + 1, last)
            else:  # in progress until canceled
                batch.step = min(batch.step + 1, 1, last - 1)

    # -- OpenAI ------------------------------------------------------------------------------

    def _upload(self, raw: bytes) -> None:
        header = f"content-type: {self.headers['content-type']}\r\n\r\n".encode()
        message = BytesParser(policy=default_policy).parsebytes(header + raw)
        fields = {
            part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
            for part in message.iter_parts()
        }
        state = self.server.batch
        with state.lock:
            file_id = f"file-{len(state.files) + 1}"
            state.files[file_id] = fields["file"]
        self._json(200, _file_object(file_id, fields["file"]))

    def _create_openai(self, body: dict[str, Any]) -> None:
        data = self.server.batch.files.get(body.get("input_file_id", ""))
        if data is None or body.get("endpoint") != "/v1/chat/completions":
            self._json(400, _error_payload("bad input_file_id or endpoint", False))
            return
        custom_ids, results = [], []
        for line in data.decode().splitlines():
            request = json.loads(line)
            custom_ids.append(request["custom_id"])
            fault = self._line_fault()
            if fault is not None:
                response = {"status_code": fault, "body": _error_payload("injected", False)}
            else:
                status, payload, _ = self._chat_result(request["body"])
                response = {"status_code": status, "body": payload}
            results.append(
                {"id": f"req_{len(results)}", "custom_id": request["custom_id"],
                 "response": {"request_id": "r", **response}, "error": None}
            )  # fmt: skip
        batch = self._new_batch("openai", custom_ids, results)
        batch.input_file_id = body["input_file_id"]
        self._json(200, self._openai_object(batch))

    def _openai_batch(self, batch_id: str, *, advance: bool) -> None:
        batch = self.server.batch.batches.get(batch_id)
        if batch is None:
            self._json(404, _error_payload("no such batch", False))
            return
        if advance:
            self._advance(batch, len(_OPENAI_STATES) - 1)
        self._json(200, self._openai_object(batch))

    def _openai_object(self, batch: FakeBatch) -> dict[str, Any]:
        if batch.invalid is not None and batch.step > 0:
            # Validation failed: the batch ends at once, with its errors and no files.
            return {
                "id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions",
                "input_file_id": batch.input_file_id, "completion_window": "24h",
                "status": "failed", "created_at": int(time.time()),
                "output_file_id": None, "error_file_id": None,
                "errors": {"object": "list", "data": [
                    {"code": "invalid_request", "line": 1, "message": batch.invalid,
                     "param": "body.model"}]},
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
            }  # fmt: skip
        ended = batch.step == len(_OPENAI_STATES) - 1
        status = "expired" if ended and batch.expired else _OPENAI_STATES[batch.step]
        answered = batch.results[: batch.answered] if batch.expired else batch.results
        if batch.canceled:
            # Canceled before any request ran: nothing answered, no files.
            status = "cancelled" if ended else "cancelling"
            return {
                "id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions",
                "input_file_id": batch.input_file_id, "completion_window": "24h",
                "status": status, "created_at": int(time.time()),
                "output_file_id": None, "error_file_id": None,
                "request_counts": {"total": len(batch.results), "completed": 0, "failed": 0},
            }  # fmt: skip
        good = [r for r in answered if r["response"]["status_code"] == 200]
        bad = [r for r in answered if r["response"]["status_code"] != 200]
        for result in batch.results[len(answered) :]:
            bad.append(
                {"id": result["id"], "custom_id": result["custom_id"], "response": None,
                 "error": {"code": "batch_expired", "message": "This request could not be "
                           "executed before the completion window expired."}}
            )  # fmt: skip
        output = error = None
        if ended:
            output, error = (
                self._store(f"{batch.id}-out", good),
                self._store(f"{batch.id}-err", bad),
            )
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "created_at": int(time.time()),
            "output_file_id": output,
            "error_file_id": error,
            "request_counts": {
                "total": len(batch.results),
                "completed": len(good) if ended else 0,
                "failed": len(bad) if ended else 0,
            },
        }

    def _store(self, file_id: str, lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return None
        with self.server.batch.lock:
            self.server.batch.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        return file_id

    # -- Anthropic ---------------------------------------------------------------------------

    def _create_anthropic(self, body: dict[str, Any]) -> None:
        custom_ids, results = [], []
        for request in body.get("requests", []):
            custom_ids.append(request["custom_id"])
            fault = self._line_fault()
            if fault is not None:
                kinds = {400: "invalid_request_error", 429: "rate_limit_error"}
                kind = kinds.get(fault, "api_error")
                result = {"type": "errored", "error": {"type": "error",
                          "error": {"type": kind, "message": "injected"}}}  # fmt: skip
            else:
                result = {"type": "succeeded", "message": self._message_payload(request["params"])}
            results.append({"custom_id": request["custom_id"], "result": result})
        batch = self._new_batch("anthropic", custom_ids, results)
        self._json(200, self._anthropic_object(batch))

    def _anthropic_batch(self, batch_id: str, *, advance: bool) -> None:
        batch = self.server.batch.batches.get(batch_id)
        if batch is None:
            self._json(404, _error_payload("no such batch", True))
            return
        if advance:
            self._advance(batch, 1)
        self._json(200, self._anthropic_object(batch))

    def _anthropic_lines(self, batch: FakeBatch) -> list[dict[str, Any]]:
        if batch.canceled:
            return [{"custom_id": r["custom_id"], "result": {"type": "canceled"}}
                    for r in batch.results]  # fmt: skip
        if not batch.expired:
            return batch.results
        cut = batch.answered or 0
        expired = [{"custom_id": r["custom_id"], "result": {"type": "expired"}}
                   for r in batch.results[cut:]]  # fmt: skip
        return batch.results[:cut] + expired

    def _anthropic_object(self, batch: FakeBatch) -> dict[str, Any]:
        ended = batch.step >= 1
        lines = self._anthropic_lines(batch)
        count = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for line in lines:
            count[line["result"]["type"] if ended else "processing"] += 1
        now = "2026-01-01T00:00:00Z"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended"
            if ended
            else ("canceling" if batch.canceled else "in_progress"),
            "request_counts": count,
            "created_at": now,
            "expires_at": now,
            "ended_at": now if ended else None,
            "archived_at": None,
            "cancel_initiated_at": now if batch.canceled else None,
            "results_url": f"{self.server.base_url}/v1/messages/batches/{batch.id}/results"
            if ended
            else None,
        }

    def _anthropic_results(self, batch_id: str) -> None:
        batch = self.server.batch.batches.get(batch_id)
        if batch is None or batch.step < 1:
            self._json(404, _error_payload("no results yet", True))
            return
        lines = self._anthropic_lines(batch)
        self._raw(200, "".join(json.dumps(x) + "\n" for x in lines).encode(), "application/binary")


def _file_object(file_id: str, data: bytes) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": len(data),
        "created_at": int(time.time()),
        "filename": "batch.jsonl",
        "purpose": "batch",
        "status": "processed",
    }


class FakeBatchServer(FakeLLMServer):
    """A :class:`FakeLLMServer` that also offers the batch endpoints (see the module doc)."""

    handler = _BatchHandler

    def __init__(self, *, batch_api: bool = True, **options: Any) -> None:
        super().__init__(**options)
        self.batch = BatchState()
        server: Any = self._server
        server.batch = self.batch
        server.batch_api = batch_api
        server.base_url = self.url

    @property
    def batches_created(self) -> int:
        with self.batch.lock:
            return self.batch.created

    def fail_next_requests(self, *statuses: int) -> None:
        """Give the next batch lines (in submission order) these HTTP error statuses."""
        with self.batch.lock:
            self.batch.fail_next.extend(statuses)

    def fail_next_batch_validation(self, message: str) -> None:
        """The next OpenAI batch fails validation with ``message`` (status ``failed``)."""
        with self.batch.lock:
            self.batch.invalid_next = message

    @property
    def files(self) -> list[str]:
        """The ids of the files stored now (uploaded inputs, outputs, error files)."""
        with self.batch.lock:
            return sorted(self.batch.files)

    def hold_batches(self) -> None:
        """Batches created from now on stay in progress until canceled."""
        with self.batch.lock:
            self.batch.hold = True

    def expire_next_batch(self, answered: int) -> None:
        """The next batch expires with only its first ``answered`` lines answered."""
        with self.batch.lock:
            self.batch.expire_next = answered
