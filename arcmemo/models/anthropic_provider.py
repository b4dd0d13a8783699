"""The ``anthropic`` provider: the Messages API over the official ``anthropic`` SDK.

* System messages become the ``system`` parameter.
* ``thinking_budget`` turns on extended thinking (``budget_tokens``); ``max_tokens`` then
  caps thinking plus answer, so it must exceed the budget; temperature is not sent.
* Prompt caching: a ``cache_control`` breakpoint goes on the end of the system prompt and
  on each message marked ``cache_breakpoint=True`` (the last three). When no message is
  marked, the end of the conversation before the final message is the stable prefix.
  This way a long shared prefix (instructions + memory) is billed in full only once.
* ``n > 1`` becomes parallel single requests (the API samples one answer per request).
* ``response_format``, ``seed`` and ``reasoning_effort`` are not part of this API and are
  ignored.

Options (``--model-arg key=value``, see :class:`AnthropicOptions`): ``base_url`` (default
``ANTHROPIC_BASE_URL``), ``api_key_env`` (default ``ANTHROPIC_API_KEY``; a local base URL may
go without), ``max_tokens`` (default cap when a call gives none, 8192), ``prompt_cache``
(true/false), ``timeout_s`` (SDK safety net; the client enforces ``ModelConfig.timeout_s``);
unknown options are an error. SDK retries are disabled; the client's retry loop is the only
one.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import anthropic
from pydantic import Field

from arcmemo.core.tokens import Usage
from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    Provider,
    ProviderError,
    RetryDecision,
)
from arcmemo.models.batch_anthropic import AnthropicBatchBackend
from arcmemo.models.redact import public_url
from arcmemo.models.registry import register_provider
from arcmemo.models.sdk_support import SdkOptions, map_sdk_error, read_api_key

BASE_URL_ENV = "ANTHROPIC_BASE_URL"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
_DEFAULT_MAX_TOKENS = 8192
_MESSAGE_BREAKPOINTS = 3  # the API allows 4 in all; one is kept for the system prompt
_EPHEMERAL = {"type": "ephemeral"}


class AnthropicOptions(SdkOptions):
    """Options of the ``anthropic`` provider."""

    api_key_env: str = Field(
        default=DEFAULT_KEY_ENV,
        description="Environment variable holding the API key (a local base URL needs none).",
    )
    max_tokens: int = Field(
        default=_DEFAULT_MAX_TOKENS,
        description="Cap on generated tokens when a call sets none (the API requires one).",
    )
    prompt_cache: bool = Field(
        default=True,
        description="Mark the stable prompt prefix for Anthropic's prompt caching.",
    )


@register_provider("anthropic", options=AnthropicOptions)
class AnthropicProvider(Provider):
    """Claude models through the Messages API."""

    supports_n = False

    def __init__(self, options: AnthropicOptions, *, model: str) -> None:
        super().__init__(model)
        self.base_url = options.base_url or os.environ.get(BASE_URL_ENV) or None
        self._api_key = read_api_key(options.api_key_env, self.name, self.base_url)
        self.default_max_tokens = options.max_tokens
        self.prompt_cache = options.prompt_cache
        self._client = anthropic.AsyncAnthropic(
            api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=options.timeout_s
        )

    def cache_identity(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "base_url": public_url(self.base_url)}

    def request_body(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        """The Messages API arguments for one sample."""
        system = [m for m in messages if m.role == "system"]
        turns = [m for m in messages if m.role != "system"]
        marked = self._breakpoints(turns)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": params.max_tokens or self.default_max_tokens,
            "messages": [
                {"role": turn.role, "content": _content(turn.content, index in marked)}
                for index, turn in enumerate(turns)
            ],
        }
        if system:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content} for m in system]
            if self.prompt_cache:
                blocks[-1]["cache_control"] = dict(_EPHEMERAL)
            body["system"] = blocks
        if params.stop:
            body["stop_sequences"] = list(params.stop)
        extra: dict[str, Any] = {}
        if params.thinking_budget:
            if body["max_tokens"] <= params.thinking_budget:
                raise ProviderError(
                    f"{self.name}: max_tokens ({body['max_tokens']}) must exceed the thinking "
                    f"budget ({params.thinking_budget}); it caps thinking plus answer",
                    decision=RetryDecision.NO,
                )
            body["thinking"] = {"type": "enabled", "budget_tokens": params.thinking_budget}
        elif params.temperature is not None:
            extra["temperature"] = params.temperature
        if extra:
            # Sent as raw body fields: not every SDK version names them as arguments.
            body["extra_body"] = extra
        return body

    def _breakpoints(self, turns: list[Message]) -> set[int]:
        if not self.prompt_cache:
            return set()
        marked = [index for index, turn in enumerate(turns) if turn.cache_breakpoint]
        if not marked and len(turns) >= 2:
            marked = [len(turns) - 2]
        return set(marked[-_MESSAGE_BREAKPOINTS:])

    async def generate(self, messages: list[Message], params: GenerateParams) -> list[Completion]:
        body = self.request_body(messages, params)
        return list(await asyncio.gather(*(self._call(body) for _ in range(params.n))))

    async def _call(self, body: dict[str, Any]) -> Completion:
        try:
            response = await self._client.messages.create(**body)
        except Exception as error:
            raise map_sdk_error(error, anthropic, self.name, self._api_key) from error
        return completion_of_message(response)

    # -- Message Batches (arcmemo.models.batch_anthropic) ----------------------------------

    def batch_params(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        """The ``params`` of one batch request: the synchronous request's body, with the
        SDK's ``extra_body`` merged in as plain fields."""
        body = self.request_body(messages, params)
        extra = body.pop("extra_body", None) or {}
        return {**body, **extra}

    def batch_backend(self) -> Any:
        """Message Batches, driven through the provider's own SDK client."""
        return AnthropicBatchBackend(self, self._client, completion_of_message)

    async def aclose(self) -> None:
        await self._client.close()


def completion_of_message(response: Any) -> Completion:
    """The completion of one Messages API response (synchronous or from a batch)."""
    texts, thoughts = [], []
    for block in getattr(response, "content", None) or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "thinking":
            thoughts.append(block.thinking)
    return Completion(
        text="".join(texts),
        reasoning="\n".join(thoughts) or None,
        finish_reason=getattr(response, "stop_reason", None),
        usage=_usage(getattr(response, "usage", None)),
        response_id=getattr(response, "id", None),
    )


def _content(text: str, breakpoint_here: bool) -> str | list[dict[str, Any]]:
    if not breakpoint_here:
        return text
    return [{"type": "text", "text": text, "cache_control": dict(_EPHEMERAL)}]


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return Usage(
        # input_tokens excludes cached and cache-written tokens; prompt_tokens counts all.
        prompt_tokens=(usage.input_tokens or 0) + read + written,
        completion_tokens=usage.output_tokens or 0,
        cached_tokens=read,
        cache_write_tokens=written,
    )
