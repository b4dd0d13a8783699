"""One provider-independent token estimate, for budgets, dry runs and rate limits."""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """About four characters per token (no tokenizer: it must work for every provider)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)
