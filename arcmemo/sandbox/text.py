"""The one sanitizer of text that a program or a model wrote, before anything stores or shows it.

Program errors, captured output, returned strings and model completions can hold lone
surrogates (which no UTF-8 file or terminal takes) and control characters (an escape
sequence sets a terminal's title, clears its screen or fakes a line). :func:`clean_text`
makes such text safe for every CLI line, log line, prompt, report and run file; a
JSON value goes through :func:`clean_json`.

It belongs to the sandbox, whose worker imports it as a sibling file inside the sandbox,
so it imports nothing but the standard library.
"""

from __future__ import annotations

import math
import re
from typing import Any

MAX_DEPTH = 100
"""Deepest nesting :func:`clean_json` accepts."""
# C0 controls but tab and newline, DEL, and the C1 controls (an 8-bit CSI is one character).
# Bidirectional embeddings, overrides and isolates: they reorder what a reader sees (a line
# that shows one thing and holds another), so shown text never carries them raw.
_BIDI = "\u202a-\u202e\u2066-\u2069"
UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
"""Characters no stored memory text or shown line may hold raw: controls but tab and newline,
and the bidirectional overrides."""


def clean_text(text: str, limit: int | None = None, *, controls: bool = False) -> str:
    """``text`` safe to store and show: lone surrogates become their ``\\udxxx`` escape,
    control characters other than newline and tab, and the bidirectional overrides, are
    removed (kept with ``controls``, for stored copies that must stay byte-faithful), and at
    most ``limit`` characters stay
    (the middle is dropped, so both the start and the final error line remain)."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if not controls:
        text = UNSAFE.sub("", text)
    if limit is not None and len(text) > limit:
        keep = max(1, limit - 40) // 2
        dropped = len(text) - 2 * keep
        text = f"{text[:keep]}\n[... {dropped} characters dropped ...]\n{text[-keep:]}"
    return text


def visible_text(text: str, limit: int | None = None) -> str:
    """``text`` for a terminal or a page, every character of :data:`UNSAFE` shown as its
    escape (``\\x1b``, ``\\u202e``) rather than dropped, so that a reader sees what a
    file holds without the file acting on the terminal."""
    text = UNSAFE.sub(_escape, text)
    return clean_text(text, limit)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean_json(value: Any, *, controls: bool = False, depth: int = 0) -> Any:
    """A JSON value with every string (keys too) passed through :func:`clean_text`; raises
    ValueError when it is nested more than :data:`MAX_DEPTH` levels deep or holds a
    non-finite float."""
    if depth > MAX_DEPTH:
        raise ValueError(f"the value is nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, str):
        return clean_text(value, controls=controls)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a JSON number")
    if isinstance(value, list):
        return [clean_json(item, controls=controls, depth=depth + 1) for item in value]
    if isinstance(value, dict):
        return {
            clean_text(str(key), controls=controls): clean_json(
                item, controls=controls, depth=depth + 1
            )
            for key, item in value.items()
        }
    return value
