"""Splitting a program into its helper functions, each with what it needs to run.

A *helper* is a top-level ``def`` other than the program's entry points. Its *closure* is
the helper, the other helpers it calls (transitively, found by the global names their
bodies mention) and the top-level statements (imports, classes, constants) that define the
names those functions use: enough to run the helper without the rest of the program.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from arcmemo.library.names import Statement, mentioned, needed


class ProgramSyntaxError(ValueError):
    """A program that does not parse (the message names the task and the line)."""


@dataclass(frozen=True)
class Helper:
    """A top-level function of a program (not an entry point)."""

    name: str
    text: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    uses: frozenset[str]


@dataclass
class SplitProgram:
    """A program's helpers and other top-level statements, in source order."""

    task_id: str
    helpers: dict[str, Helper] = field(default_factory=dict)
    # The top-level statements that are not helpers.
    statements: list[Statement] = field(default_factory=list)
    entry_uses: frozenset[str] = frozenset()

    def helper_calls(self, name: str) -> list[str]:
        """Helpers ``name`` refers to directly, in order of first mention."""
        helper = self.helpers[name]
        return [used for used in mentioned(helper.node) if used in self.helpers and used != name]

    def helper_closure(self, name: str) -> list[str]:
        """``name`` and every helper it reaches, depth first in order of mention."""
        seen: list[str] = []

        def visit(current: str) -> None:
            if current in seen:
                return
            seen.append(current)
            for used in self.helper_calls(current):
                visit(used)

        visit(name)
        return seen

    def preamble(self, names: list[str], extra: Iterable[str] = ()) -> list[Statement]:
        """The statements the functions ``names`` need (star imports always) and those
        binding the ``extra`` names (the classes of recorded objects), in source order,
        with those the chosen statements need in turn."""
        wanted: set[str] = set(extra)
        for name in names:
            wanted |= self.helpers[name].uses
        return needed(self.statements, wanted)


def split_program(task_id: str, source: str, entry_points: frozenset[str]) -> SplitProgram:
    """Parse ``source`` into helpers and statements; raises :class:`ProgramSyntaxError`."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise ProgramSyntaxError(f"{task_id}: line {error.lineno}: {error.msg}") from None
    program = SplitProgram(task_id=task_id)
    entry_uses: set[str] = set()
    for node in tree.body:
        text = ast.get_source_segment(source, node, padded=False) or ast.unparse(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
            # Decorators start the node's source segment only from the def line.
            text = (
                "\n".join(
                    "@" + (ast.get_source_segment(source, d) or ast.unparse(d))
                    for d in node.decorator_list
                )
                + "\n"
                + text
            )
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in entry_points:
                entry_uses |= set(mentioned(node))
                continue
            uses = frozenset(mentioned(node))
            program.helpers[node.name] = Helper(node.name, text, node, uses)
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring or a bare constant: nothing a helper needs
        if isinstance(node, ast.If) and _is_main_guard(node):
            continue
        program.statements.append(Statement.of(node, text))
    program.entry_uses = frozenset(entry_uses)
    return program


def _is_main_guard(node: ast.If) -> bool:
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


# -- normalisation ------------------------------------------------------------------------


class _Normaliser(ast.NodeTransformer):
    """Docstrings out, the function's own name and its local names numbered in order of
    appearance, the helpers it calls named by their place in the closure."""

    def __init__(self, local_names: set[str], helper_names: dict[str, str]) -> None:
        self.local_names = local_names
        self.helper_names = helper_names
        self.numbers: dict[str, str] = {}

    def _local(self, name: str) -> str:
        return self.numbers.setdefault(name, f"v{len(self.numbers)}")

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in self.helper_names:
            return ast.copy_location(ast.Name(self.helper_names[node.id], node.ctx), node)
        if node.id in self.local_names:
            return ast.copy_location(ast.Name(self._local(node.id), node.ctx), node)
        return node

    def visit_arg(self, node: ast.arg) -> Any:
        node.arg = self._local(node.arg)
        node.annotation = None
        return node

    def _strip_docstring(self, node: Any) -> None:
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        self._strip_docstring(node)
        node.name = self.helper_names.get(node.name, self._local(node.name))
        node.returns = None
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]


def _local_names(node: ast.AST) -> set[str]:
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.add(sub.id)
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(sub.name)
    return names


def normalised_closure(program: SplitProgram, name: str, *, preamble: bool = True) -> str:
    """A key equal for two helpers whose closures differ only in names (of the helpers,
    their arguments and locals), docstrings, annotations, comments and layout; with
    ``preamble``, the statements they need (imports, classes, constants) must be the same
    too."""
    closure = program.helper_closure(name)
    helper_names = {helper: f"f{index}" for index, helper in enumerate(closure)}
    parts = []
    for helper in closure:
        node = ast.parse(program.helpers[helper].text).body[0]
        normaliser = _Normaliser(_local_names(node) - set(helper_names), helper_names)
        parts.append(ast.dump(normaliser.visit(node), annotate_fields=False))
    for statement in program.preamble(closure) if preamble else []:
        parts.append(ast.dump(ast.parse(statement.text), annotate_fields=False))
    return "\n".join(parts)


def signature_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The def's signature as written, e.g. ``(grid: np.ndarray, color=0) -> np.ndarray``."""
    text = ast.unparse(node.args)
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return f"({text}){returns}"


def positional_arity(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many positional parameters the def takes (varargs count as one)."""
    args = node.args
    return len(args.posonlyargs) + len(args.args) + (1 if args.vararg else 0)
