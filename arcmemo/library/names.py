"""The names a program's top-level statements bind, mutate and use, and the statements a
set of names needs: the one analysis behind splitting a program into self-contained
helpers (``library/split.py``) and inlining what a BARC seed uses of BARC's ``common.py``
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
    """A top-level statement: its text, the names it binds at module scope, those it
    uses, and those it mutates (an attribute or item of the name assigned or deleted:
    the statement belongs with that name's definition, after it)."""

    text: str
    binds: frozenset[str]
    uses: frozenset[str]
    mutates: frozenset[str] = frozenset()

    @classmethod
    def of(cls, node: ast.stmt, text: str) -> Statement:
        """``node``'s names (``text`` is its source)."""
        binds, mutates = bindings(node)
        return cls(text, binds, frozenset(mentioned(node)), mutates)


def mentioned(node: ast.AST) -> list[str]:
    """Every name ``node`` mentions (read, stored or deleted), once each, in the order of
    ``ast.walk``: breadth first, so ``a() if b() else c()`` mentions b first."""
    names: dict[str, None] = {}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.setdefault(sub.id)
    return list(names)


def bindings(node: ast.stmt) -> tuple[frozenset[str], frozenset[str]]:
    """What a top-level statement binds at module scope and what it mutates.

    Binds: an import's alias, else the first part of its dotted name (``"*"`` for a star
    import); a def's or class's name; every name an assignment, annotated assignment with
    a value, augmented assignment, ``for``, ``with ... as``, ``except ... as``, walrus,
    ``match`` pattern or import stores to, at any depth of a compound statement (``if``,
    ``try``, loops). Not a comprehension's variable (local to the comprehension; a walrus
    inside one binds in the module, though), nor any name inside a def's, class's or
    lambda's body (their scope, not the module's), nor a ``global`` declaration (at module
    level it changes nothing; in a function the name is bound only when it runs).

    Mutates: the name under an attribute or subscript target or deletion
    (``Color.X = 1``, ``TABLE[A] += 1``, ``del TABLE[0]``) and a deleted name
    (``del X``); a method call that mutates (``TABLE.append(1)``) is not seen.
    """
    walker = _Bindings()
    walker.visit(node)
    return frozenset(walker.binds), frozenset(walker.mutates)


class _Bindings(ast.NodeVisitor):
    def __init__(self) -> None:
        self.binds: set[str] = set()
        self.mutates: set[str] = set()
        self.in_comprehension = False

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            name = "*" if alias.name == "*" else alias.asname or alias.name.split(".")[0]
            self.binds.add(name)

    visit_ImportFrom = visit_Import

    def _signature(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        # Decorators and defaults run in the enclosing scope (a walrus there binds in it);
        # the body runs in its own.
        for expression in [*node.args.defaults, *node.args.kw_defaults]:
            if expression is not None:
                self.visit(expression)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.binds.add(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._signature(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._signature(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.binds.add(node.name)
        for expression in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(expression)

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
    ) -> None:
        was, self.in_comprehension = self.in_comprehension, True
        self.generic_visit(node)
        self.in_comprehension = was

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        # A walrus binds in the enclosing function or module, even inside a comprehension.
        self.binds.add(node.target.id)
        self.visit(node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return  # `X: int` binds and changes nothing, it only annotates
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store) and not self.in_comprehension:
            self.binds.add(node.id)
        elif isinstance(node.ctx, ast.Del):
            self.mutates.add(node.id)

    def _target(self, node: ast.Attribute | ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            base: ast.expr = node
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name):
                self.mutates.add(base.id)
        self.generic_visit(node)

    visit_Attribute = visit_Subscript = _target

    def _named(self, node: ast.ExceptHandler | ast.MatchAs | ast.MatchStar) -> None:
        # `except E as name`, a pattern's capture `case [x, *rest]` or `case P() as name`
        if node.name:
            self.binds.add(node.name)
        self.generic_visit(node)

    visit_ExceptHandler = visit_MatchAs = visit_MatchStar = _named

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.binds.add(node.rest)
        self.generic_visit(node)


def needed(statements: Sequence[Statement], names: Iterable[str]) -> list[Statement]:
    """The statements binding or mutating ``names`` (star imports always), with every
    statement binding or mutating a name those use in turn, in their order: all
    statements binding a name and those mutating it after (``TABLE = [0]`` and
    ``TABLE[A] = 1``), whatever order the names are reached in."""
    wanted = set(names)
    chosen: set[int] = set()
    changed = True
    while changed:
        changed = False
        for index, statement in enumerate(statements):
            if index in chosen:
                continue
            if "*" in statement.binds or (statement.binds | statement.mutates) & wanted:
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
