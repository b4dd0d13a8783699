"""Attribution: did a task's solution use the concepts its prompt showed?

After a task is final, every concept shown to it (first selection and reselections on
retries, in prompts the solver answered: :attr:`~arcmemo.core.records.TaskResult.shown`) gets one
verdict, stored as the task id in the concept's stats:

* ``helpful``: the write signal confirmed a solution, that step's prompt showed the concept
  and the solution uses it;
* ``harmful``: no solution was confirmed, and a step whose prompt showed the concept used
  it (so it was followed and the attempt still failed verification);
* ``unused``: every other shown concept (shown, but no attributed step used it; also a
  concept an unconfirmed attempt ignored, and one a confirmed solution ignored even if a
  failed retry had used it).

"Uses" is exact for a concept that carries library functions (:mod:`arcmemo.library`):
the solution imports one of them from ``arcmemo_library`` (credit by import; a concept whose
function a confirmed solution imported is attributed even where no prompt showed it, as
``--library all`` allows, and the task joins the function's ``imported_by``). For a concept
without code, "uses" is a cheap lexical/structural check (:func:`concept_evidence`) of the concept
against the step's solution: for a Python program its AST identifiers, calls and comments,
otherwise the words of the answer. It matches (a) every content word of the concept's name,
(b) a specific parameter name as an identifier, or (c) a call named in an implementation
note (``np.rot90(...)``, ```flood_fill```). The benchmark's own identifiers
(:attr:`~arcmemo.benchmarks.base.Benchmark.entry_points`: ARC's ``transform``, which every
program defines) are left out of the solution first: a concept whose parameter or call has
that name would otherwise be "used" by every program. So is a converted seed's library
section (:mod:`arcmemo.core.inlined_library`: helpers inlined from another project's library,
which the program's own calls to them still show). It is evidence, not proof: a solution can
use an idea under other names (missed) or share a generic word (over-counted); the run
option ``attribution_judge`` adds the aux model's opinion (:mod:`arcmemo.memory.judge`),
which then decides. Lessons are not
attributed: free-text advice has no names to find in a program.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Collection
from typing import Literal

from pydantic import BaseModel, Field

from arcmemo.core.inlined_library import without_library
from arcmemo.core.records import Step, TaskResult
from arcmemo.memory.schema import LIBRARY_MODULE, Concept, Memory, concept_id

Verdict = Literal["helpful", "unused", "harmful"]
VERDICTS: tuple[Verdict, ...] = ("helpful", "unused", "harmful")

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_BACKTICKED = re.compile(r"`([A-Za-z_][\w.]*)`")
# Words too common in concept names to count as evidence on their own.
STOP_WORDS = frozenset(
    {
        "a", "an", "the", "of", "to", "in", "on", "by", "for", "with", "into", "from", "and",
        "or", "at", "as", "its", "each", "per",
    }
)  # fmt: skip
# Parameter names every grid program has; matching one says nothing about the concept.
GENERIC_PARAMETERS = frozenset(
    {
        "grid", "grids", "color", "colour", "colors", "value", "values", "input", "output",
        "x", "y", "i", "j", "k", "n", "m", "shape", "size", "object", "objects", "obj", "cell",
        "cells", "row", "rows", "col", "cols", "column", "columns", "image", "array",
    }
)  # fmt: skip
# Calls every program makes; a note naming one says nothing about the concept.
GENERIC_CALLS = frozenset(
    {
        "len", "range", "list", "dict", "set", "tuple", "int", "str", "print", "enumerate",
        "zip", "min", "max", "sum", "sorted", "array", "zeros", "zeros_like", "copy", "where",
    }
)  # fmt: skip


def words(text: str) -> list[str]:
    """Lower-case singular words of ``text``; identifiers split at ``_`` and camelCase."""
    return [w for w in concept_id(_CAMEL.sub(" ", text)).split("-") if w]


class SolutionText(BaseModel):
    """What a solution is made of, for matching concepts against it."""

    words: set[str] = Field(default_factory=set, description="Every word of the solution.")
    identifiers: set[str] = Field(
        default_factory=set, description="Normalized identifiers (Python programs only)."
    )
    calls: set[str] = Field(
        default_factory=set, description="Last part of every called name (programs only)."
    )


def _python_parts(program: str, ignore: Collection[str]) -> SolutionText | None:
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    calls: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.arg, ast.keyword)) and node.arg:
            names.add(node.arg)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                calls.add(func.attr.lower())
            elif isinstance(func, ast.Name) and func.id not in ignore:
                calls.add(func.id.lower())
    comments = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(program).readline):
            if token.type == tokenize.COMMENT:
                comments.append(token.string)
    except (tokenize.TokenError, IndentationError):
        pass
    names -= set(ignore)  # the harness's names: every program has them
    found = {w for name in names for w in words(name)}
    found |= {w for comment in comments for w in words(comment)}
    identifiers = {"_".join(words(name)) for name in names}
    return SolutionText(words=found, identifiers=identifiers, calls=calls)


def solution_text(step: Step, ignore: Collection[str] = ()) -> SolutionText:
    """The parts of ``step``'s solution: its program when the candidate is Python (ARC),
    else the words of the whole answer (a worked solution). Identifiers in ``ignore`` (the
    benchmark's entry points) are no part of a program's solution."""
    program = without_library(step.candidate or "", note=False)
    parsed = _python_parts(program, ignore) if "\n" in program or "def " in program else None
    if parsed is not None:
        return parsed
    return SolutionText(words=set(words(step.completion)))


def _note_calls(notes: list[str]) -> set[str]:
    found: set[str] = set()
    for note in notes:
        for name in [*_CALL.findall(note), *_BACKTICKED.findall(note)]:
            last = name.rsplit(".", 1)[-1].lower()
            if last and last not in GENERIC_CALLS:
                found.add(last)
    return found


def concept_evidence(concept: Concept, solution: SolutionText) -> list[str]:
    """Why ``solution`` counts as using ``concept``: one line per matching rule, [] if
    none matches."""
    evidence: list[str] = []
    content = [w for w in words(concept.name) if w not in STOP_WORDS]
    if content and all(w in solution.words for w in content):
        evidence.append(f"name words {', '.join(dict.fromkeys(content))}")
    for param in concept.parameters:
        ident = "_".join(words(param.name))
        if ident and ident not in GENERIC_PARAMETERS and ident in solution.identifiers:
            evidence.append(f"parameter {param.name}")
    for call in sorted(_note_calls(concept.implementation) & solution.calls):
        evidence.append(f"implementation call {call}")
    return evidence


def imported_functions(program: str) -> set[str]:
    """The names ``program`` takes from ``arcmemo_library``: ``from arcmemo_library import f``
    (``as g`` or not), ``arcmemo_library.f`` after ``import arcmemo_library [as L]``, and, after
    a star import, every name the program uses (the library's among them)."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError):
        return set()
    found: set[str] = set()
    aliases: set[str] = set()
    star = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == LIBRARY_MODULE and not node.level:
            for alias in node.names:
                star |= alias.name == "*"
                found.add(alias.name)
        elif isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == LIBRARY_MODULE}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            found.add(node.attr)
        elif star and isinstance(node, ast.Name):
            found.add(node.id)
    found.discard("*")
    return found


def import_evidence(concept: Concept, imported: set[str]) -> list[str]:
    """Why a solution importing ``imported`` uses ``concept``: one line per function of the
    concept it imports ([] if none)."""
    return [f"imports {f.name}" for f in concept.functions if f.name in imported]


def _imports(step: Step) -> set[str]:
    return imported_functions(without_library(step.candidate or "", note=False))


class ConceptVerdict(BaseModel):
    """One shown concept's verdict for one task."""

    concept_id: str
    name: str
    verdict: Verdict
    evidence: list[str] = Field(default_factory=list, description="Why it counts as used.")
    imported: list[str] = Field(
        default_factory=list,
        description="Library functions of the concept the attributed solution imported "
        "(credit by import); a helpful verdict records the task in their imported_by.",
    )


class TaskAttribution(BaseModel):
    """Every shown concept's verdict for one task (one line of ``attribution.jsonl``)."""

    task_id: str
    confirmed: bool = Field(description="The write signal confirmed a solution.")
    verdicts: list[ConceptVerdict] = Field(default_factory=list)


def _importers(memory: Memory, imports: dict[int, set[str]]) -> dict[str, list[int]]:
    """Concept id -> the steps (by identity) that imported one of its functions."""
    wanted = set().union(*imports.values()) if imports else set()
    steps: dict[str, list[int]] = {}
    if not wanted:
        return steps
    for concept in memory.concepts:
        names = {f.name for f in concept.functions} & wanted
        if names:
            steps[concept.id] = [s for s, found in imports.items() if names & found]
    return steps


def _judged(
    concept: Concept, used: bool, evidence: list[str], judged: dict[str, bool] | None
) -> tuple[bool, list[str]]:
    """The aux model's opinion, when it gave one for ``concept``, decides "used"."""
    if judged is None or concept.id not in judged:
        return used, evidence
    opinion = judged[concept.id]
    return opinion, [*evidence, f"aux model: {'used' if opinion else 'not used'}"]


def attribute_task(
    memory: Memory,
    result: TaskResult,
    confirmed: Step | None,
    judged: dict[str, bool] | None = None,
    *,
    ignore: Collection[str] = (),
) -> TaskAttribution:
    """The verdict of every concept of ``memory`` shown to ``result``'s task; ``confirmed``
    is the step the write signal confirmed (None when it confirmed none); ``judged`` the aux
    model's opinions by concept id (:mod:`arcmemo.memory.judge`), which override the lexical
    check for the concepts they name; ``ignore`` the benchmark's entry points
    (:attr:`~arcmemo.benchmarks.base.Benchmark.entry_points`), never evidence."""
    attribution = TaskAttribution(task_id=result.task_id, confirmed=confirmed is not None)
    steps = [s for a in result.attempts for s in a.steps if s.answered]
    texts = {id(s): solution_text(s, ignore) for s in steps}
    imports = {id(s): _imports(s) for s in steps}
    importers = _importers(memory, imports)
    # Shown concepts, then those only imported (a library wider than the selection).
    names = [*result.shown, *importers]
    seen: set[str] = set()
    for name in names:
        concept = memory.find(name)
        if concept is None or concept.id in seen:
            continue  # a lesson, or a concept no longer in the memory
        seen.add(concept.id)
        reached = set(importers.get(concept.id, ()))
        shown_to = [
            s
            for s in steps
            if id(s) in reached or any(memory.find(n) is concept for n in s.concepts)
        ]

        def uses(step: Step, concept: Concept = concept) -> list[str]:
            # Code decides for a concept that has it; the words only for one without.
            if concept.functions:
                return import_evidence(concept, imports[id(step)])
            return concept_evidence(concept, texts[id(step)])

        verdict: Verdict = "unused"
        evidence: list[str] = []
        used_step: Step | None = None
        if confirmed is not None:
            if any(s is confirmed for s in shown_to):
                evidence = uses(confirmed)
                used, evidence = _decided(concept, evidence, judged)
                verdict = "helpful" if used else "unused"
                used_step = confirmed if used else None
        elif shown_to:
            for step in shown_to:
                evidence = uses(step)
                if evidence:
                    break
            used, evidence = _decided(concept, evidence, judged)
            verdict = "harmful" if used else "unused"
        imported = (
            sorted(f.name for f in concept.functions if f.name in imports[id(used_step)])
            if used_step is not None
            else []
        )
        attribution.verdicts.append(
            ConceptVerdict(
                concept_id=concept.id,
                name=concept.name,
                verdict=verdict,
                evidence=evidence,
                imported=imported,
            )
        )
    return attribution


def _decided(
    concept: Concept, evidence: list[str], judged: dict[str, bool] | None
) -> tuple[bool, list[str]]:
    """An import is exact: the aux model's opinion decides only for concepts without code."""
    if concept.functions:
        return bool(evidence), evidence
    return _judged(concept, bool(evidence), evidence, judged)


def record_attribution(memory: Memory, attribution: TaskAttribution) -> int:
    """Add ``attribution``'s verdicts to the concepts' stats; returns how many were added.

    A concept holds at most one verdict per task id (one that already has one keeps it), so
    folding the same run twice changes nothing, and a second run over the same tasks adds
    evidence only for concepts the first did not attribute."""
    added = 0
    # Looked up before any verdict is added (an edit drops the memory's id index).
    found = [memory.find(v.concept_id) for v in attribution.verdicts]
    for verdict, concept in zip(attribution.verdicts, found, strict=True):
        if concept is None:
            continue
        stats = concept.stats
        if verdict.verdict == "helpful":
            for function in concept.functions:
                if function.name in verdict.imported and attribution.task_id not in (
                    function.imported_by
                ):
                    function.imported_by.append(attribution.task_id)
        if any(attribution.task_id in getattr(stats, v) for v in VERDICTS):
            continue
        getattr(stats, verdict.verdict).append(attribution.task_id)
        added += 1
    return added


def counts(concept: Concept) -> dict[str, int]:
    """The concept's helpful / unused / harmful counts."""
    return {v: len(getattr(concept.stats, v)) for v in VERDICTS}


class AttributionSummary(BaseModel):
    """What attributing a set of task results found."""

    tasks: int = Field(description="Final task results attributed (model errors skipped).")
    confirmed: int = Field(description="Tasks whose solution the write signal confirmed.")
    confirmed_with_selection: int = Field(
        description="Confirmed tasks whose prompt showed at least one concept."
    )
    attributed: int = Field(
        description="Confirmed tasks with at least one helpful verdict (a shown concept the "
        "solution used)."
    )
    verdicts: dict[str, int] = Field(description="Verdicts by kind.")

    @property
    def share_attributed(self) -> float | None:
        """Share of confirmed solves attributed to a selected concept."""
        return self.attributed / self.confirmed if self.confirmed else None

    def line(self) -> str:
        """The summary in one line."""
        share = self.share_attributed
        shown = "n/a" if share is None else f"{share:.0%}"
        counts = ", ".join(f"{self.verdicts.get(v, 0)} {v}" for v in VERDICTS)
        return (
            f"{self.tasks} tasks, {self.confirmed} confirmed ({self.confirmed_with_selection} "
            f"with concepts shown); {self.attributed} confirmed solves used a shown concept "
            f"({shown}); verdicts: {counts}"
        )


def summarize(attributions: list[TaskAttribution]) -> AttributionSummary:
    """Counts over per-task attributions."""
    verdicts = {v: 0 for v in VERDICTS}
    for attribution in attributions:
        for verdict in attribution.verdicts:
            verdicts[verdict.verdict] += 1
    confirmed = [a for a in attributions if a.confirmed]
    return AttributionSummary(
        tasks=len(attributions),
        confirmed=len(confirmed),
        confirmed_with_selection=sum(bool(a.verdicts) for a in confirmed),
        attributed=sum(any(v.verdict == "helpful" for v in a.verdicts) for a in confirmed),
        verdicts=verdicts,
    )
