"""Scrub credentials from text before it reaches a log, a cache or an error record."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

# Shapes of common API keys (OpenAI "sk-...", Anthropic "sk-ant-...", bearer tokens).
_KEY_PATTERNS = re.compile(r"(sk-[A-Za-z0-9_\-*]{6,}|Bearer\s+[A-Za-z0-9_\-.=]{8,})")
_KEY_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")
_MIN_SECRET_LENGTH = 6
MASK = "***"


def environment_secrets() -> list[str]:
    """Values of environment variables that look like credentials."""
    return [
        value
        for name, value in os.environ.items()
        if name.endswith(_KEY_ENV_SUFFIXES) and len(value) >= _MIN_SECRET_LENGTH
    ]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with the given secrets, credential-looking env values and key shapes masked."""
    for secret in [*secrets, *environment_secrets()]:
        if secret and len(secret) >= _MIN_SECRET_LENGTH:
            text = text.replace(secret, MASK)
    return _KEY_PATTERNS.sub(MASK, text)


def public_url(url: str | None) -> str | None:
    """``url`` without user:password, safe to log or put in a cache identity."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), parts.query, ""))
