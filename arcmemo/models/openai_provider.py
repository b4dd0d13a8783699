"""The ``openai`` provider: Chat Completions against any OpenAI-compatible base URL.

One module serves OpenAI itself and local servers (vLLM, SGLang, llama.cpp's server,
Ollama): the base URL comes from ``base_url`` (``--base-url``) or ``OPENAI_BASE_URL``.

Options (``--model-arg key=value``, see :class:`OpenAIOptions`): ``base_url``,
``api_key_env`` (default ``OPENAI_API_KEY``; for a base URL on this machine a missing key is
replaced by a dummy, since local servers ignore it; anywhere else a missing key fails
fast), ``reasoning_model`` (force the reasoning-model request shape on or off; by default
on for o-series and ``gpt-5*`` models: they take ``max_completion_tokens`` and no
``temperature``), ``timeout_s`` (the SDK's own request timeout, a safety net;
:class:`~arcmemo.models.client.ModelClient` enforces ``ModelConfig.timeout_s``). Unknown
options are an error, so a misspelt ``--model-arg`` is not silently ignored.

SDK retries are disabled (``max_retries=0``); the client's retry loop is the only one.
``thinking_budget`` is Anthropic-only and ignored here.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import warnings
from typing import Any

import openai
from pydantic import Field, field_validator

from arcmemo.core.tokens import Usage
from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    Provider,
    ProviderError,
    RequestReport,
    RetryDecision,
    report_request,
)
from arcmemo.models.context import PROMPT_TOO_LONG, window_from_models, window_from_props
from arcmemo.models.endpoints import (
    EndpointOptions,
    EndpointPool,
    key_url,
    openai_endpoint_failed,
    split_urls,
)
from arcmemo.models.redact import public_url
from arcmemo.models.registry import register_provider
from arcmemo.models.sdk_support import SdkOptions, map_sdk_error, read_api_key

BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_REASONING_MODEL = re.compile(r"^(o\d+(-|$)|gpt-5)")
_N_REJECTED_STATUSES = frozenset({400, 422})


def is_reasoning_model(model: str) -> bool:
    """o-series and gpt-5 models take max_completion_tokens and no temperature."""
    return bool(_REASONING_MODEL.match(model.rsplit("/", 1)[-1].lower()))


class OpenAIOptions(SdkOptions, EndpointOptions):
    """Options of the ``openai`` provider."""

    api_key_env: str = Field(
        default=DEFAULT_KEY_ENV,
        description="Environment variable holding the API key (a local base URL needs none).",
    )
    reasoning_model: bool | None = Field(
        default=None,
        description="Force the reasoning-model request shape (max_completion_tokens, no "
        "temperature) on or off; default: on for o-series and gpt-5 models.",
    )
    top_p: float | None = Field(default=None, ge=0, le=1, description="Nucleus sampling.")
    top_k: int | None = Field(
        default=None, ge=1, description="Top-k sampling (vLLM, SGLang, llama.cpp, Ollama)."
    )
    seed: int | None = Field(
        default=None, description="Sampling seed when the run gives none (--sampling-seed)."
    )
    stop: list[str] | None = Field(
        default=None, description='Stop strings, as JSON (stop=["###"]).'
    )
    chat_template_kwargs: dict[str, Any] | None = Field(
        default=None,
        description="Chat-template arguments for vLLM/SGLang, as JSON (chat_template_kwargs="
        '{"enable_thinking": false} turns Qwen3 thinking off).',
    )
    extra_body: dict[str, Any] | None = Field(
        default=None,
        description="Any further JSON fields of the request body (server-specific options).",
    )

    @field_validator("stop", "chat_template_kwargs", "extra_body", mode="before")
    @classmethod
    def _json_text(cls, value: Any) -> Any:
        # --model-arg values arrive as text; these options are JSON.
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError as error:
                raise ValueError(f"not valid JSON ({error.msg})") from None
        return value


@register_provider(
    "openai", options=OpenAIOptions, summary="Chat Completions on any OpenAI-compatible endpoint"
)
class OpenAIProvider(Provider):
    """Chat Completions over the official ``openai`` SDK."""

    def __init__(self, options: OpenAIOptions, *, model: str) -> None:
        super().__init__(model)
        self.base_url = options.base_url or os.environ.get(BASE_URL_ENV) or None
        self._api_key = read_api_key(options.api_key_env, self.name, key_url(self.base_url))
        self.options = options
        self.reasoning_model = (
            is_reasoning_model(model)
            if options.reasoning_model is None
            else options.reasoning_model
        )
        # Learned at run time: a server that rejected n > 1 gets single calls from then on.
        self.n_supported = True
        # Several comma-separated base URLs are replicas of one deployment (endpoints.py).
        self._endpoints = EndpointPool(
            split_urls(self.base_url),
            lambda url: openai.AsyncOpenAI(
                api_key=self._api_key, base_url=url, max_retries=0, timeout=options.timeout_s
            ),
            failed=openai_endpoint_failed,
            concurrency=options.endpoint_concurrency,
            cooldown_s=options.endpoint_cooldown_s,
        )
        self._client = self._endpoints.clients[0]

    def cache_identity(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "base_url": self._endpoints.identity}

    async def server_context_window(self) -> int | None:
        """llama.cpp's ``/props`` (at the server's root) or ``/v1/models``, where either
        reports the window; a server that answers neither is asked nothing more."""
        import httpx

        base = split_urls(self.base_url)[0] if self.base_url else None
        if base is None:
            return None  # api.openai.com reports no window: the packaged table knows it
        base = base.rstrip("/")
        root = base[: -len("/v1")] if base.endswith("/v1") else base
        headers = {"Authorization": f"Bearer {self._api_key}"}
        async with httpx.AsyncClient(timeout=10, headers=headers) as client:
            for url, read in (
                (f"{root}/props", window_from_props),
                (f"{base}/models", lambda data: window_from_models(data, self.model)),
            ):
                try:
                    response = await client.get(url)
                    window = read(response.json()) if response.status_code == 200 else None
                except (httpx.HTTPError, ValueError):
                    window = None
                if window is not None:
                    return window
        return None

    def request_body(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        """The Chat Completions arguments for ``messages`` and ``params``."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        if params.n > 1:
            body["n"] = params.n
        if params.max_tokens is not None:
            body["max_completion_tokens" if self.reasoning_model else "max_tokens"] = (
                params.max_tokens
            )
        if params.temperature is not None and not self.reasoning_model:
            body["temperature"] = params.temperature
        options = self.options
        stop = list(params.stop) if params.stop else options.stop
        if stop:
            body["stop"] = stop
        if params.reasoning_effort is not None:
            body["reasoning_effort"] = params.reasoning_effort
        if params.response_format is not None:
            body["response_format"] = params.response_format
        seed = params.seed if params.seed is not None else options.seed
        if seed is not None:
            body["seed"] = seed
        if options.top_p is not None and not self.reasoning_model:
            body["top_p"] = options.top_p
        extra = dict(options.extra_body or {})
        if options.top_k is not None:
            extra["top_k"] = options.top_k
        if options.chat_template_kwargs is not None:
            extra["chat_template_kwargs"] = options.chat_template_kwargs
        if extra:
            body["extra_body"] = extra
        return body

    async def generate(self, messages: list[Message], params: GenerateParams) -> list[Completion]:
        if params.n > 1 and not self.n_supported:
            return await self._single_calls(messages, params, 0, params.n)
        try:
            completions = await self._call(messages, params)
        except ProviderError as error:
            if (
                params.n == 1
                or error.status not in _N_REJECTED_STATUSES
                or error.kind == PROMPT_TOO_LONG
            ):
                raise
            # Some servers reject n > 1; if single calls work, the n was the problem.
            completions = await self._single_calls(messages, params, 0, params.n)
            self.n_supported = False
            return completions
        if len(completions) < params.n:  # a server that silently ignored n
            self._ignores_n(len(completions), params.n)
            completions += await self._single_calls(
                messages, params, len(completions), params.n - len(completions)
            )
        return completions[: params.n]

    def _ignores_n(self, answered: int, asked: int) -> None:
        """Said once: requests for several samples go out one per sample from now on."""
        self.n_supported = False
        where = f" at {public_url(self.base_url)}" if self.base_url else ""
        warnings.warn(
            f"{self.name}: the server{where} answered {answered} choice(s) where n={asked} "
            "asked for more: it ignores n; every further sample is a request of its own "
            "(with seed S+i where a seed is set)",
            stacklevel=3,
        )

    async def _single_calls(
        self, messages: list[Message], params: GenerateParams, first: int, count: int
    ) -> list[Completion]:
        """``count`` one-sample requests for samples ``first`` .. ``first + count - 1``:
        sample i is seeded S+i, as the client seeds a request that starts at sample i, so
        seeded follow-ups are neither copies of each other nor of the first answer."""

        def single(index: int) -> GenerateParams:
            seed = None if params.seed is None else params.seed + index
            return params.model_copy(update={"n": 1, "seed": seed})

        # Every request ends before a failure is raised, so each is reported while the
        # client still collects this attempt's requests (and none is left running).
        batches = await asyncio.gather(
            *(self._call(messages, single(first + i), first=first + i) for i in range(count)),
            return_exceptions=True,
        )
        for batch in batches:
            if isinstance(batch, BaseException):
                raise batch
        return [completion for batch in batches if isinstance(batch, list) for completion in batch]

    async def _call(
        self, messages: list[Message], params: GenerateParams, *, first: int = 0
    ) -> list[Completion]:
        """One HTTP request for samples ``first`` .. of the call, reported to the client
        (:func:`~arcmemo.models.base.report_request`) whether it answers or fails."""
        started = time.monotonic()
        seed = params.seed if params.seed is not None else self.options.seed
        try:
            body = self.request_body(messages, params)
            raw = await self._endpoints.call(
                lambda client: client.chat.completions.with_raw_response.create(**body)
            )
            response = raw.parse()
            completions = self._completions(response)
        except asyncio.CancelledError:
            # Timed out by the client (or the run stopped): the server got it all the same.
            report_request(
                RequestReport(seed=seed, latency_s=time.monotonic() - started, error="cancelled")
            )
            raise
        except Exception as error:
            failure = (
                error
                if isinstance(error, ProviderError)
                else map_sdk_error(error, openai, self.name, self._api_key)
            )
            report_request(
                RequestReport(
                    seed=seed,
                    latency_s=time.monotonic() - started,
                    status=failure.status,
                    error=str(failure),
                )
            )
            if failure is error:
                raise
            raise failure from error
        cost = gateway_cost(getattr(response, "usage", None), getattr(raw, "headers", {}))
        if cost is not None and completions:
            completions[0].cost_usd = cost  # like usage: once per response
        latency = time.monotonic() - started
        for completion in completions:
            completion.latency_s = latency
        report_request(
            RequestReport(
                positions=list(range(first, first + len(completions))),
                seed=seed,
                usage=completions[0].usage if completions else _usage(None),
                cost_usd=cost,
                latency_s=latency,
                status=getattr(raw, "status_code", None) or 200,
            )
        )
        return completions

    def _completions(self, response: Any) -> list[Completion]:
        choices = getattr(response, "choices", None)
        if not choices:
            # An empty answer is usually a server hiccup: worth another try.
            raise ProviderError(
                f"{self.name}: response without choices", decision=RetryDecision.TRANSIENT
            )
        usage = _usage(getattr(response, "usage", None))
        completions = []
        for position, choice in enumerate(sorted(choices, key=lambda c: c.index or 0)):
            message = choice.message
            reasoning = getattr(message, "reasoning_content", None) or getattr(
                message, "reasoning", None
            )
            completions.append(
                Completion(
                    text=message.content or "",
                    reasoning=reasoning if isinstance(reasoning, str) else None,
                    finish_reason=choice.finish_reason,
                    # The response reports usage once for all choices; it goes on the first.
                    usage=usage if position == 0 else Usage(),
                    response_id=getattr(response, "id", None),
                )
            )
        return completions

    # -- the Batch API (arcmemo.models.batch_openai) ------------------------------------------

    def batch_body(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        """The JSON body of one ``/v1/chat/completions`` line of a batch: the request the
        synchronous path sends, with the SDK's ``extra_body`` merged in as plain fields."""
        body = self.request_body(messages, params)
        extra = body.pop("extra_body", None) or {}
        return {**body, **extra}

    def batch_completions(self, body: dict[str, Any]) -> list[Completion]:
        """The completions of one answered batch line (its ``response.body``)."""
        from openai.types.chat import ChatCompletion

        try:
            response = ChatCompletion.model_validate(body)
        except ValueError as error:
            raise ProviderError(
                f"{self.name}: malformed batch response: {error}",
                decision=RetryDecision.TRANSIENT,
            ) from error
        return self._completions(response)

    def batch_backend(self) -> Any:
        """This endpoint's Batch API, driven through the provider's own SDK client."""
        from arcmemo.models.batch_openai import OpenAIBatchBackend

        return OpenAIBatchBackend(self, self._client)

    async def aclose(self) -> None:
        for client in self._endpoints.clients:
            await client.close()


def gateway_cost(usage: Any, headers: Any) -> float | None:
    """The request's cost in USD where a gateway reports it: OpenRouter's ``usage.cost``,
    LiteLLM's ``x-litellm-response-cost`` header; None elsewhere."""
    cost = getattr(usage, "cost", None)
    if cost is None and usage is not None:
        cost = (getattr(usage, "model_extra", None) or {}).get("cost")
    if cost is None:
        cost = headers.get("x-litellm-response-cost") if hasattr(headers, "get") else None
    try:
        return float(cost) if cost is not None else None
    except (TypeError, ValueError):
        return None


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    completion_details = getattr(usage, "completion_tokens_details", None)
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    return Usage(
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        reasoning_tokens=getattr(completion_details, "reasoning_tokens", None) or 0,
        cached_tokens=getattr(prompt_details, "cached_tokens", None) or 0,
    )
