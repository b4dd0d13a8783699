"""Puzzle folders on disk.

Layout of a puzzle folder ``DIR`` (every file written atomically)::

    DIR/<id>.json            the puzzle as a standard ARC task ({"train": [...], "test": [...]})
    DIR/meta/<id>.json       its PuzzleMeta: concept id and version, generator source, seed,
                             model, build config, the rival reference routines, the aux
                             review (if any) and the verification report
    DIR/programs/<id>.py     the generator module (a valid ARC solution program: it defines
                             transform), for `arcmemo abstract --from-programs DIR/programs`
    DIR/failures/<concept id>.json   a concept whose puzzles failed: every attempt with its
                             module and reports

The ARC loader reads only ``DIR/*.json``, so ``arcmemo run arc-agi-1 --data DIR`` sees the
puzzles and nothing else. A puzzle id is ``<concept id>-<seed>``.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from arcmemo.benchmarks.arc.puzzles.generate import ConceptOutcome, concept_version
from arcmemo.benchmarks.arc.puzzles.review import RoutineReview
from arcmemo.benchmarks.arc.puzzles.verify import (
    PuzzleConfig,
    ReferenceRoutine,
    RoutineHints,
    VerificationReport,
    VerifiedPuzzle,
)
from arcmemo.core.files import atomic_write_text
from arcmemo.memory.schema import Concept, utc_now

META_DIR = "meta"
PROGRAMS_DIR = "programs"
FAILURES_DIR = "failures"


class PuzzleStoreError(ValueError):
    """A puzzle folder or file that cannot be used; the message names the file."""


class PuzzleMeta(BaseModel):
    """Everything needed to trace a puzzle to its concept and to rebuild and re-check it."""

    puzzle_id: str = Field(description="File stem of the task: <concept id>-<seed>.")
    concept_id: str = Field(description="Id of the concept the puzzle exercises.")
    concept_name: str = Field(description="Its name when the puzzle was made.")
    concept_version: str = Field(
        description="Hash of the concept's content (arcmemo.benchmarks.arc.puzzles)."
    )
    concept_updated_at: datetime | None = Field(
        default=None, description="The concept's provenance.updated_at when the puzzle was made."
    )
    memory: str | None = Field(default=None, description="Memory file the concept came from.")
    model: str = Field(description="provider:model that wrote the generator ('human' if none).")
    seed: int = Field(description="Seed of the random.Random given to generate_input.")
    attempt: int = Field(default=0, description="0 = first answer, 1 = after one repair round.")
    generator_source: str = Field(description="The generator module.")
    hints: RoutineHints = Field(
        default_factory=RoutineHints, description="What the neutral substitute was told."
    )
    config: PuzzleConfig | None = Field(
        description="How the puzzle was built and checked (None for a hindsight puzzle)."
    )
    references: list[ReferenceRoutine] = Field(
        default_factory=list,
        description="Other concepts' reference routines the crux check tried as rivals.",
    )
    review: RoutineReview | None = Field(
        default=None, description="The aux model's review of concept_routine, if one was made."
    )
    report: VerificationReport = Field(description="The checks when the puzzle was made.")
    created_at: datetime = Field(default_factory=utc_now, description="When it was written.")
    origin: Literal["generated", "hindsight"] = Field(
        default="generated",
        description="'generated': built by generator_source from seed; 'hindsight': an "
        "unsolved task's inputs with its failed program's own outputs "
        "(arcmemo.benchmarks.arc.puzzles.hindsight), the program in generator_source.",
    )
    hindsight_of: str | None = Field(
        default=None, description="For a hindsight puzzle: the task whose failed program it is."
    )
    exercised_by: str | None = Field(
        default=None,
        description="For a hindsight puzzle: the concept's library function its program calls.",
    )


class FailureRecord(BaseModel):
    """A concept for which some wanted puzzles were not made."""

    concept_id: str
    concept_name: str
    model: str
    error: str | None = None
    attempts: list[dict] = Field(default_factory=list, description="Attempt records.")


def puzzle_id(concept_id: str, seed: int) -> str:
    """The id (file stem) of the puzzle built from ``seed`` for a concept."""
    return f"{concept_id}-{seed}"


def _write_json(path: Path, payload: object) -> None:
    atomic_write_text(path, json.dumps(payload, indent=1) + "\n")


def write_puzzle(folder: Path, meta: PuzzleMeta, puzzle: VerifiedPuzzle) -> Path:
    """Write the task, its metadata and its program; return the task path."""
    task_path = folder / f"{meta.puzzle_id}.json"
    atomic_write_text(folder / PROGRAMS_DIR / f"{meta.puzzle_id}.py", meta.generator_source)
    atomic_write_text(
        folder / META_DIR / f"{meta.puzzle_id}.json", meta.model_dump_json(indent=1) + "\n"
    )
    _write_json(task_path, puzzle.task_json())
    return task_path


def write_outcome(
    folder: Path,
    concept: Concept,
    outcome: ConceptOutcome,
    *,
    model: str,
    memory: str | None,
    config: PuzzleConfig,
    hints: RoutineHints,
    wanted: int,
) -> list[Path]:
    """Write a concept's accepted puzzles and, if fewer than ``wanted``, its failure record."""
    written = []
    final = outcome.final
    for puzzle in outcome.accepted:
        assert final is not None and final.source is not None
        meta = PuzzleMeta(
            puzzle_id=puzzle_id(concept.id, puzzle.seed),
            concept_id=concept.id,
            concept_name=concept.name,
            concept_version=concept_version(concept),
            concept_updated_at=concept.provenance.updated_at,
            memory=memory,
            model=model,
            seed=puzzle.seed,
            attempt=final.round,
            generator_source=final.source,
            hints=hints,
            config=config,
            references=outcome.references,
            review=final.review,
            report=puzzle.report,
        )
        written.append(write_puzzle(folder, meta, puzzle))
    failure_path = folder / FAILURES_DIR / f"{concept.id}.json"
    if len(written) < wanted:
        record = FailureRecord(
            concept_id=concept.id,
            concept_name=concept.name,
            model=model,
            error=outcome.error,
            attempts=[
                {
                    "round": attempt.round,
                    "error": attempt.error,
                    "source": attempt.source,
                    "answer": attempt.answer,
                    "review": attempt.review.model_dump(mode="json") if attempt.review else None,
                    "reports": [p.report.model_dump(mode="json") for p in attempt.puzzles],
                }
                for attempt in outcome.attempts
            ],
        )
        atomic_write_text(failure_path, record.model_dump_json(indent=1) + "\n")
    return written


def task_paths(folder: Path) -> list[Path]:
    """The puzzle task files of a folder; raises when there are none."""
    if not folder.is_dir():
        raise PuzzleStoreError(f"{folder}: no such puzzle folder")
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise PuzzleStoreError(f"{folder}: no <id>.json puzzle files in this folder")
    return paths


def meta_path(task_path: Path) -> Path:
    """Where the metadata of the task at ``task_path`` lives."""
    return task_path.parent / META_DIR / task_path.name


def read_json(path: Path) -> object:
    """Parse a JSON file with an error naming the file and place."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PuzzleStoreError(f"{path}: does not exist") from None
    except json.JSONDecodeError as error:
        raise PuzzleStoreError(
            f"{path}: not valid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None


def read_meta(task_path: Path) -> PuzzleMeta:
    """The metadata of a puzzle; errors name the metadata file and the bad field."""
    path = meta_path(task_path)
    raw = read_json(path)
    try:
        return PuzzleMeta.model_validate(raw)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '$'}: {e['msg']}" for e in error.errors()
        )
        raise PuzzleStoreError(f"{path}: invalid puzzle metadata: {problems}") from None


def resolve_puzzle(reference: Path) -> Path:
    """The task file for ``DIR/ID`` (with or without ``.json``)."""
    candidates = [reference, reference.with_name(reference.name + ".json")]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise PuzzleStoreError(f"{reference}: no such puzzle (expected DIR/ID or DIR/ID.json)")
