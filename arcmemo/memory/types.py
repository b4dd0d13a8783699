"""Type vocabulary checks: which type names an annotation uses and whether they resolve."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

# Names a Python-like annotation may use without defining them.
BUILTIN_TYPES = frozenset(
    {
        "int", "float", "bool", "str", "list", "dict", "tuple", "set", "frozenset",
        "callable", "any", "none", "optional", "union", "literal", "iterable", "sequence",
        "mapping", "type", "object", "number",
    }
)  # fmt: skip
# What a type declared only because it was used without a definition stands for.
OPAQUE_DEFINITION = "Any"

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_SEPARATORS = re.compile(r"->|[\[\],|()]")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_NAME_BEFORE = re.compile(r"([A-Za-z_][\w ]*?)\s*$")
_OPENING = "[("
_CLOSING = "])"


def type_names(annotation: str) -> list[str]:
    """The type names an annotation refers to, in order (multi-word names kept whole).

    ``"Callable[[object, grid], bool]"`` gives ``["Callable", "object", "grid", "bool"]``;
    quoted literals and numbers are skipped.
    """
    stripped = _QUOTED.sub(" ", annotation)
    names = []
    for part in _SEPARATORS.split(stripped):
        name = " ".join(part.split())
        if name and name != "..." and not _NUMBER.match(name):
            names.append(name)
    return names


@lru_cache(maxsize=1 << 16)
def _named(annotation: str) -> tuple[tuple[str, str], ...]:
    # Annotations repeat across a memory: each is parsed once per process.
    return tuple((name, name.lower()) for name in type_names(annotation))


def vocabulary(known: Iterable[str]) -> frozenset[str]:
    """The lower-cased names an annotation may use: built-ins and ``known``."""
    return frozenset(k.lower() for k in known) | BUILTIN_TYPES


def unresolved(annotation: str, known: Iterable[str] | frozenset[str]) -> list[str]:
    """Type names in ``annotation`` that are neither built in nor in ``known`` (names, or
    a :func:`vocabulary` built once for many annotations)."""
    names = known if isinstance(known, frozenset) else vocabulary(known)
    return [name for name, lower in _named(annotation) if lower not in names]


def _definition_end(text: str, start: int) -> int:
    """Where an inline definition starting at ``start`` ends: at the first ``,`` or closing
    bracket that is not nested inside the definition itself (or at the end of ``text``)."""
    depth = 0
    quote = ""
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            if depth == 0:
                return index
            depth -= 1
        elif char == "," and depth == 0:
            return index
    return len(text)


def split_inline_typedefs(annotation: str) -> tuple[str, list[tuple[str, str]]]:
    """Replace every inline ``name := definition`` of an annotation by its name.

    Works at any depth: ``list[symmetry := Callable[[position], position]]`` gives
    ``("list[symmetry]", [("symmetry", "Callable[[position], position]")])``; a top-level
    ``color scheme := dict[color, color]`` gives ``("color scheme", [...])``. Definitions
    that define further types inline are split too (inner ones first).
    """
    found: list[tuple[str, str]] = []
    text = annotation
    while True:
        marker = text.find(":=")
        if marker < 0:
            return " ".join(text.split()), found
        match = _NAME_BEFORE.search(text[:marker])
        if match is None:  # ":=" with no name before it: leave the rest as written
            return " ".join(text.split()), found
        name = " ".join(match.group(1).split())
        start = marker + 2
        head = _QUOTED.sub("", text[: match.start()])
        nested = sum(head.count(c) for c in _OPENING) > sum(head.count(c) for c in _CLOSING)
        end = _definition_end(text, start) if nested else len(text)
        inner, deeper = split_inline_typedefs(text[start:end])
        found += deeper
        if inner:
            found.append((name, inner))
        text = text[: match.start()] + name + text[end:]
