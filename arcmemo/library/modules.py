"""Module texts made of library functions: one function with what it calls, or the whole
library a task may import (``arcmemo_library``)."""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Mapping
from functools import lru_cache

from arcmemo.memory.schema import LibraryFunction, Memory

MODULE_NAME = "arcmemo_library"
"""The name programs import library functions from."""


class LibraryConflictError(ValueError):
    """Two library functions bind the same global name differently (the message names it)."""


def memory_functions(memory: Memory) -> dict[str, LibraryFunction]:
    """Every library function of the memory's live (not retired) concepts, by name."""
    return {
        function.name: function
        for concept in memory.concepts
        if concept.retired is None
        for function in concept.functions
    }


@lru_cache(maxsize=4096)
def _statements(source: str) -> tuple[tuple[str, ast.stmt], ...]:
    # Kept per text (read, never changed): a build checks each new function's module with
    # every function before it, which parsed all of them again each time (quadratic).
    tree = ast.parse(source)
    return tuple(
        (ast.get_source_segment(source, node) or ast.unparse(node), node) for node in tree.body
    )


def _decorated_text(source: str, node: ast.stmt, text: str) -> str:
    decorators = getattr(node, "decorator_list", [])
    if not decorators:
        return text
    return (
        "\n".join("@" + (ast.get_source_segment(source, d) or ast.unparse(d)) for d in decorators)
        + "\n"
        + text
    )


def calls_of(function: LibraryFunction, names: Collection[str]) -> list[str]:
    """The library functions among ``names`` that ``function`` mentions, in order."""
    found: list[str] = []
    for node in ast.walk(ast.parse(function.source)):
        if (
            isinstance(node, ast.Name)
            and node.id in names
            and node.id != function.name
            and node.id not in found
        ):
            found.append(node.id)
    return found


def closure(functions: Mapping[str, LibraryFunction], name: str) -> list[str]:
    """``name`` and the library functions it reaches; raises KeyError for a missing one."""
    seen: list[str] = []
    stack = [name]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.append(current)
        stack.extend(reversed(calls_of(functions[current], functions.keys())))
    return seen


def module_text(functions: Iterable[LibraryFunction], *, docstring: str = "") -> str:
    """One module defining ``functions``: their imports and other statements first (each
    text once), then the defs. Raises :class:`LibraryConflictError` when two functions
    bind one global name with different statements."""
    header: list[str] = []
    defs: list[str] = []
    bound: dict[str, str] = {}
    for function in functions:
        for text, node in _statements(function.source):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs.append(_decorated_text(function.source, node, text))
                continue
            if text in header:
                continue
            for name in _binds(node):
                if name in bound and bound[name] != text:
                    raise LibraryConflictError(
                        f"{function.name}: its {name!r} differs from another function's"
                    )
                bound[name] = text
            header.append(text)
    parts = [f'"""{docstring}"""'] if docstring else []
    parts += header + defs
    return "\n\n".join(parts) + "\n"


def _binds(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [alias.asname or alias.name for alias in node.names if alias.name != "*"]
    if isinstance(node, ast.ClassDef):
        return [node.name]
    return sorted(
        {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    )


def function_module(functions: Mapping[str, LibraryFunction], name: str) -> str:
    """The module that runs ``name`` standalone: it and the library functions it calls."""
    return module_text(functions[n] for n in closure(functions, name))


def available_functions(memory: Memory, exclude_tasks: Collection[str] = ()) -> list[str]:
    """Names of the functions a task may import: none extracted from an excluded task's
    program (the leakage guard), nor any that calls such a function."""
    functions = memory_functions(memory)
    excluded = set(exclude_tasks)
    allowed = {name for name, f in functions.items() if not excluded & set(f.sources)}
    changed = True
    while changed:
        changed = False
        for name in sorted(allowed):
            if any(dep not in allowed for dep in calls_of(functions[name], functions.keys())):
                allowed.discard(name)
                changed = True
    return [name for name in functions if name in allowed]


def library_source(memory: Memory, exclude_tasks: Collection[str] = ()) -> str:
    """The text of ``arcmemo_library`` for a task: every available function
    (:func:`available_functions`), with its imports, classes and constants."""
    functions = memory_functions(memory)
    names = available_functions(memory, exclude_tasks)
    return module_text(
        (functions[name] for name in names),
        docstring=f"{MODULE_NAME}: {len(names)} tested functions from verified programs.",
    )
