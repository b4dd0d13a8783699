"""Hindsight tasks as helper puzzles: a failed program's own outputs, saved for the concept
whose library function it calls (``arcmemo library build --from RUN --hindsight --puzzles
DIR``).

A hindsight task (:mod:`arcmemo.library.hindsight`) pairs every train and test input of an
unsolved task with what its failed program returned, so the program solves it by
construction; when the library build traced a call of one of the concept's functions in that
program, the puzzle exercises the concept. It is written like a generated puzzle
(:mod:`arcmemo.benchmarks.arc.puzzles.store`) with ``origin`` ``hindsight``, the original
task in ``hindsight_of``, the function in ``exercised_by`` and the program as its
``generator_source`` (it defines ``transform``); it has no seed, generator config or rival
check. ``arcmemo puzzles verify``
re-runs the program on the inputs and compares the outputs with the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arcmemo.benchmarks.arc.puzzles.generate import concept_version
from arcmemo.benchmarks.arc.puzzles.store import PuzzleMeta, write_puzzle
from arcmemo.benchmarks.arc.puzzles.verify import (
    CheckResult,
    PuzzlePair,
    VerificationReport,
    VerifiedPuzzle,
)
from arcmemo.memory.schema import Concept
from arcmemo.sandbox import Program, Sandbox, SandboxLimits

LIMITS = SandboxLimits(timeout_s=10.0)
BY_CONSTRUCTION = "by construction: the expected outputs are the program's own"


def hindsight_puzzle_id(concept_id: str, task_id: str) -> str:
    """The id (file stem) of the hindsight puzzle of ``task_id`` for a concept."""
    return f"{concept_id}-hindsight-{task_id}"


def _well_formed(pairs: Sequence[tuple[Any, Any]]) -> list[str]:
    problems = []
    for index, (grid_in, grid_out) in enumerate(pairs, 1):
        if grid_out == grid_in:
            problems.append(f"pair {index}: the output equals its input")
        elif len({cell for row in grid_out for cell in row}) == 1:
            problems.append(f"pair {index}: the output is all one color")
    return problems


def hindsight_report(pairs: Sequence[tuple[Any, Any]], function: str) -> VerificationReport:
    """The checks of a hindsight puzzle: it runs and reproduces by construction, its outputs
    must be well formed (none equal to its input, none of one color), and the program calls
    the concept's ``function``; the generator checks do not apply."""
    problems = _well_formed(pairs)
    not_made = "a hindsight puzzle has no generator: " + BY_CONSTRUCTION
    checks = [
        CheckResult(name="runs", status="passed", note=BY_CONSTRUCTION),
        CheckResult(
            name="well_formed", status="failed" if problems else "passed", details=problems
        ),
        CheckResult(name="deterministic", status="skipped", note=not_made),
        CheckResult(name="diverse", status="skipped", note=not_made),
        CheckResult(
            name="exercises_concept",
            status="passed",
            note=f"the library build recorded its calls of {function} on these inputs",
        ),
        CheckResult(name="implements_concept", status="skipped", note=not_made),
        CheckResult(name="concept_is_crux", status="skipped", note=not_made),
    ]
    return VerificationReport(seed=0, checks=checks)


def write_hindsight_puzzle(
    folder: Path,
    *,
    concept: Concept,
    function: str,
    task_id: str,
    program: str,
    pairs: Sequence[tuple[Any, Any]],
    train: int,
    model: str,
    memory: str | None,
) -> Path | None:
    """Write the hindsight puzzle of ``task_id`` (its first ``train`` pairs as train, the
    rest as test) for ``concept``; None (nothing written) when its outputs are not well
    formed."""
    report = hindsight_report(pairs, function)
    if not report.passed:
        return None
    both = [PuzzlePair(input=grid_in, output=grid_out) for grid_in, grid_out in pairs]
    puzzle = VerifiedPuzzle(seed=0, train=both[:train], test=both[train:], report=report)
    meta = PuzzleMeta(
        puzzle_id=hindsight_puzzle_id(concept.id, task_id),
        concept_id=concept.id,
        concept_name=concept.name,
        concept_version=concept_version(concept),
        concept_updated_at=concept.provenance.updated_at,
        memory=memory,
        model=model,
        seed=0,
        generator_source=program,
        config=None,
        report=report,
        origin="hindsight",
        hindsight_of=task_id,
        exercised_by=function,
    )
    return write_puzzle(folder, meta, puzzle)


def reproduces(sandbox: Sandbox, program: str, pairs: Sequence[tuple[Any, Any]]) -> str | None:
    """Why ``program`` does not return each pair's output for its input (None: it does)."""
    results = sandbox.run(
        Program(source=program, entry="transform", bindings={"np": "numpy"}),
        [[grid_in] for grid_in, _ in pairs],
        limits=LIMITS,
    )
    for index, (result, (_, want)) in enumerate(zip(results, pairs, strict=True), 1):
        got = result.value.tolist() if hasattr(result.value, "tolist") else result.value
        if not result.ok:
            return f"pair {index}: the program failed ({result.error_kind})"
        if got != want:
            return f"pair {index}: the program's output differs from the file's"
    return None
