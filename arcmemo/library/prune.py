"""Library functions that no program imports any more leave the memory, with history.

After a refactoring writes a corpus of programs, each library function's ``imported_by`` is
brought up to date for the corpus's tasks (tasks outside it keep their credit: nothing is
known of their programs). A function that had importers, none of which imports it now, and
that no other library function calls, is removed from its concept; the memory's history
records it (op ``delete``, target ``CONCEPT_ID/FUNCTION``, the importers it lost).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from arcmemo.library.modules import MODULE_NAME
from arcmemo.memory.schema import HistoryEntry, Memory

PRUNER = "library refactor"


def imports_of(source: str) -> set[str]:
    """The library names ``source`` imports (none for text that does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == MODULE_NAME
        for alias in node.names
    }


def prune_unimported(
    memory: Memory, programs: Mapping[str, str], *, actor: str = PRUNER
) -> list[str]:
    """Update ``imported_by`` for the tasks of ``programs`` (task -> source as it is now)
    and remove the functions no program imports any more; returns their names."""
    importing = {task: imports_of(source) for task, source in programs.items()}
    every = [(c, f) for c in memory.concepts for f in c.functions]
    before = {id(f): list(f.imported_by) for _, f in every}
    for _, function in every:
        for task in [t for t in function.imported_by if t in importing]:
            if function.name not in importing[task]:
                function.imported_by.remove(task)
        for task, names in importing.items():
            if function.name in names and task not in function.imported_by:
                function.imported_by.append(task)
    pruned: list[str] = []
    for concept, function in every:
        if function.imported_by or not before[id(function)]:
            continue  # still imported, or never was (an extracted helper not yet used)
        callers = [
            other.name
            for _, other in every
            if other is not function
            and other.name not in pruned
            and function.name in _names(other.source)
        ]
        if callers:
            continue
        concept.functions.remove(function)
        pruned.append(function.name)
        memory.history.append(
            HistoryEntry(
                op="delete",
                target=f"{concept.id}/{function.name}",
                actor=actor,
                why=f"library function {function.name}: no program imports it any more",
                changes=[f"was imported by {', '.join(before[id(function)])}"],
            )
        )
    return pruned


def _names(source: str) -> set[str]:
    """The names ``source`` uses (none for text that does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
