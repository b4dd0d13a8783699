"""Re-running every check on puzzles already on disk (``arcmemo puzzles verify``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.benchmarks.arc import ArcTaskError, parse_task
from arcmemo.benchmarks.arc.puzzles.review import apply_review, needs_review
from arcmemo.benchmarks.arc.puzzles.store import (
    PuzzleMeta,
    PuzzleStoreError,
    read_json,
    read_meta,
)
from arcmemo.benchmarks.arc.puzzles.verify import VerificationReport, verify_module
from arcmemo.sandbox.base import Sandbox


class RecheckResult(BaseModel):
    """The outcome for one puzzle file."""

    puzzle_id: str
    concept_id: str | None = None
    report: VerificationReport | None = None
    problems: list[str] = Field(
        default_factory=list,
        description="Failures outside the checks: unreadable files, a rebuilt puzzle that "
        "differs from the file.",
    )

    @property
    def passed(self) -> bool:
        """Every check passed, and the rebuilt puzzle equals the file."""
        return not self.problems and self.report is not None and self.report.passed


def recheck_puzzle(sandbox: Sandbox, task_path: Path) -> RecheckResult:
    """Rebuild a puzzle from its metadata (generator source and seed), re-run every check
    (with the stored rival references and review), and compare the rebuilt puzzle with the
    task file."""
    result = RecheckResult(puzzle_id=task_path.stem)
    try:
        raw = read_json(task_path)
        task = parse_task(task_path.stem, raw, str(task_path))
        meta = read_meta(task_path)
    except (PuzzleStoreError, ArcTaskError) as error:
        result.problems.append(str(error))
        return result
    result.concept_id = meta.concept_id
    if meta.origin == "hindsight" or meta.config is None:
        return _recheck_hindsight(sandbox, task_path, task, meta, result)
    (puzzle,) = verify_module(
        sandbox,
        meta.generator_source,
        [meta.seed],
        config=meta.config,
        hints=meta.hints,
        references=meta.references,
    )
    if meta.review is not None and needs_review(puzzle.report):
        # The review is a model's judgment of the same source: reused, not asked again.
        apply_review(puzzle.report, meta.review)
    result.report = puzzle.report
    if puzzle.passed:
        stored = (
            [(p.input, p.output) for p in task.train],
            list(zip(task.test_inputs, task.expected, strict=True)),
        )
        rebuilt = (
            [(p.input, p.output) for p in puzzle.train],
            [(p.input, p.output) for p in puzzle.test],
        )
        if stored != rebuilt:
            result.problems.append(
                f"{task_path}: the puzzle rebuilt from its generator and seed {meta.seed} "
                "differs from the file"
            )
    return result


def _recheck_hindsight(
    sandbox: Sandbox, task_path: Path, task: Any, meta: PuzzleMeta, result: RecheckResult
) -> RecheckResult:
    """A hindsight puzzle: its program must still return the file's outputs, and they must
    be well formed."""
    from arcmemo.benchmarks.arc.puzzles.hindsight import hindsight_report, reproduces

    pairs = [(p.input, p.output) for p in task.train]
    pairs += list(zip(task.test_inputs, task.expected, strict=True))
    result.report = hindsight_report(pairs, meta.exercised_by or "?")
    why = reproduces(sandbox, meta.generator_source, pairs)
    if why is not None:
        result.problems.append(f"{task_path}: {why}")
    return result


def recheck_folder(sandbox: Sandbox, task_paths: list[Path]) -> list[RecheckResult]:
    """:func:`recheck_puzzle` for each task file, in order."""
    return [recheck_puzzle(sandbox, path) for path in task_paths]
