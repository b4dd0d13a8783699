"""The names a program's top-level statements bind and use, and the statements a set of
names needs: the one analysis behind splitting a program into self-contained helpers
(``library/split.py``) and inlining what a BARC seed uses of BARC's ``common.py``
(``benchmarks/arc/barc.py``); and renaming a name throughout a text.
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Statement:
    """A top-level statement: its text and the names it binds and uses."""

    text: str
    binds: frozenset[str]
    uses: frozenset[str]


def mentioned(node: ast.AST) -> list[str]:
    """Every name ``node`` mentions (read, stored or deleted), once each, in the order of
    ``ast.walk``: breadth first, so ``a() if b() else c()`` mentions b first."""
    names: dict[str, None] = {}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.setdefault(sub.id)
    return list(names)


def bound(node: ast.stmt) -> frozenset[str]:
    """The names a top-level statement binds, for a helper's closure: an import's alias,
    else the first part of its dotted name (``"*"`` for a star import); a def's or
    class's name; for any other statement each name stored to anywhere in it, a
    comprehension's variable too (``TABLE[i] = x`` and ``Color.X = x`` bind none)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return frozenset(
            (alias.asname or alias.name.split(".")[0]) if alias.name != "*" else "*"
            for alias in node.names
        )
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return frozenset({node.name})
    return frozenset(
        sub.id
        for sub in ast.walk(node)
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store)
    )


def defined(node: ast.stmt) -> frozenset[str]:
    """The names a top-level definition of a helper library defines: a def's or class's
    name; every name in an assignment's targets (``TABLE[i] = x`` defines TABLE and i,
    ``Color.X = x`` defines Color); none for any other statement (imports, loops)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return frozenset({node.name})
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return frozenset(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return frozenset()


def needed(statements: Sequence[Statement], names: Iterable[str]) -> list[Statement]:
    """The statements binding ``names`` (star imports always), with every statement
    binding a name those use in turn, in their order: all statements binding a name
    (``TABLE = [0]`` and ``TABLE[A] = 1``), whatever order the names are reached in."""
    wanted = set(names)
    chosen: set[int] = set()
    changed = True
    while changed:
        changed = False
        for index, statement in enumerate(statements):
            if index in chosen:
                continue
            if "*" in statement.binds or statement.binds & wanted:
                chosen.add(index)
                wanted |= statement.uses
                changed = True
    return [s for i, s in enumerate(statements) if i in chosen]


def rename_references(text: str, renames: dict[str, str]) -> str:
    """``text`` with every name token in ``renames`` replaced (attributes such as
    ``x.name`` are left alone, and so are strings and comments), comments and layout
    kept."""
    if not renames or not any(old != new for old, new in renames.items()):
        return text
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    out: list[tokenize.TokenInfo] = []
    previous = ""
    for token in tokens:
        if (
            token.type == tokenize.NAME
            and token.string in renames
            and previous != "."
            and not keyword.iskeyword(token.string)
        ):
            token = token._replace(string=renames[token.string])
        if token.type not in (
            tokenize.NL,
            tokenize.COMMENT,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.NEWLINE,
        ):
            previous = token.string
        out.append(token)
    return _untokenize(text, tokens, out)


def _untokenize(
    text: str, before: list[tokenize.TokenInfo], after: list[tokenize.TokenInfo]
) -> str:
    # Replace token by token from the end, so that earlier positions stay valid.
    lines = text.splitlines(keepends=True)
    for old, new in reversed(list(zip(before, after, strict=True))):
        if old.string == new.string:
            continue
        (row, col), (_, end_col) = old.start, old.end
        line = lines[row - 1]
        lines[row - 1] = line[:col] + new.string + line[end_col:]
    return "".join(lines)
