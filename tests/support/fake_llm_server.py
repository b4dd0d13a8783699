"""A small threaded HTTP server on 127.0.0.1 speaking the Chat Completions and Messages
wire formats, with injectable faults. Used by the provider tests and by
``experiments/bench_concurrency.py``; it never leaves the machine.

Answers are deterministic: ``reply to <last user text> #<choice index>``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = ("429", "500", "529", "hang", "malformed", "400", "401")
_GATE_TIMEOUT_S = 5.0
_HANG_TIMEOUT_S = 30.0


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    fault: str | None


@dataclass
class ServerState:
    latency_s: float = 0.0
    gate: int | None = None
    reject_n: bool = False
    # Answer one choice whatever n asks (as llama.cpp's server does).
    ignore_n: bool = False
    faults: deque[str] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    # Answers a Chat Completions request's (messages, choice index) in place of the echo.
    respond: Callable[[list[dict[str, Any]], int], str] | None = None
    gets: list[str] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    anthropic_cached_prefixes: set[str] = field(default_factory=set)
    # Gateways' own cost reports: OpenRouter's usage.cost, LiteLLM's response header.
    usage_cost: float | None = None
    cost_header: str | None = None
    # A context window (counted in words, as usage is): reported where window_via says
    # (llama.cpp's /props or /v1/models), and a longer prompt is refused with llama.cpp's
    # HTTP 400. cut_at_max_tokens: answers longer than max_tokens words end 'length'.
    n_ctx: int | None = None
    window_via: str | None = None
    cut_at_max_tokens: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    gate_open: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


def _words(text: str) -> int:
    return len(text.split())


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(block.get("text", "") for block in content if isinstance(block, dict))


def _reply(messages: list[dict[str, Any]], index: int) -> str:
    users = [_text_of(m["content"]) for m in messages if m.get("role") == "user"]
    return f"reply to {users[-1] if users else ''} #{index}"


def _error_payload(message: str, anthropic: bool) -> dict[str, Any]:
    if anthropic:
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def do_GET(self) -> None:
        state = self.server.state
        with state.lock:  # apart from requests: those are the completions asked for
            state.gets.append(self.path)
        path = self.path.rstrip("/")
        if path == "/props" and state.window_via == "props":
            payload: dict[str, Any] = {"default_generation_settings": {"n_ctx": state.n_ctx}}
        elif path == "/v1/models" and state.window_via == "models":
            payload = {"object": "list", "data": [{"id": "m", "max_model_len": state.n_ctx}]}
        elif path == "/v1/models":
            payload = {"object": "list", "data": [{"id": "m", "object": "model"}]}
        else:
            self._error(404, "not found", False, {})
            return
        self._send(200, json.dumps(payload).encode(), {})

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("content-length", 0))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        with state.lock:
            fault = state.faults.popleft() if state.faults else None
            state.requests.append(
                RecordedRequest(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body, fault
                )
            )
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
            if state.gate is not None and state.in_flight >= state.gate:
                state.gate_open.set()
        try:
            if state.gate is not None:
                state.gate_open.wait(_GATE_TIMEOUT_S)
            if state.latency_s:
                time.sleep(state.latency_s)
            self._respond(body, fault)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. after its timeout)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _respond(self, body: dict[str, Any], fault: str | None) -> None:
        anthropic = self.path.rstrip("/").endswith("/messages")
        if fault == "hang":
            self.server.state.release.wait(_HANG_TIMEOUT_S)
        elif fault == "malformed":
            self._send(200, b'{"id": "broken", "choices": [ {not json', {})
            return
        elif fault is not None:
            status = int(fault)
            headers = {"retry-after": "1"} if status == 429 else {}
            detail = f"injected {status}"
            if status == 401:
                # Real servers echo part of a bad key; the client must keep it out of logs.
                sent = self.headers.get("authorization") or self.headers.get("x-api-key")
                detail += f": bad key {sent}"
            self._error(status, detail, anthropic, headers)
            return
        if anthropic:
            self._messages(body)
        else:
            self._chat(body)

    def _chat(self, body: dict[str, Any]) -> None:
        status, payload, headers = self._chat_result(body)
        self._send(status, json.dumps(payload).encode(), headers)

    def _chat_result(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(status, JSON body, headers) of a Chat Completions request (a batch's line too)."""
        n = 1 if self.server.state.ignore_n else int(body.get("n") or 1)
        if self.server.state.reject_n and n > 1:
            return 400, _error_payload("n > 1 is not supported by this server", False), {}
        messages = body.get("messages", [])
        prompt = sum(_words(_text_of(m["content"])) for m in messages)
        state = self.server.state
        if state.n_ctx is not None and prompt > state.n_ctx:
            message = (
                f"request ({prompt} tokens) exceeds the available context size "
                f"({state.n_ctx} tokens), try increasing it"
            )
            return 400, _error_payload(message, False), {}
        limit = body.get("max_tokens") if state.cut_at_max_tokens else None
        choices = []
        completion_tokens = 0
        for index in range(n):
            respond = self.server.state.respond
            text = respond(messages, index) if respond else _reply(messages, index)
            finish = "stop"
            if limit is not None and _words(text) > limit:
                text, finish = " ".join(text.split()[:limit]), "length"
            completion_tokens += _words(text)
            choices.append(
                {
                    "index": index,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                }
            )
        payload = {
            "id": f"chatcmpl-{len(self.server.state.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "unknown"),
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
        }
        if state.usage_cost is not None:
            payload["usage"]["cost"] = state.usage_cost
        headers = {"x-litellm-response-cost": state.cost_header} if state.cost_header else {}
        return 200, payload, headers

    def _messages(self, body: dict[str, Any]) -> None:
        self._send(200, json.dumps(self._message_payload(body)).encode(), {})

    def _message_payload(self, body: dict[str, Any]) -> dict[str, Any]:
        """The JSON body answering a Messages request (a batch's request too)."""
        state = self.server.state
        messages = body.get("messages", [])
        system = body.get("system") or []
        blocks = [{"text": system}] if isinstance(system, str) else list(system)
        for message in messages:
            content = message["content"]
            blocks.extend([{"text": content}] if isinstance(content, str) else content)
        prompt = sum(_words(block.get("text", "")) for block in blocks)
        # Simulate prompt caching: the text up to the last cache_control mark.
        marks = [i for i, block in enumerate(blocks) if block.get("cache_control")]
        cache_read = cache_write = 0
        if marks:
            prefix_blocks = blocks[: marks[-1] + 1]
            prefix = "\n".join(block.get("text", "") for block in prefix_blocks)
            with state.lock:
                seen = prefix in state.anthropic_cached_prefixes
                state.anthropic_cached_prefixes.add(prefix)
            if seen:
                cache_read = _words(prefix)
            else:
                cache_write = _words(prefix)
        text = _reply(messages, 0)
        content: list[dict[str, Any]] = []
        if (body.get("thinking") or {}).get("type") == "enabled":
            content.append({"type": "thinking", "thinking": "let me think", "signature": "sig"})
        content.append({"type": "text", "text": text})
        payload = {
            "id": f"msg_{len(state.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "unknown"),
            "content": content,
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt - cache_read - cache_write,
                "output_tokens": _words(text),
                "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": cache_write,
            },
        }
        return payload

    def _error(self, status: int, message: str, anthropic: bool, headers: dict[str, str]) -> None:
        self._send(status, json.dumps(_error_payload(message, anthropic)).encode(), headers)

    def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    state: ServerState


class FakeLLMServer:
    """Start with ``with FakeLLMServer() as server:``; point SDKs at ``server.url``."""

    handler: type[_Handler] = _Handler

    def __init__(self, *, latency_s: float = 0.0, gate: int | None = None) -> None:
        self.state = ServerState(latency_s=latency_s, gate=gate)
        self._server = _Server(("127.0.0.1", 0), self.handler)
        self._server.state = self.state
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL of the server (Anthropic SDKs append ``/v1/messages``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL for OpenAI SDKs (they append ``/chat/completions``)."""
        return f"{self.url}/v1"

    def inject(self, *faults: str) -> None:
        """Queue one-shot faults, applied to the next requests in arrival order."""
        for fault in faults:
            if fault not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}; known: {FAULTS}")
        with self.state.lock:
            self.state.faults.extend(faults)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self.state.lock:
            return list(self.state.requests)

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.state.release.set()
        self.state.gate_open.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
