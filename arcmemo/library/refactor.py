"""Refactoring: verified programs rewritten to import library functions.

A helper of a program is replaced by ``from arcmemo_library import f as helper`` when the
library function ``f`` has the helper's behaviour: its closure has the same normalised
AST as ``f``'s, or ``f`` was extracted from this task's program; in both cases the
helper, run standalone, must reproduce every recorded test of ``f``. Imports and classes
nothing uses any more are dropped with it. The rewritten program must still produce every
expected output of its task, else the original is kept (and the report says why).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel, Field

from arcmemo.core.tokens import estimate_tokens
from arcmemo.library.calls import passes, run_calls
from arcmemo.library.modules import MODULE_NAME, closure, memory_functions, module_text
from arcmemo.library.split import (
    SplitProgram,
    normalised_closure,
    positional_arity,
    split_program,
)
from arcmemo.library.trace import Pair
from arcmemo.memory.schema import LibraryFunction, Memory
from arcmemo.sandbox import Program, Sandbox, SandboxLimits

REFACTOR_LIMITS = SandboxLimits(timeout_s=10.0)


class ProgramRefactor(BaseModel):
    """One program before and after."""

    task_id: str
    imports: dict[str, str] = Field(
        default_factory=dict, description="Helper -> the library function it now imports."
    )
    tokens_before: int
    tokens_after: int
    passed: bool = Field(description="The rewritten program produces every expected output.")
    error: str | None = Field(default=None, description="Why the original was kept.")


class RefactorReport(BaseModel):
    """Every program's refactor, with the totals."""

    programs: list[ProgramRefactor] = Field(default_factory=list)
    library_tokens: int = Field(
        default=0, description="Tokens of the library functions the programs import, once."
    )

    @property
    def tokens_before(self) -> int:
        return sum(p.tokens_before for p in self.programs)

    @property
    def tokens_after(self) -> int:
        return sum(p.tokens_after for p in self.programs)

    @property
    def passing(self) -> int:
        return sum(1 for p in self.programs if p.passed)


def _library_program(functions: Mapping[str, LibraryFunction]) -> SplitProgram:
    return split_program("library", module_text(functions.values()), frozenset())


def _code_key(program: SplitProgram, name: str) -> str:
    # The code only: a program's own imports and classes around the same functions differ
    # from the library module's, and the program's verification checks what they do.
    return normalised_closure(program, name, preamble=False)


def _matches(
    program: SplitProgram,
    functions: Mapping[str, LibraryFunction],
    library: SplitProgram,
) -> dict[str, list[str]]:
    """Helper -> the library functions that may have its behaviour, best first: those
    with the same normalised code, then those extracted from this task's program."""
    keys = {name: _code_key(library, name) for name in functions}
    found: dict[str, list[str]] = {}
    for helper, node in program.helpers.items():
        key = _code_key(program, helper)
        same = [name for name in functions if keys[name] == key]
        arity = positional_arity(node.node)
        sourced = [
            name
            for name, f in functions.items()
            if program.task_id in f.sources
            and name not in same
            and positional_arity(library.helpers[name].node) == arity
        ]
        if same or sourced:
            found[helper] = same + sourced
    return found


def _behaves_as(
    sandbox: Sandbox, program: SplitProgram, helper: str, function: LibraryFunction
) -> bool:
    """Whether the helper, standalone, reproduces every recorded test of ``function``."""
    if not function.tests:
        return False
    names = program.helper_closure(helper)
    texts = [s.text for s in program.preamble(names)]
    texts += [program.helpers[name].text for name in names]
    outcomes = run_calls(sandbox, "\n\n".join(texts) + "\n", helper, list(function.tests))
    return all(passes(outcomes, list(function.tests)))


def rewrite(source: str, imports: Mapping[str, str]) -> str:
    """``source`` with each helper in ``imports`` replaced by an import of its library
    function (imported only where the rest of the program uses it), and the imports and
    classes nothing uses any more removed."""
    tree = ast.parse(source)
    drop: list[ast.stmt] = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in imports
    ]
    kept = [node for node in tree.body if node not in drop]
    while True:
        used = {n.id for node in kept for n in ast.walk(node) if isinstance(n, ast.Name)}
        unused = [node for node in kept if _removable(node, used)]
        if not unused:
            break
        drop += unused
        kept = [node for node in kept if node not in unused]
    lines = source.splitlines(keepends=True)
    removed: set[int] = set()
    for node in drop:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        removed.update(range(first - 1, node.end_lineno or node.lineno))
    body = "".join(line for index, line in enumerate(lines) if index not in removed)
    header = "".join(
        f"from {MODULE_NAME} import {name}\n"
        if name == helper
        else f"from {MODULE_NAME} import {name} as {helper}\n"
        for helper, name in sorted(imports.items())
        if helper in used
    )
    return header + body


def _removable(node: ast.stmt, used: set[str]) -> bool:
    if isinstance(node, ast.ClassDef):
        return node.name not in used
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        names = [alias.asname or alias.name.split(".")[0] for alias in node.names]
        return "*" not in names and not any(name in used for name in names)
    return False


def _verify(
    sandbox: Sandbox, source: str, library: str, pairs: Sequence[Pair], entry: str
) -> str | None:
    """Why ``source`` fails its task's pairs, or None: run as ``arcmemo run`` runs a
    program, with ``library`` as the ``arcmemo_library`` it imports (Program.library)."""
    program = Program(source=source, entry=entry, bindings={"np": "numpy"}, library=library)
    results = sandbox.run(program, [[grid] for grid, _ in pairs], limits=REFACTOR_LIMITS)
    for index, (result, (_, expected)) in enumerate(zip(results, pairs, strict=True)):
        value = result.value
        if hasattr(value, "tolist"):
            value = value.tolist()
        if not result.ok:
            return f"example {index}: {result.error_kind}: {(result.error or '')[-200:]}"
        if value != expected:
            return f"example {index}: not the expected output"
    return None


def refactor_program(
    sandbox: Sandbox,
    memory: Memory,
    task_id: str,
    source: str,
    pairs: Sequence[Pair],
    *,
    entry: str = "transform",
    entry_points: frozenset[str] = frozenset({"transform"}),
) -> tuple[ProgramRefactor, str]:
    """One program refactored and re-verified: the report and the text kept (the
    rewritten one when it passes, else the original)."""
    functions = memory_functions(memory)
    before = estimate_tokens(source)
    program = split_program(task_id, source, entry_points | {entry})
    library = _library_program(functions)
    imports: dict[str, str] = {}
    same_code: dict[str, str] = {}
    keys = {name: _code_key(library, name) for name in functions}
    for helper, names in _matches(program, functions, library).items():
        for name in names:
            if _behaves_as(sandbox, program, helper, functions[name]):
                imports[helper] = name
                if keys[name] == _code_key(program, helper):
                    same_code[helper] = name
                break
    if not imports:
        report = ProgramRefactor(
            task_id=task_id, tokens_before=before, tokens_after=before, passed=True
        )
        return report, source
    # A function that only matched the helper's behaviour on the recorded calls may still
    # differ on this task's inputs: then the helpers with the same code alone are tried.
    attempts = [imports] if same_code in ({}, imports) else [imports, same_code]
    for attempt in attempts:
        imports = attempt
        rewritten = rewrite(source, imports)
        needed: list[str] = []
        for name in imports.values():
            needed += [n for n in closure(functions, name) if n not in needed]
        text = module_text(functions[name] for name in needed)
        error = _verify(sandbox, rewritten, text, pairs, entry)
        if error is None:
            break
    kept = source if error else rewritten
    report = ProgramRefactor(
        task_id=task_id,
        imports=imports,
        tokens_before=before,
        tokens_after=estimate_tokens(kept),
        passed=error is None,
        error=error,
    )
    return report, kept


def refactor_programs(
    programs: Mapping[str, str],
    tasks: Mapping[str, Sequence[Pair]],
    memory: Memory,
    sandbox: Sandbox,
    *,
    entry: str = "transform",
    entry_points: frozenset[str] = frozenset({"transform"}),
    workers: int = 2,
) -> tuple[RefactorReport, dict[str, str]]:
    """Refactor every program (task id -> source) against the memory's library and
    re-verify it on its task's pairs: the report and the programs kept, by task."""

    def one(task_id: str) -> tuple[ProgramRefactor, str]:
        return refactor_program(
            sandbox,
            memory,
            task_id,
            programs[task_id],
            tasks.get(task_id, []),
            entry=entry,
            entry_points=entry_points,
        )

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        done = list(pool.map(one, list(programs)))
    report = RefactorReport(programs=[r for r, _ in done])
    used = {name for r in report.programs if r.passed for name in r.imports.values()}
    functions = memory_functions(memory)
    needed = {n for name in used for n in closure(functions, name)}
    if needed:
        report.library_tokens = estimate_tokens(
            module_text(functions[n] for n in functions if n in needed)
        )
    return report, {task: text for task, (_, text) in zip(programs, done, strict=True)}
