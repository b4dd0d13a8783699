"""The one interface every model provider implements, and the records it returns.

A provider turns a list of chat messages into ``n`` completions. Everything around it
(cache, retries, rate limits, accounting, call logs) lives in :mod:`arcmemo.models.client`
so that a provider module only speaks its wire format.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from enum import Enum
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.core.tokens import Usage

Role = Literal["system", "user", "assistant"]


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Role = Field(description="Who speaks: system, user or assistant.")
    content: str = Field(description="The message text.")
    cache_breakpoint: bool = Field(
        default=False,
        description=(
            "Marks the end of a stable prompt prefix (e.g. instructions + memory) that "
            "providers with prompt caching may cache; ignored by the others."
        ),
    )


class Completion(BaseModel):
    """One generated answer with what it cost."""

    text: str = Field(description="The generated text (final answer channel).")
    reasoning: str | None = Field(
        default=None,
        description="Visible reasoning or thinking text, when the provider returns it.",
    )
    finish_reason: str | None = Field(
        default=None, description="Why generation stopped (stop, length, ...)."
    )
    usage: Usage = Field(default_factory=Usage, description="Token counts of this completion.")
    latency_s: float = Field(default=0.0, description="Wall time of the request that produced it.")
    response_id: str | None = Field(
        default=None, description="The provider's id of the raw response."
    )
    cache_hit: bool = Field(
        default=False, description="True when served from arcmemo's response cache."
    )
    cost_usd: float | None = Field(
        default=None,
        description="What the provider or gateway says this completion cost (OpenRouter, "
        "LiteLLM), or its batch price for an answer of a provider batch; None = priced from "
        "the price table.",
    )
    stats: dict[str, Any] = Field(
        default_factory=dict,
        description="Provider-specific statistics (e.g. JetSpec acceptance lengths, tokens/s).",
    )


class GenerateParams(BaseModel):
    """Sampling parameters of one request; part of the cache key."""

    model_config = ConfigDict(frozen=True)

    n: int = Field(default=1, ge=1, description="Number of completions wanted.")
    temperature: float | None = Field(
        default=None, description="Sampling temperature; None = provider default."
    )
    max_tokens: int | None = Field(default=None, description="Cap on generated tokens.")
    stop: tuple[str, ...] | None = Field(default=None, description="Stop strings.")
    reasoning_effort: str | None = Field(
        default=None, description="low | medium | high for reasoning models."
    )
    thinking_budget: int | None = Field(
        default=None, description="Extended-thinking token budget (Anthropic); None = off."
    )
    response_format: dict[str, Any] | None = Field(
        default=None, description="Structured-output request (OpenAI response_format JSON)."
    )
    seed: int | None = Field(
        default=None, description="Sampling seed, where the provider honours it."
    )


class RequestReport(BaseModel):
    """One HTTP request a provider sent for a ``generate`` call, as the provider saw it.

    A provider that may send several requests for one call (a server that ignored or
    rejected ``n`` gets follow-ups) reports each with :func:`report_request`, so that the
    client logs one ``calls.jsonl`` line per request the server received."""

    positions: list[int] = Field(
        default_factory=list,
        description="Which of the call's samples (0 .. n-1 of its params) this request "
        "answered, in the order of its choices; empty when it failed.",
    )
    seed: int | None = Field(default=None, description="The seed the request carried.")
    usage: Usage = Field(default_factory=Usage, description="The response's token counts.")
    cost_usd: float | None = Field(
        default=None, description="The gateway's own cost figure for it, where reported."
    )
    latency_s: float = Field(default=0.0, description="Wall time of the request.")
    status: int | None = Field(
        default=None, description="HTTP status where known (200 for an answer)."
    )
    error: str | None = Field(default=None, description="Why it failed; None = answered.")


_requests: ContextVar[list[RequestReport] | None] = ContextVar("arcmemo_requests", default=None)


@contextlib.contextmanager
def collect_requests() -> Iterator[list[RequestReport]]:
    """The requests providers report (:func:`report_request`) inside this block, in the
    current task and the tasks it starts."""
    reports: list[RequestReport] = []
    token = _requests.set(reports)
    try:
        yield reports
    finally:
        _requests.reset(token)


def report_request(report: RequestReport) -> None:
    """Tell the client collecting requests (if any) that one HTTP request went out."""
    reports = _requests.get()
    if reports is not None:
        reports.append(report)


class SamplingConfig(BaseModel):
    """Sampling parameters of one model role (solver, aux); None = the provider's default."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(default=None, description="None = provider default.")
    max_tokens: int | None = Field(default=None, description="Cap on generated tokens.")
    reasoning_effort: str | None = Field(
        default=None, description="low | medium | high (reasoning models)."
    )
    thinking_budget: int | None = Field(
        default=None, description="Anthropic extended-thinking budget."
    )


class RetryDecision(str, Enum):
    """How the client should treat a failed request."""

    NO = "no"
    TRANSIENT = "transient"
    RATE_LIMIT = "rate_limit"


class ProviderError(Exception):
    """A provider failure, classified for the retry loop.

    ``retry_after`` is the server's requested wait in seconds, when it sent one. ``kind``
    groups failures for error summaries and the client's circuit breaker: ``HTTP <status>``,
    ``connection``, ``timeout`` or ``error``.
    """

    def __init__(
        self,
        message: str,
        *,
        decision: RetryDecision = RetryDecision.NO,
        retry_after: float | None = None,
        status: int | None = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(message)
        self.decision = decision
        self.retry_after = retry_after
        self.status = status
        self.kind = kind or (f"HTTP {status}" if status is not None else "error")


class MissingCredentialError(ProviderError):
    """An API key is needed and its environment variable is not set."""

    def __init__(self, variable: str, provider: str) -> None:
        super().__init__(
            f"{provider}: environment variable {variable} is not set; "
            f"export {variable}=... (the key is read from the environment only)"
        )
        self.variable = variable


class ProviderOptions(BaseModel):
    """Base of a provider's options model: the ``--model-arg key=value`` options it takes.

    Values arrive as strings from the command line and are coerced by pydantic ("0.3" to a
    float, "true" to a bool); an unknown key is an error, so a typo is never ignored.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class Provider(abc.ABC):
    """A model behind one wire protocol.

    Implementations are registered with :func:`arcmemo.models.registry.register_provider`
    (with their options model) and created from a ``provider:model`` spec by
    :func:`arcmemo.models.registry.create_provider`.
    """

    name: ClassVar[str]  # set by the registry: the name it is registered under
    # False when the API samples one answer per request: the client then sends n single
    # requests, each retried and cached on its own.
    supports_n: ClassVar[bool] = True
    # True when the provider queues requests itself (a local engine) and enforces the
    # client's timeout from the moment it starts one, so queue time is not counted.
    timeout_excludes_queue: ClassVar[bool] = False
    # Such a provider's per-request timeout, handed over by the client (None: no limit).
    request_timeout_s: float | None = None
    # True when the provider decodes greedily unless told a temperature (local engines):
    # a run with several attempts then samples, so that attempts can differ.
    greedy_by_default: ClassVar[bool] = False
    # Numeric keys of Completion.stats that identify rather than measure (an engine index):
    # never aggregated into usage statistics.
    stat_labels: ClassVar[frozenset[str]] = frozenset()
    # The window given as --model-arg context_window=N (set by create_provider): it wins
    # over what the server or the packaged table says.
    context_window: int | None = None

    def __init__(self, model: str) -> None:
        self.model = model

    @property
    def spec(self) -> str:
        """The ``provider:model`` name of this model."""
        return f"{self.name}:{self.model}"

    @abc.abstractmethod
    async def generate(self, messages: list[Message], params: GenerateParams) -> list[Completion]:
        """Return ``params.n`` completions for ``messages``.

        Raise :class:`ProviderError` (with a retry decision) on failure.
        """

    async def server_context_window(self) -> int | None:
        """The context window the model's server reports, where it reports one (asked
        once per run by :meth:`ModelClient.context_window`); None: it does not say."""
        return None

    def statistics(self, completion: Completion) -> dict[str, float]:
        """The numeric statistics of ``completion`` worth aggregating (labels left out)."""
        return {
            key: float(value)
            for key, value in completion.stats.items()
            if isinstance(value, int | float)
            and not isinstance(value, bool)
            and key not in self.stat_labels
        }

    def cache_identity(self) -> dict[str, Any]:
        """What, besides messages and params, makes an answer differ (part of the cache key).

        Never include secrets here.
        """
        return {"provider": self.name, "model": self.model}

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release clients, threads or devices."""
