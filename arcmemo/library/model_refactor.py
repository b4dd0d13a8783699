"""A library the model refactors and execution keeps honest.

``arcmemo library refactor`` with the abstract role's model: verified programs are grouped
(those whose tasks one concept of the memory names as sources, then those whose code is
alike, the rest in order; :data:`GROUP_SIZE` at a time) and each group is shown to the
model (``prompts/library/refactor.j2``), which proposes shared helper functions and
rewritten programs that import them. Execution decides what stays:

- a rewrite is kept only if, with the proposed helpers as its ``arcmemo_library``, it
  returns exactly the original program's output on every train and test input of its task
  (run in the sandbox); a rejected one is reported with the first input that differs;
- a proposed function is kept only if at least :data:`MIN_IMPORTERS` kept rewrites import
  it and the calls recorded while they ran (its tests) pass when it runs standalone;
  a rewrite that imports a function not kept is dropped in turn (until nothing changes);
- a proposed function with the code of a function the memory already has (the same syntax
  tree: formatting and comments aside) is that function: one kept rewrite importing it is
  enough, the recorded calls must pass on the memory's own function, and the rewrites'
  tasks join its sources and importers. One of that name with other code is refused.

Kept functions join the memory (a concept of their name, else a proposed one), with the
kept rewrites' tasks as sources and importers; a library function that no program imports
any more leaves the memory, with history (:mod:`arcmemo.library.prune`). The report counts
the corpus tokens before and after (and the library's, once), and the functions and imports
per program. Without a model the AST-based refactoring (:mod:`arcmemo.library.refactor`)
is the one that runs.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from arcmemo.core import prompting
from arcmemo.core.tokens import estimate_tokens
from arcmemo.library.calls import run_recorded_tests
from arcmemo.library.modules import MODULE_NAME, memory_functions
from arcmemo.library.prune import prune_unimported
from arcmemo.library.similar import similar_groups
from arcmemo.library.trace import Pair, trace_program
from arcmemo.memory.schema import Concept, LibraryFunction, Memory, RecordedCall
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.structured import OutputError, generate_structured, last_fenced_block
from arcmemo.sandbox import Program, Sandbox, SandboxLimits

GROUP_SIZE = 4
"""Programs shown to the model at once."""
MIN_IMPORTERS = 2
"""Kept rewrites that must import a proposed function for it to be kept."""
MAX_TESTS = 10
"""Recorded calls kept per function."""
MAX_ANSWER_CHARS = 200_000
"""Longest proposal read (a longer one is refused unread)."""
LIMITS = SandboxLimits(timeout_s=10.0)
PROPOSED_AUTHOR = "library refactor (proposed)"
_PROGRAM = re.compile(r'<program task="([^"\n<>]{1,200})">(.*?)</program>', re.DOTALL)


class Proposal(BaseModel):
    """A parsed model answer: the helpers module and the rewritten programs by task."""

    helpers: str
    functions: dict[str, str] = Field(description="Helper name -> its def's text.")
    programs: dict[str, str]


class Rewrite(BaseModel):
    """One program's proposed rewrite and what execution made of it."""

    task_id: str
    imports: list[str] = Field(default_factory=list, description="Library names it imports.")
    kept: bool = False
    rejected: str | None = Field(default=None, description="Why it was not kept.")


class ModelRefactorReport(BaseModel):
    """What ``library refactor --model`` did."""

    groups: int = 0
    proposals: int = Field(default=0, description="Usable proposals (model answers).")
    failed_proposals: list[str] = Field(
        default_factory=list, description="Groups whose answer could not be used, and why."
    )
    rewrites: list[Rewrite] = Field(default_factory=list)
    functions_kept: list[str] = Field(default_factory=list)
    functions_rejected: dict[str, str] = Field(
        default_factory=dict, description="Proposed function -> why it was not kept."
    )
    tokens_before: int = Field(default=0, description="Tokens of the program corpus before.")
    tokens_after: int = Field(default=0, description="Tokens of the corpus after (kept rewrites).")
    library_tokens: int = Field(default=0, description="Tokens of the kept functions, once.")
    functions_per_program: dict[str, int] = Field(
        default_factory=dict, description="Task -> defs in its program after."
    )
    imports_per_program: dict[str, int] = Field(
        default_factory=dict, description="Task -> library imports in its program after."
    )
    model_calls: int = 0
    groups_by: dict[str, int] = Field(
        default_factory=dict, description="Groups by what put them together (concept, ...)."
    )
    functions_pruned: list[str] = Field(
        default_factory=list,
        description="Library functions removed because no program imports them any more.",
    )
    functions_reused: list[str] = Field(
        default_factory=list,
        description="Proposed functions the memory already had with the same code, that kept "
        "rewrites now import (once per group).",
    )

    @property
    def kept(self) -> int:
        return sum(r.kept for r in self.rewrites)

    @property
    def rejected(self) -> int:
        return sum(not r.kept for r in self.rewrites)


class Group(NamedTuple):
    """Programs shown to the model together, and why: ``concept`` (a live concept names
    their tasks as sources; ``name`` is it), ``similar code``
    (:mod:`arcmemo.library.similar`) or ``order`` (what is left, in order)."""

    name: str
    tasks: list[str]
    by: str


def groups_of(
    memory: Memory,
    tasks: Sequence[str],
    size: int = GROUP_SIZE,
    sources: Mapping[str, str] | None = None,
) -> list[Group]:
    """Groups of at least two tasks, each task once: the tasks a live concept names as
    sources (largest first), then with ``sources`` (task -> program) those whose code is
    alike, then the rest in order."""
    left = list(tasks)
    groups: list[Group] = []
    by_concept = sorted(
        (c for c in memory.concepts if c.retired is None),
        key=lambda c: -len(set(c.provenance.sources) & set(tasks)),
    )
    for concept in by_concept:
        members = [t for t in left if t in set(concept.provenance.sources)][:size]
        if len(members) >= MIN_IMPORTERS:
            groups.append(Group(concept.name, members, "concept"))
            left = [t for t in left if t not in members]
    if sources is not None:
        alike, left = similar_groups(sources, left, size)
        groups += [Group("", members, "similar code") for members in alike]
    chunks = [left[i : i + size] for i in range(0, len(left), size)]
    groups += [Group("", chunk, "order") for chunk in chunks]
    return [g for g in groups if len(g.tasks) >= MIN_IMPORTERS]


def _defs(tree: ast.Module, text: str) -> dict[str, str]:
    return {
        node.name: ast.get_source_segment(text, node) or ""
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def _code(block: str) -> str:
    return last_fenced_block(block, ("python", "py", "")) if "```" in block else block.strip()


def parse_proposal(text: str, tasks: Sequence[str]) -> Proposal:
    """The helpers and rewrites of a model answer; raises OutputError on what is unusable."""
    if len(text) > MAX_ANSWER_CHARS:
        raise OutputError(f"the answer is over {MAX_ANSWER_CHARS} characters")
    found = re.search(r"<helpers>(.*?)</helpers>", text, re.DOTALL)
    if found is None:
        raise OutputError("expected the helpers inside <helpers>...</helpers>")
    helpers = _code(found.group(1))
    try:
        functions = _defs(ast.parse(helpers), helpers)
    except SyntaxError as error:
        raise OutputError(f"the helpers do not parse: line {error.lineno}: {error.msg}") from None
    if not functions:
        raise OutputError("the helpers block defines no function")
    programs: dict[str, str] = {}
    for task_id, body in _PROGRAM.findall(text):
        if task_id not in tasks:
            raise OutputError(f"program {task_id!r} is not one of the programs shown")
        source = _code(body)
        try:
            ast.parse(source)
        except SyntaxError as error:
            raise OutputError(
                f"program {task_id}: does not parse: line {error.lineno}: {error.msg}"
            ) from None
        programs[task_id] = source
    if not programs:
        raise OutputError('expected rewritten programs inside <program task="ID">...</program>')
    return Proposal(helpers=helpers, functions=functions, programs=programs)


def imported(source: str) -> list[str]:
    """The library names ``source`` imports."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == MODULE_NAME:
            names += [alias.name for alias in node.names]
    return names


def _normal(value: Any) -> Any:
    return value.tolist() if hasattr(value, "tolist") else value


def run_outputs(
    sandbox: Sandbox,
    source: str,
    inputs: Sequence[Any],
    library: str = "",
    entry: str = "transform",
) -> list[tuple[bool, Any]]:
    """(ran, output or error kind) of ``source`` on each input."""
    program = Program(source=source, entry=entry, bindings={"np": "numpy"}, library=library)
    results = sandbox.run(program, [[grid] for grid in inputs], limits=LIMITS)
    return [(r.ok, _normal(r.value) if r.ok else r.error_kind) for r in results]


def first_difference(
    reference: Sequence[tuple[bool, Any]], got: Sequence[tuple[bool, Any]], n_train: int
) -> str | None:
    """The first input where ``got`` is not ``reference``, named (None when identical)."""
    for index, (want, have) in enumerate(zip(reference, got, strict=True)):
        if want != have:
            where = (
                f"train input {index + 1}"
                if index < n_train
                else (f"test input {index - n_train + 1}")
            )
            what = "an error" if not have[0] else "a different output"
            return f"{where}: {what} ({str(have[1])[:80]})"
    return None


def _inlined(helpers: str, source: str) -> str:
    """``source`` with its library imports replaced by the helpers' text (for tracing)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    drop = {
        line
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == MODULE_NAME
        for line in range(node.lineno - 1, node.end_lineno or node.lineno)
    }
    body = "".join(line for i, line in enumerate(lines) if i not in drop)
    return helpers.rstrip() + "\n\n\n" + body


def _header(helpers: str) -> str:
    tree = ast.parse(helpers)
    parts = [
        ast.get_source_segment(helpers, node) or ""
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    return "".join(p + "\n" for p in parts)


async def refactor_with_model(
    programs: Mapping[str, str],
    inputs: Mapping[str, tuple[Sequence[Any], Sequence[Any]]],
    memory: Memory,
    sandbox: Sandbox,
    model: ModelClient,
    *,
    entry: str = "transform",
) -> tuple[ModelRefactorReport, dict[str, str]]:
    """Refactor ``programs`` (task -> source) with ``model``; ``inputs``: task -> (train
    inputs, test inputs). Kept functions are added to ``memory`` (the caller saves it);
    returns the report and every program as kept (rewritten or original)."""
    report = ModelRefactorReport()
    kept_text = dict(programs)
    report.tokens_before = sum(estimate_tokens(s) for s in programs.values())
    every = {t: [*inputs[t][0], *inputs[t][1]] for t in programs}
    reference = {t: run_outputs(sandbox, programs[t], every[t], entry=entry) for t in programs}
    runnable = [t for t in programs if all(ok for ok, _ in reference[t])]
    for concept, tasks, by in groups_of(memory, runnable, sources=programs):
        report.groups += 1
        report.groups_by[by] = report.groups_by.get(by, 0) + 1
        shown = [{"task_id": t, "source": programs[t]} for t in tasks]
        content = prompting.render(
            "library/refactor", programs=shown, concept=concept, module=MODULE_NAME
        )
        answer = await generate_structured(
            model,
            [Message(role="user", content=content)],
            functools.partial(parse_proposal, tasks=tasks),
            stage="refactor",
            task_id=tasks[0],
        )
        report.model_calls += len(answer.raw)
        if not answer.ok or answer.value is None:
            report.failed_proposals.append(f"{', '.join(tasks)}: {answer.error}")
            continue
        report.proposals += 1
        proposal = answer.value
        rewrites = _verify_rewrites(sandbox, proposal, reference, every, inputs, entry)
        existing = memory_functions(memory)
        accepted = _accept_functions(
            sandbox, proposal, rewrites, reference, every, existing, concept, entry, report
        )
        for rewrite in rewrites:
            report.rewrites.append(rewrite)
            if rewrite.kept:
                kept_text[rewrite.task_id] = proposal.programs[rewrite.task_id]
        for function in accepted:
            if function.name in existing:
                _reuse(existing[function.name], function)
                report.functions_reused.append(function.name)
                continue
            _attach(memory, function, concept)
            report.functions_kept.append(function.name)
            report.library_tokens += estimate_tokens(function.source)
    report.functions_pruned = prune_unimported(memory, kept_text)
    report.tokens_after = sum(estimate_tokens(s) for s in kept_text.values())
    for task, text in kept_text.items():
        tree = ast.parse(text)
        report.functions_per_program[task] = sum(isinstance(n, ast.FunctionDef) for n in tree.body)
        report.imports_per_program[task] = len(imported(text))
    return report, kept_text


def _verify_rewrites(
    sandbox: Sandbox,
    proposal: Proposal,
    reference: Mapping[str, list[tuple[bool, Any]]],
    every: Mapping[str, list[Any]],
    inputs: Mapping[str, tuple[Sequence[Any], Sequence[Any]]],
    entry: str,
) -> list[Rewrite]:
    rewrites = []
    for task, source in proposal.programs.items():
        names = imported(source)
        rewrite = Rewrite(task_id=task, imports=names)
        unknown = [n for n in names if n not in proposal.functions]
        if unknown:
            rewrite.rejected = f"imports {', '.join(unknown)}, which the helpers do not define"
        else:
            got = run_outputs(sandbox, source, every[task], proposal.helpers, entry)
            rewrite.rejected = first_difference(reference[task], got, len(inputs[task][0]))
        rewrite.kept = rewrite.rejected is None
        rewrites.append(rewrite)
    return rewrites


def _accept_functions(
    sandbox: Sandbox,
    proposal: Proposal,
    rewrites: list[Rewrite],
    reference: Mapping[str, list[tuple[bool, Any]]],
    every: Mapping[str, list[Any]],
    existing: Mapping[str, LibraryFunction],
    concept: str,
    entry: str,
    report: ModelRefactorReport,
) -> list[LibraryFunction]:
    """The proposed functions that enough kept rewrites import and whose recorded calls
    pass standalone; rewrites importing a rejected function are dropped (to a fixpoint).
    A function the memory has with the same code comes back with the calls recorded of it
    (they passed on the memory's own function), for :func:`_reuse`."""
    rejected = report.functions_rejected
    for name in proposal.functions:
        if name in existing and not same_code(existing[name].source, proposal.functions[name]):
            rejected[name] = "the memory already has a library function of this name, other code"
    while True:
        for rewrite in rewrites:
            bad = [n for n in rewrite.imports if n in rejected]
            if rewrite.kept and bad:
                rewrite.kept = False
                rewrite.rejected = f"imports {', '.join(bad)}, which was not kept"
        importers = {
            name: [r.task_id for r in rewrites if r.kept and name in r.imports]
            for name in proposal.functions
            if name not in rejected
        }
        few = {
            n: least
            for n, users in importers.items()
            if len(users) < (least := 1 if n in existing else MIN_IMPORTERS)
        }
        for name, least in few.items():
            rejected[name] = (
                f"imported by {len(importers[name])} kept rewrite(s), fewer than {least}"
            )
        if few:
            continue
        functions = _recorded(sandbox, proposal, rewrites, reference, every, importers, entry)
        failing = _failing(sandbox, functions, existing)
        for name, why in failing.items():
            rejected[name] = why
        if not failing:
            return list(functions.values())


def _recorded(
    sandbox: Sandbox,
    proposal: Proposal,
    rewrites: list[Rewrite],
    reference: Mapping[str, list[tuple[bool, Any]]],
    every: Mapping[str, list[Any]],
    importers: Mapping[str, list[str]],
    entry: str,
) -> dict[str, LibraryFunction]:
    """The functions with the calls the kept rewrites made of them as their tests."""
    calls: dict[str, list[RecordedCall]] = {name: [] for name in importers}
    header = _header(proposal.helpers)
    for rewrite in rewrites:
        if not rewrite.kept:
            continue
        task = rewrite.task_id
        pairs: list[Pair] = [
            (grid, output) for grid, (_, output) in zip(every[task], reference[task], strict=True)
        ]
        trace = trace_program(
            sandbox,
            task,
            _inlined(proposal.helpers, proposal.programs[task]),
            pairs,
            [n for n in rewrite.imports if n in calls],
            entry=entry,
        )
        for name, recorded in trace.calls.items():
            calls[name] += recorded
    return {
        name: LibraryFunction(
            name=name,
            source=header + proposal.functions[name] + "\n",
            docstring=ast.get_docstring(ast.parse(proposal.functions[name]).body[0]) or "",  # type: ignore[arg-type]
            tests=calls[name][:MAX_TESTS],
            sources=list(users),
            imported_by=list(users),
        )
        for name, users in importers.items()
    }


def _failing(
    sandbox: Sandbox,
    functions: Mapping[str, LibraryFunction],
    existing: Mapping[str, LibraryFunction],
) -> dict[str, str]:
    """Function -> why its recorded tests do not pass standalone (none: all pass). One
    the memory has already runs as the memory's own text, with what it calls there."""
    failing = {n: "no call of it was recorded" for n, f in functions.items() if not f.tests}
    tested = [
        existing[n].model_copy(update={"tests": f.tests}) if n in existing else f
        for n, f in functions.items()
    ]
    others = [f for n, f in existing.items() if n not in functions]
    scratch = Memory(domain="arc")
    scratch.concepts.append(Concept(name="scratch", kind="routine", functions=others + tested))
    for result in run_recorded_tests(scratch, sandbox, names=list(functions)):
        if not result.ok and result.name not in failing:
            failing[result.name] = "recorded tests fail standalone: " + "; ".join(
                result.failures[:2]
            )
    return failing


def same_code(source: str, proposed: str) -> bool:
    """Whether the def ``proposed`` is the same code as the def of its name in ``source``
    (the same syntax tree: formatting and comments aside, the docstring counted)."""
    try:
        (node,) = [n for n in ast.parse(proposed).body if isinstance(n, ast.FunctionDef)]
        mine = [
            n
            for n in ast.parse(source).body
            if isinstance(n, ast.FunctionDef) and n.name == node.name
        ]
    except (SyntaxError, ValueError):
        return False
    return len(mine) == 1 and ast.dump(mine[0]) == ast.dump(node)


def _reuse(function: LibraryFunction, found: LibraryFunction) -> None:
    """The memory's ``function`` gains the kept rewrites' tasks as sources and importers,
    and their recorded calls as tests (up to :data:`MAX_TESTS`)."""
    for task in found.sources:
        if task not in function.sources:
            function.sources.append(task)
        if task not in function.imported_by:
            function.imported_by.append(task)
    function.tests += found.tests[: max(0, MAX_TESTS - len(function.tests))]


def _attach(memory: Memory, function: LibraryFunction, concept: str) -> None:
    """Join the group's routine concept, else one of the function's name, else propose one."""
    for name in (concept, function.name.replace("_", " ")):
        found = memory.find(name) if name else None
        if found is not None and found.kind == "routine" and found.retired is None:
            found.functions.append(function)
            return
    memory.add(
        Concept(
            name=function.name.replace("_", " "),
            kind="routine",
            routine_subtype="intermediate",
            description=(function.docstring.split("\n\n")[0] or function.name)[:300],
            functions=[function],
        ),
        actor=PROPOSED_AUTHOR,
        why="a shared helper the refactoring model proposed, kept by execution",
    )


def refactor_sync(
    programs: Mapping[str, str],
    inputs: Mapping[str, tuple[Sequence[Any], Sequence[Any]]],
    memory: Memory,
    sandbox: Sandbox,
    model: ModelClient,
    **kwargs: Any,
) -> tuple[ModelRefactorReport, dict[str, str]]:
    """:func:`refactor_with_model` run to completion (for the command line); closes
    ``model``."""

    async def go() -> tuple[ModelRefactorReport, dict[str, str]]:
        try:
            return await refactor_with_model(programs, inputs, memory, sandbox, model, **kwargs)
        finally:
            await model.aclose()

    return asyncio.run(go())
