"""Helpers shared by the SDK-backed providers: options, credentials, base URLs, errors.

Both official SDKs (``openai``, ``anthropic``) share one exception layout
(``APIStatusError`` with ``status_code`` and ``response``, ``APITimeoutError``,
``APIConnectionError``), so one mapping serves both; the SDK module is passed in so
this module imports neither.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from types import ModuleType
from urllib.parse import urlsplit

from pydantic import Field

from arcmemo.models.base import (
    MissingCredentialError,
    ProviderError,
    ProviderOptions,
    RetryDecision,
)
from arcmemo.models.context import PROMPT_TOO_LONG, is_context_overflow
from arcmemo.models.redact import redact

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})
# Local OpenAI-compatible servers (vLLM, SGLang, llama.cpp, Ollama) accept any key.
LOCAL_DUMMY_KEY = "local-server-needs-no-key"
# A safety net only: ModelClient enforces ModelConfig.timeout_s around every request.
DEFAULT_SDK_TIMEOUT_S = 3600.0
_TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class SdkOptions(ProviderOptions):
    """Options every SDK-backed provider takes (each adds ``api_key_env`` with its default)."""

    base_url: str | None = Field(
        default=None,
        description="API base URL (--base-url); default: the provider's environment variable.",
    )
    timeout_s: float = Field(
        default=DEFAULT_SDK_TIMEOUT_S,
        description="The SDK's own request timeout, a safety net (the client enforces its own).",
    )


def is_local_url(url: str | None) -> bool:
    """True when ``url`` points at this machine."""
    if not url:
        return False
    return (urlsplit(url).hostname or "") in LOCAL_HOSTS


def read_api_key(variable: str, provider: str, base_url: str | None) -> str:
    """The key in ``$variable``; a dummy for a local server; else MissingCredentialError."""
    key = os.environ.get(variable, "").strip()
    if key:
        return key
    if is_local_url(base_url):
        return LOCAL_DUMMY_KEY
    raise MissingCredentialError(variable, provider)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asks us to wait (``retry-after-ms``, ``retry-after`` secs or date)."""
    if not headers:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(float(milliseconds) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


def decision_for_status(status: int) -> RetryDecision:
    """429 is rate limiting; 408/409/5xx/529 are worth retrying; other 4xx are not."""
    if status == 429:
        return RetryDecision.RATE_LIMIT
    if status in _TRANSIENT_STATUSES or status >= 500:
        return RetryDecision.TRANSIENT
    return RetryDecision.NO


def map_sdk_error(
    error: BaseException, sdk: ModuleType, provider: str, secret: str
) -> ProviderError:
    """Translate an exception raised by an official SDK into a classified ProviderError."""
    if isinstance(error, sdk.APIStatusError):
        status = error.status_code
        headers = getattr(error.response, "headers", None)
        overflow = is_context_overflow(status, str(error))
        return ProviderError(
            redact(f"{provider}: HTTP {status}: {error}", [secret]),
            decision=decision_for_status(status),
            retry_after=parse_retry_after(headers),
            status=status,
            kind=PROMPT_TOO_LONG if overflow else None,
        )
    if isinstance(error, sdk.APITimeoutError):
        return ProviderError(
            f"{provider}: request timed out", decision=RetryDecision.TRANSIENT, kind="timeout"
        )
    if isinstance(error, sdk.APIConnectionError):
        return ProviderError(
            redact(f"{provider}: connection failed: {error}", [secret]),
            decision=RetryDecision.TRANSIENT,
            kind="connection",
        )
    if isinstance(error, sdk.APIResponseValidationError | json.JSONDecodeError):
        # A truncated or garbled body is usually a proxy or server hiccup: try again.
        return ProviderError(
            redact(f"{provider}: malformed response body: {error}", [secret]),
            decision=RetryDecision.TRANSIENT,
        )
    return ProviderError(
        redact(f"{provider}: {type(error).__name__}: {error}", [secret]),
        decision=RetryDecision.NO,
    )
