"""Type vocabulary checks: which type names an annotation uses and whether they resolve."""

from __future__ import annotations

import re
from collections.abc import Iterable

# Names a Python-like annotation may use without defining them.
BUILTIN_TYPES = frozenset(
    {
        "int", "float", "bool", "str", "list", "dict", "tuple", "set", "frozenset",
        "callable", "any", "none", "optional", "union", "literal", "iterable", "sequence",
        "mapping", "type", "object", "number",
    }
)  # fmt: skip

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_SEPARATORS = re.compile(r"->|[\[\],|()]")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


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


def unresolved(annotation: str, known: Iterable[str]) -> list[str]:
    """Type names in ``annotation`` that are neither built in nor in ``known``."""
    vocabulary = {k.lower() for k in known} | BUILTIN_TYPES
    return [n for n in type_names(annotation) if n.lower() not in vocabulary]
