"""BARC seed solutions as verified ``transform`` programs.

BARC (Li et al., 2024; the ``seeds/`` folder of a checkout of xu3kev/BARC) holds 160
hand-written solutions of ARC-AGI-1 training tasks, the seed data the paper's memory starts
from. As shipped they cannot be run or abstracted as they are:

* they ``from common import *`` (BARC's helper library): the helpers a program uses are
  inlined into a library section (only those, with what they use in turn: every top-level
  statement binding or mutating a name they use, ``library/names.py``'s rule; all imports);
* the entry point is ``main``: it is renamed ``transform_xy``, and ``transform`` calls it;
* they index grids ``[x, y]`` (x = column): BARC's own evaluator calls ``main(grid.T)`` and
  compares the transposed result, so ``transform`` does the same for ARC's rows-first grids;
* they carry ``# concepts:`` label lines that would leak BARC's concept names into the
  memory: every such block is removed (the ``# description:`` stays);
* ``generate_input`` and everything below the "remove below this point" marker are BARC's
  puzzle generator, not the solution: they are left out.

Each converted program is run on its task's train pairs in the sandbox; only programs that
pass all of them are written, and every file that is not used is reported with the reason,
and so is every top-level statement of ``common.py`` run for its effect (no def, class or
assignment) that no written program carries.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.core.inlined_library import LIBRARY_BEGIN, LIBRARY_END
from arcmemo.library.names import Statement, mentioned, needed, rename_references

GENERATOR_MARKER = "remove below this point for prompting"
LIBRARY_FILE = "common.py"
# Files of BARC's seeds folder that are no seeds, and what they are (the report says so).
NOT_SEEDS = {
    LIBRARY_FILE: "the helper library, inlined into each seed that uses it",
    "template.py": "BARC's template for writing a new seed",
}
ENTRY = "main"
RENAMED_ENTRY = "transform_xy"
_TASK_ID = re.compile(r"^[0-9a-f]{8}$")
_CONCEPTS = re.compile(r"^\s*#\s*concepts\s*:", re.IGNORECASE)
_DESCRIPTION = re.compile(r"^\s*#\s*description\s*:", re.IGNORECASE)

WRAPPER = f'''

def transform(grid):
    """ARC's convention, grid[row, column]: this BARC program indexes grids [x, y]
    (x = column), so it gets the grid transposed and its result is transposed back, as
    BARC's own evaluator does."""
    return np.asarray({RENAMED_ENTRY}(np.asarray(grid).T)).T
'''


class BarcSeedError(ValueError):
    """A seed file that cannot be converted; the message says why."""


# Top-level statements of common.py that define something by what they are; any other
# (a loop, a condition, try, with, a call) runs for its effect and is reported when no
# written program carries it.
_DEFINITIONS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
)


@dataclass(frozen=True)
class Effect:
    """A top-level statement of the library run for its effect, and where it stands."""

    line: int
    kind: str
    statement: Statement


@dataclass(frozen=True)
class Library:
    """BARC's ``common.py``, split into its imports (every seed gets them all) and its other
    top-level statements (each binding and mutating names as ``library.names`` says), of
    which ``effects`` are those that are no def, class or assignment."""

    origin: str
    imports: tuple[str, ...]
    statements: tuple[Statement, ...]
    effects: tuple[Effect, ...] = ()

    def closure(self, names: Iterable[str]) -> list[Statement]:
        """The statements that ``names`` need, directly or through each other, in file
        order: every statement binding a needed name and every one mutating it
        (``TABLE = [0]`` and ``TABLE[A] = 1`` both)."""
        return needed(self.statements, names)


def _statement_lines(lines: list[str], node: ast.stmt) -> str:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)]) - 1
    end = node.end_lineno or node.lineno
    return "".join(lines[start:end]).rstrip() + "\n"


def load_library(path: Path) -> Library:
    """Parse BARC's ``common.py``."""
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise BarcSeedError(
            f"{path}: not valid Python ({error.msg}, line {error.lineno})"
        ) from None
    lines = text.splitlines(keepends=True)
    imports: list[str] = []
    statements: list[Statement] = []
    effects: list[Effect] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(_statement_lines(lines, node))
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring, or a bare constant: nothing runs
        statement = Statement.of(node, _statement_lines(lines, node))
        statements.append(statement)
        if not isinstance(node, _DEFINITIONS):
            effects.append(Effect(node.lineno, _kind(node), statement))
    return Library(
        origin=f"BARC {path.name}",
        imports=tuple(imports),
        statements=tuple(statements),
        effects=tuple(effects),
    )


def _kind(node: ast.stmt) -> str:
    if isinstance(node, ast.Expr):
        return "expression"
    return type(node).__name__.lower().removeprefix("async")


def strip_concept_labels(text: str) -> str:
    """``text`` without any ``# concepts:`` block (the header and its comment lines up to a
    blank line, a line of code or the ``# description:`` header)."""
    kept: list[str] = []
    dropping = False
    for line in text.splitlines(keepends=True):
        if _CONCEPTS.match(line):
            dropping = True
            continue
        if dropping:
            stripped = line.strip()
            if stripped.startswith("#") and not _DESCRIPTION.match(line):
                continue
            dropping = False
        kept.append(line)
    return re.sub(r"\n{3,}", "\n\n", "".join(kept))


def description_of(text: str) -> str:
    """The text of a seed's ``# description:`` comment block, joined into one paragraph."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if _DESCRIPTION.match(line):
            words = [line.split(":", 1)[1].strip()]
            for follow in lines[index + 1 :]:
                if not follow.strip().startswith("#"):
                    break
                words.append(follow.strip().lstrip("#").strip())
            return " ".join(w for w in words if w)
    return ""


@dataclass(frozen=True)
class ConvertedSeed:
    """A seed as a ``transform`` program."""

    task_id: str
    source: str
    description: str
    library_names: tuple[str, ...]
    # The library's statements inlined, in file order.
    inlined: tuple[Statement, ...] = ()


def convert_seed(text: str, library: Library, *, task_id: str) -> ConvertedSeed:
    """Convert one BARC seed file's text (see the module docstring for every step)."""
    solution = text.split(GENERATOR_MARKER, 1)[0]
    if GENERATOR_MARKER in text:  # the marker's own comment line goes too
        solution = solution.rsplit("\n", 1)[0] + "\n"
    try:
        tree = ast.parse(solution)
    except SyntaxError as error:
        raise BarcSeedError(f"not valid Python ({error.msg}, line {error.lineno})") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == ENTRY for n in tree.body):
        raise BarcSeedError(f"defines no {ENTRY}(input_grid) function")
    if any(isinstance(n, ast.FunctionDef) and n.name == "transform" for n in tree.body):
        raise BarcSeedError("already defines a function named transform")
    lines = solution.splitlines(keepends=True)
    drop: set[int] = set()
    common_at: int | None = None
    for node in tree.body:
        generator = isinstance(node, ast.FunctionDef) and node.name == "generate_input"
        main_guard = isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        uses_common = isinstance(node, ast.ImportFrom) and node.module == "common"
        uses_common |= isinstance(node, ast.Import) and any(a.name == "common" for a in node.names)
        if generator or main_guard or uses_common:
            decorators = getattr(node, "decorator_list", [])
            start = min([node.lineno, *(d.lineno for d in decorators)])
            drop.update(range(start, (node.end_lineno or node.lineno) + 1))
            if uses_common and common_at is None:
                common_at = start
    kept_tree = ast.Module(
        body=[
            n
            for n in tree.body
            if not (isinstance(n, ast.FunctionDef) and n.name == "generate_input")
        ],
        type_ignores=[],
    )
    inlined = library.closure(mentioned(kept_tree)) if common_at is not None else []
    section = ""
    if common_at is not None:
        section = (
            f"{LIBRARY_BEGIN} {library.origin}\n"
            "# (only what this program uses, and what that uses in turn)\n"
            + "".join(library.imports)
            + "\n\n"
            + "\n\n".join(d.text for d in inlined)
            + f"\n{LIBRARY_END}\n\n"
        )
    # The library goes where `from common import *` stood.
    split = common_at or 1
    kept = [(number, line) for number, line in enumerate(lines, 1) if number not in drop]
    program = (
        "".join(line for number, line in kept if number < split)
        + section
        + "".join(line for number, line in kept if number >= split)
    )
    program = rename_references(strip_concept_labels(program), {ENTRY: RENAMED_ENTRY})
    program = program.rstrip() + "\n" + WRAPPER
    names = tuple(sorted(name for d in inlined for name in d.binds))
    return ConvertedSeed(
        task_id=task_id,
        source=program,
        description=description_of(text),
        library_names=names,
        inlined=tuple(inlined),
    )


# -- importing a checkout --------------------------------------------------------------------


class NotUsed(BaseModel):
    """A file of the seeds folder that did not become a program, and why."""

    file: str
    reason: str


class LibraryLeftOut(BaseModel):
    """A top-level statement of the library run for its effect that no program carries."""

    line: int = Field(description="Its first line in the library file.")
    statement: str = Field(description="That line's text.")
    reason: str


class BarcImportReport(BaseModel):
    """What ``arcmemo seeds import-barc`` did."""

    source: str = Field(description="The seeds folder read.")
    out: str = Field(description="Where the programs were written (<task id>.py).")
    imported: list[str] = Field(default_factory=list, description="Task ids written, verified.")
    not_used: list[NotUsed] = Field(default_factory=list, description="Every file left out.")
    library_left_out: list[LibraryLeftOut] = Field(
        default_factory=list,
        description=(
            "Every top-level statement of the library that is no def, class or assignment "
            "(a loop, a condition, try, with, a call) and that no written program carries, "
            "since it binds and mutates no name one uses."
        ),
    )
    verified: bool = Field(description="Whether programs were run on their train pairs.")


def seeds_folder(path: Path) -> Path:
    """The ``seeds`` folder of a BARC checkout (``path`` may be the checkout or the folder)."""
    for candidate in (path / "seeds", path):
        if (candidate / LIBRARY_FILE).is_file():
            return candidate
    raise BarcSeedError(
        f"{path}: no BARC seeds here (expected {LIBRARY_FILE} in {path}/seeds or {path})"
    )


Verifier = Callable[[dict[str, ConvertedSeed]], dict[str, str | None]]


def verify_with_benchmark(benchmark: Any) -> Verifier:
    """A verifier running each program on its task's train pairs with ``benchmark.check``
    (an ARC benchmark): task id -> None when every train pair passes, else the reason."""
    from arcmemo.benchmarks.arc.data import ArcTaskError

    def verify(seeds: dict[str, ConvertedSeed]) -> dict[str, str | None]:
        tasks: dict[str, Any] = {}
        for task_id in seeds:
            try:
                (tasks[task_id],) = benchmark.find_tasks([task_id])
            except ArcTaskError:
                continue
        verdicts: dict[str, str | None] = {}
        for task_id, seed in seeds.items():
            task = tasks.get(task_id)
            if task is None:
                verdicts[task_id] = f"{task_id} is not an {benchmark.name.upper()} task"
                continue
            check = benchmark.check(task, f"```python\n{seed.source}```")
            verdicts[task_id] = None if check.verified else _failure(check)
        return verdicts

    return verify


def _failure(check: Any) -> str:
    if check.parse_error:
        return check.parse_error
    for pair in check.checks:
        if pair.correct:
            continue
        if pair.error:
            first = pair.error.strip().splitlines()[-1]
            return f"fails train pair {pair.index + 1}: {pair.error_kind or 'error'}: {first}"
        return f"fails train pair {pair.index + 1}: the output differs from the expected one"
    return "fails its train pairs"


def import_barc(barc_dir: Path, out: Path, *, verify: Verifier | None) -> BarcImportReport:
    """Convert every seed of a BARC checkout into ``out/<task id>.py``.

    With ``verify``, only programs that pass their train pairs are written. Every other
    entry of the folder is reported as not used, with why: files whose name is not a task
    id (BARC's alternative solutions such as ``25d487eb_Kevin.py``), folders, files that
    are not Python, the library (inlined) and the template.
    """
    folder = seeds_folder(barc_dir)
    library = load_library(folder / LIBRARY_FILE)
    report = BarcImportReport(source=str(folder), out=str(out), verified=verify is not None)
    converted: dict[str, ConvertedSeed] = {}
    for path in sorted(folder.iterdir()):
        if path.name in NOT_SEEDS:
            report.not_used.append(NotUsed(file=path.name, reason=NOT_SEEDS[path.name]))
            continue
        if path.is_dir():
            report.not_used.append(NotUsed(file=path.name + "/", reason="a folder, not a seed"))
            continue
        if path.suffix != ".py":
            report.not_used.append(NotUsed(file=path.name, reason="not a Python file"))
            continue
        if not _TASK_ID.match(path.stem):
            base = path.stem.split("_")[0]
            reason = "its name is not a task id"
            if _TASK_ID.match(base):
                reason += f" (an alternative solution of {base}; {base}.py is the seed)"
            report.not_used.append(NotUsed(file=path.name, reason=reason))
            continue
        try:
            converted[path.stem] = convert_seed(
                path.read_text(encoding="utf-8"), library, task_id=path.stem
            )
        except (BarcSeedError, UnicodeDecodeError) as error:
            report.not_used.append(NotUsed(file=path.name, reason=f"cannot convert: {error}"))
    verdicts = verify(converted) if verify is not None else dict.fromkeys(converted)
    out.mkdir(parents=True, exist_ok=True)
    for task_id, seed in converted.items():
        verdict = verdicts.get(task_id)
        if verdict is not None:
            report.not_used.append(NotUsed(file=f"{task_id}.py", reason=verdict))
            continue
        (out / f"{task_id}.py").write_text(seed.source, encoding="utf-8")
        report.imported.append(task_id)
    report.not_used.sort(key=lambda item: item.file)
    carried = {s for task_id in report.imported for s in converted[task_id].inlined}
    report.library_left_out = [
        _left_out(effect) for effect in library.effects if effect.statement not in carried
    ]
    return report


def _left_out(effect: Effect) -> LibraryLeftOut:
    statement = effect.statement
    names = sorted(statement.binds | statement.mutates)
    if names:
        reason = (
            f"a top-level {effect.kind} binding or mutating {', '.join(names)}, "
            "which no written program uses"
        )
    else:
        reason = f"a top-level {effect.kind} binding and mutating no name a program could use"
    return LibraryLeftOut(line=effect.line, statement=statement.text.splitlines()[0], reason=reason)
