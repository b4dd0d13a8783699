"""The library one task may import: which memory functions, and its ``arcmemo_library``.

Which functions a task gets follows the run setting ``library`` (:data:`LibraryScope`):
the selected concepts' functions (shown in the solve prompt), every function of the memory
(the prompt still shows the selected ones), or none; each with the library functions it
calls. The leakage guard of :func:`~arcmemo.library.modules.available_functions` applies
first: no function extracted from the task's own solution, nor one calling such a function.
Only non-retired concepts count. The module text is
:func:`~arcmemo.library.modules.module_text` of those functions; inside the sandbox the
program imports it (:attr:`arcmemo.sandbox.Program.library`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from arcmemo.library.modules import (
    MODULE_NAME,
    available_functions,
    closure,
    memory_functions,
    module_text,
)
from arcmemo.memory.schema import LibraryFunction, Memory

LibraryScope = Literal["selected", "all", "off"]


@dataclass(frozen=True)
class TaskLibrary:
    """What one task's prompt shows of the library and what its programs may import."""

    shown: tuple[LibraryFunction, ...] = ()
    importable: tuple[LibraryFunction, ...] = ()
    source: str = field(default="", repr=False)
    """The text of the module the task's programs import ('' for none)."""
    docstrings: bool = True
    """Whether the prompt shows the functions' docstrings (a prompt cut to fit the model's
    window shows signatures alone)."""

    def union(self, other: TaskLibrary) -> TaskLibrary:
        """Both libraries (a retry that selected again keeps what the first try had)."""
        shown = _merged(self.shown, other.shown)
        importable = _merged(self.importable, other.importable)
        if len(importable) == len(self.importable) and len(shown) == len(self.shown):
            return self
        return TaskLibrary(shown=shown, importable=importable, source=library_module(importable))

    def view(self) -> list[dict[str, str]]:
        """The shown functions as the prompt template ``arc/library.j2`` reads them."""
        return [
            {
                "name": f.name,
                "signature": f.signature,
                "docstring": f.docstring.strip() if self.docstrings else "",
            }
            for f in self.shown
        ]

    def trimmed(self, without: Collection[str], *, docstrings: bool) -> TaskLibrary:
        """The library with a shorter listing: the functions ``without`` not shown, and no
        docstrings unless ``docstrings``. What the programs may import is unchanged."""
        if not without and docstrings == self.docstrings:
            return self
        shown = tuple(f for f in self.shown if f.name not in without)
        return replace(self, shown=shown, docstrings=docstrings)

    def least_used_first(self) -> list[str]:
        """The shown functions' names, the one a prompt can best spare first: fewest tasks
        whose verified programs imported it (credit by import), then fewest recorded calls
        (how often verified programs ran it), then the later in the listing (the selector's
        order)."""
        ranked = sorted(
            enumerate(self.shown),
            key=lambda item: (len(item[1].imported_by), len(item[1].tests), -item[0]),
        )
        return [function.name for _, function in ranked]


NO_LIBRARY = TaskLibrary()


def _merged(
    first: Sequence[LibraryFunction], second: Sequence[LibraryFunction]
) -> tuple[LibraryFunction, ...]:
    names = {f.name for f in first}
    return (*first, *(f for f in second if f.name not in names))


def library_module(functions: Sequence[LibraryFunction]) -> str:
    """The text of ``arcmemo_library`` holding ``functions`` (with what they call: see
    :func:`with_callees`); '' for none."""
    if not functions:
        return ""
    docstring = f"{MODULE_NAME}: {len(functions)} tested functions from verified programs."
    return module_text(functions, docstring=docstring)


def with_callees(memory: Memory, names: Sequence[str]) -> list[LibraryFunction]:
    """The functions ``names`` and every library function they call, each once, in order."""
    functions = memory_functions(memory)
    wanted: dict[str, None] = {}
    for name in names:
        wanted.update(dict.fromkeys(closure(functions, name)))
    return [functions[name] for name in wanted]


def task_library(
    memory: Memory, task_id: str | None, selected: Sequence[str], scope: LibraryScope
) -> TaskLibrary:
    """The library of ``task_id``: the functions of the ``selected`` concepts are shown
    (and importable, with what they call); with ``scope="all"`` every available function is
    importable too."""
    if scope == "off" or not any(c.functions for c in memory.concepts):
        return NO_LIBRARY
    available = available_functions(memory, [task_id] if task_id else [])
    allowed = set(available)
    shown: list[LibraryFunction] = []
    seen: set[str] = set()
    for name in selected:
        concept = memory.find(name)
        if concept is None or concept.id in seen or concept.retired is not None:
            continue  # a lesson, a concept gone from the memory, or a retired one
        seen.add(concept.id)
        shown += [f for f in concept.functions if f.name in allowed]
    names = available if scope == "all" else [f.name for f in shown]
    importable = tuple(with_callees(memory, names))
    return TaskLibrary(shown=tuple(shown), importable=importable, source=library_module(importable))
