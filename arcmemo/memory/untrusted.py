"""Memory files are untrusted input: bounds on their size and shape, and their text as shown.

Researchers share memories, so a memory file is read as a stranger wrote it. Policy:

- a file over :data:`MAX_FILE_BYTES`, a text field over :data:`MAX_FIELD_CHARS` or a value
  nested over :data:`MAX_DEPTH` levels is refused on load, with a one-line error naming it;
- control characters (other than tab and newline) and bidirectional overrides
  (:data:`arcmemo.sandbox.text.UNSAFE`) in any text field load, so that the file can be
  looked at and fixed, but are shown escaped (``\\x1b``, ``\\u202e``) by every command that
  prints memory text (:func:`display_copy`), listed by ``arcmemo memory validate`` and
  refused on save (a memory that holds them is never written again).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from arcmemo.memory.schema import DISPLAY_COPY, Memory
from arcmemo.sandbox.text import UNSAFE, visible_text

MAX_FILE_BYTES = 100 * 2**20
"""Largest memory file loaded: 100 MiB. A memory of concepts, lessons, library functions and
solutions for every ARC-AGI-1 task is a few MB; past this size a file is not a memory."""
MAX_FIELD_CHARS = 100_000
"""Longest text field: a description, cue or library function is at most a few thousand
characters; one of 100,000 is filler that every prompt and screen would carry."""
MAX_DEPTH = 64
"""Deepest nesting of a memory's JSON (the schema itself is under ten levels deep)."""

# The JSON escapes of unsafe characters (a JSON writer escapes C0 controls; pydantic writes
# C1 and the bidi overrides raw). Any of them, or a raw unsafe character, sends the value to
# the precise walk; most memories hold none and are not walked.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BIDI_CHARS = [chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
_ESCAPES = ("\\u00", "\\u202", "\\u206", "\\b", "\\f", "\\r")


def _suspect(text: str) -> bool:
    # Three cheap scans rather than one regular expression (whose class with the bidi
    # range is several times slower per character).
    return (
        _CONTROL.search(text) is not None
        or any(char in text for char in _BIDI_CHARS)
        or any(escape in text for escape in _ESCAPES)
    )


def _walk(value: Any, path: str = "$") -> Iterator[tuple[str, Any, int]]:
    """``(json path, value, depth)`` of every value inside ``value`` (keys included, as
    strings at their mapping's path), without recursion."""
    stack: list[tuple[str, Any, int]] = [(path, value, 0)]
    while stack:
        where, item, depth = stack.pop()
        yield where, item, depth
        if isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                stack.append((where, key, depth + 1))
                stack.append((f"{where}.{key}", child, depth + 1))
        elif isinstance(item, list):
            for index in reversed(range(len(item))):
                stack.append((f"{where}[{index}]", item[index], depth + 1))


def _short(where: str) -> str:
    return visible_text(where, 120)


def _within_bounds(item: Any, depth: int = 0) -> bool:
    """No string over :data:`MAX_FIELD_CHARS` and no nesting over :data:`MAX_DEPTH` (the
    quick walk: no paths; it stops before recursing past MAX_DEPTH)."""
    kind = type(item)
    if kind is str:
        return len(item) <= MAX_FIELD_CHARS
    if kind is dict:
        if depth >= MAX_DEPTH:
            return False
        return all(
            len(key) <= MAX_FIELD_CHARS and _within_bounds(child, depth + 1)
            for key, child in item.items()
        )
    if kind is list:
        if depth >= MAX_DEPTH:
            return False
        return all(_within_bounds(child, depth + 1) for child in item)
    return True


def bound_problems(raw: Any, size: int | None = None) -> list[tuple[str, str]]:
    """``(json path, problem)`` for each text field over :data:`MAX_FIELD_CHARS` and each
    value nested over :data:`MAX_DEPTH` levels in a memory's parsed JSON (``size``: the
    length of its text, when it is known)."""
    if (size is not None and size <= MAX_DEPTH) or _within_bounds(raw):
        return []
    problems = []
    for where, item, depth in _walk(raw):
        if depth > MAX_DEPTH:
            problems.append((_short(where), f"nested more than {MAX_DEPTH} levels deep"))
            break
        if isinstance(item, str) and len(item) > MAX_FIELD_CHARS:
            problems.append(
                (_short(where), f"{len(item)} characters, over the {MAX_FIELD_CHARS} a field holds")
            )
    return problems


def unsafe_in_text(text: str) -> list[tuple[str, str]]:
    """:func:`unsafe_problems` of a memory's JSON text (a cheap search first: a clean
    memory is not parsed)."""
    return unsafe_problems(json.loads(text)) if _suspect(text) else []


def unsafe_problems(raw: Any) -> list[tuple[str, str]]:
    """``(json path, what)`` for each text field of a memory's JSON value holding control
    characters or bidirectional overrides."""
    problems = []
    for where, item, _ in _walk(raw):
        if isinstance(item, str) and (found := UNSAFE.findall(item)):
            codes = ", ".join(dict.fromkeys(f"U+{ord(c):04X}" for c in found))
            problems.append(
                (
                    _short(where),
                    f"holds {len(found)} control or bidirectional character(s) ({codes}); "
                    "shown escaped, refused on save",
                )
            )
    return problems


def visible_value(value: Any) -> Any:
    """``value`` with every string in it (keys too) through
    :func:`~arcmemo.sandbox.text.visible_text`."""
    if isinstance(value, str):
        return visible_text(value)
    if isinstance(value, list):
        return [visible_value(item) for item in value]
    if isinstance(value, dict):
        return {visible_value(key): visible_value(item) for key, item in value.items()}
    return value


def display_copy(memory: Memory) -> Memory:
    """``memory`` as every command shows it: itself when its text is clean, else a copy
    whose strings show their unsafe characters escaped (never saved: the escapes would
    change what the file says)."""
    text = memory.model_dump_json()
    if not _suspect(text):
        return memory
    return Memory.model_validate(
        visible_value(memory.model_dump(mode="json")), context={DISPLAY_COPY: True}
    )
