"""The library a task may import: which memory functions, and the module ``arcmemo_library``.

A routine concept may carry :class:`~arcmemo.memory.ontology.LibraryFunction` entries.
Inside the sandbox a program imports them with ``from arcmemo_library import f``; the
module's text is built here, per task, from the memory's non-retired concepts, with the
leakage guard applied: a function extracted from a task's own solution (``sources`` holds
the task id) is never in that task's library. Which functions a task gets follows the run
setting ``library`` (:data:`LibraryScope`): the selected concepts' functions, every visible
function, or none.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal

from arcmemo.memory.ontology import Concept, LibraryFunction, Memory

LIBRARY_MODULE = "arcmemo_library"
LibraryScope = Literal["selected", "all", "off"]
# What every function may assume: the names ARC programs are given (``np``), and
# annotations that are never evaluated (a signature may name the memory's types).
_HEADER = (
    f'"""{LIBRARY_MODULE}: functions from verified programs."""\n\n'
    "from __future__ import annotations\n\nimport numpy as np\n"
)


@lru_cache(maxsize=1 << 15)
def _compiles(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def library_source(functions: Iterable[LibraryFunction]) -> str:
    """The text of the module ``arcmemo_library`` holding ``functions`` ('' for none).

    Functions come in name order (the same set gives the same text); one whose source does
    not parse is left out, so it cannot break every import of the module.
    """
    kept = sorted((f for f in functions if _compiles(f.source)), key=lambda f: f.name)
    if not kept:
        return ""
    names = ", ".join(repr(f.name) for f in kept)
    bodies = "\n\n".join(f.source.strip() + "\n" for f in kept)
    return f"{_HEADER}\n__all__ = [{names}]\n\n\n{bodies}"


def concept_functions(concept: Concept, task_id: str | None) -> list[LibraryFunction]:
    """``concept``'s functions that ``task_id`` may see (none from its own solution)."""
    if concept.retired:
        return []
    return [f for f in concept.functions if task_id is None or task_id not in f.sources]


def visible_functions(memory: Memory, task_id: str | None) -> list[LibraryFunction]:
    """Every function of ``memory``'s active concepts that ``task_id`` may import."""
    return [f for c in memory.concepts for f in concept_functions(c, task_id)]


@dataclass(frozen=True)
class TaskLibrary:
    """What one task's prompt shows of the library and what its programs may import."""

    shown: tuple[LibraryFunction, ...] = ()
    importable: tuple[LibraryFunction, ...] = ()

    @cached_property
    def source(self) -> str:
        """The module text a program of the task imports from ('' for none)."""
        return library_source(self.importable)

    def union(self, other: TaskLibrary) -> TaskLibrary:
        """Both libraries (a retry that selected again keeps what the first try had)."""

        def merged(
            first: Sequence[LibraryFunction], second: Sequence[LibraryFunction]
        ) -> tuple[LibraryFunction, ...]:
            names = {f.name for f in first}
            return (*first, *(f for f in second if f.name not in names))

        return TaskLibrary(
            shown=merged(self.shown, other.shown),
            importable=merged(self.importable, other.importable),
        )

    def view(self) -> list[dict[str, str]]:
        """The shown functions as the prompt template ``library.j2`` reads them."""
        return [
            {"name": f.name, "signature": f.signature, "docstring": f.docstring.strip()}
            for f in self.shown
        ]


NO_LIBRARY = TaskLibrary()


def task_library(
    memory: Memory, task_id: str | None, selected: Sequence[str], scope: LibraryScope
) -> TaskLibrary:
    """The library of ``task_id``: the functions of the ``selected`` concepts are shown (and
    importable); with ``scope="all"`` every visible function is importable too."""
    if scope == "off":
        return NO_LIBRARY
    shown: list[LibraryFunction] = []
    seen: set[str] = set()
    for name in selected:
        concept = memory.find(name)
        if concept is None or concept.id in seen:
            continue  # a lesson, or a concept gone from the memory
        seen.add(concept.id)
        shown += concept_functions(concept, task_id)
    importable = visible_functions(memory, task_id) if scope == "all" else shown
    return TaskLibrary(shown=tuple(shown), importable=tuple(importable))
