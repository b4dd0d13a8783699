"""The helper-puzzle pipeline: concept -> generator module (by a model) -> verified puzzles.

For each concept the model writes one module (``prompts/puzzles/generate.j2``); the module
is taken from the last ```python block of the answer and checked on every wanted seed by
:func:`arcmemo.benchmarks.arc.puzzles.verify.verify_module`. A module that fails any check
(or that cannot be read from the answer) gets ``repairs`` more rounds with the failed checks
as feedback (``prompts/puzzles/repair.j2``) in the same conversation. The puzzles of the
last attempt that pass every check are kept; everything else is recorded as a failure with
its report. With a ``reviewer`` (aux model), a module whose concept has no property test
gets its ``concept_routine`` reviewed against the concept
(:mod:`arcmemo.benchmarks.arc.puzzles.review`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.benchmarks.arc.puzzles.properties import concept_properties
from arcmemo.benchmarks.arc.puzzles.references import load_references
from arcmemo.benchmarks.arc.puzzles.review import (
    RoutineReview,
    apply_review,
    needs_review,
    review_routine,
)
from arcmemo.benchmarks.arc.puzzles.verify import (
    PuzzleConfig,
    ReferenceRoutine,
    RoutineHints,
    VerifiedPuzzle,
    verify_module,
)
from arcmemo.core import prompting
from arcmemo.memory.schema import Concept, Memory
from arcmemo.memory.types import type_names
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.retry import ModelCallError
from arcmemo.models.structured import PYTHON_LANGUAGES, fenced_blocks
from arcmemo.sandbox.base import Sandbox

REQUIRED_FUNCTIONS = ("concept_routine", "generate_input", "transform")
STAGE = "puzzles"


class PuzzleGenerationError(ValueError):
    """Bad input to the pipeline (e.g. a concept name the memory does not have)."""


class Attempt(BaseModel):
    """One module the model wrote, and what the checks said about it."""

    round: int = Field(description="0 for the first answer, 1 for the repair, ...")
    answer: str = Field(description="The model's raw answer.")
    source: str | None = Field(default=None, description="The module read from the answer.")
    error: str | None = Field(
        default=None, description="Why no module could be read from the answer."
    )
    puzzles: list[VerifiedPuzzle] = Field(
        default_factory=list, description="One per seed, with its report."
    )
    review: RoutineReview | None = Field(
        default=None, description="The aux model's review of concept_routine, if one was made."
    )

    @property
    def passed(self) -> bool:
        """A module was read and every one of its puzzles passed every check."""
        return (
            self.source is not None and bool(self.puzzles) and all(p.passed for p in self.puzzles)
        )


class ConceptOutcome(BaseModel):
    """Everything the pipeline did for one concept."""

    concept_id: str
    concept_name: str
    references: list[ReferenceRoutine] = Field(
        default_factory=list, description="Other concepts' reference routines tried as rivals."
    )
    attempts: list[Attempt] = Field(default_factory=list)
    error: str | None = Field(default=None, description="A model call that failed for good.")

    @property
    def final(self) -> Attempt | None:
        """The last attempt, whose passing puzzles are kept."""
        return self.attempts[-1] if self.attempts else None

    @property
    def accepted(self) -> list[VerifiedPuzzle]:
        """The puzzles that passed every check (from the last attempt only)."""
        final = self.final
        if final is None or final.source is None:
            return []
        return [puzzle for puzzle in final.puzzles if puzzle.passed]


def python_name(name: str) -> str:
    """A parameter name as a Python identifier (``mask color`` -> ``mask_color``)."""
    cleaned = re.sub(r"\W+", "_", name.strip()).strip("_") or "value"
    return "_" + cleaned if cleaned[0].isdigit() else cleaned


def routine_hints(concept: Concept) -> RoutineHints:
    """What the ontology says about the routine's grid parameters and result type."""
    output = (concept.output_type or "").strip().lower()
    return RoutineHints(
        grid_params=[
            python_name(p.name)
            for p in concept.parameters
            if (p.type or "").strip().lower() == "grid"
        ],
        returns_grid=(output == "grid") if output else None,
        properties=concept_properties(concept),
    )


def routine_signature(concept: Concept) -> str:
    """The parameter list asked for; a structure without a grid parameter gets ``grid``
    first, since its routine finds the structure in a grid."""
    names = [python_name(p.name) for p in concept.parameters]
    if concept.kind == "structure" and not routine_hints(concept).grid_params:
        names.insert(0, "grid")
    return ", ".join(names)


def concept_version(concept: Concept) -> str:
    """A short hash of what the concept says (usage statistics, provenance, the
    retired / merged_from bookkeeping and its library functions excluded: a puzzle checks
    the concept's description, which code attached later does not change)."""
    content = concept.model_dump(
        mode="json", exclude={"stats", "provenance", "retired", "merged_from", "functions"}
    )
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]


def _referenced_types(memory: Memory, concept: Concept) -> list[str]:
    definitions = {t.name.lower(): t for t in memory.types}
    wanted: list[str] = []
    pending = [name for ref in concept.type_references() for name in type_names(ref)]
    while pending:
        name = pending.pop(0).lower()
        if name in definitions and name not in wanted:
            wanted.append(name)
            pending += type_names(definitions[name].definition)
    return [f"{definitions[n].name} := {definitions[n].definition}" for n in wanted]


def build_messages(memory: Memory, concept: Concept, config: PuzzleConfig) -> list[Message]:
    """The system and user messages asking for one generator module."""
    view = concept.model_dump(mode="json")
    view["parameters"] = [
        {**p.model_dump(mode="json"), "python_name": python_name(p.name)}
        for p in concept.parameters
    ]
    user = prompting.render(
        "puzzles/generate",
        concept=view,
        signature=routine_signature(concept),
        types=_referenced_types(memory, concept),
        train=config.train,
        test=config.test,
    )
    return [
        Message(role="system", content=prompting.render("puzzles/system")),
        Message(role="user", content=user),
    ]


def extract_module(text: str) -> str:
    """The last ```python block of ``text``; raises ValueError saying what is missing."""
    blocks = fenced_blocks(text, PYTHON_LANGUAGES)
    if not blocks:
        raise ValueError("the answer has no ```python block")
    source = blocks[-1].strip() + "\n"
    missing = [
        name
        for name in REQUIRED_FUNCTIONS
        if not re.search(rf"^def\s+{name}\s*\(", source, re.MULTILINE)
    ]
    if missing:
        raise ValueError(
            "the last ```python block does not define "
            + ", ".join(f"{name}()" for name in missing)
            + " at the top level"
        )
    return source


def repair_message(attempt: Attempt) -> Message:
    """The feedback for a failed attempt: the reading error, or every failed check."""
    failures = [
        {"seed": puzzle.seed, "name": check.name, "details": check.details}
        for puzzle in attempt.puzzles
        for check in puzzle.report.failed()
    ]
    text = prompting.render("puzzles/repair", error=attempt.error, failures=failures)
    return Message(role="user", content=text)


async def generate_for_concept(
    model: ModelClient,
    memory: Memory,
    concept: Concept,
    *,
    sandbox: Sandbox,
    seeds: list[int],
    config: PuzzleConfig | None = None,
    repairs: int = 1,
    references: list[ReferenceRoutine] | None = None,
    reviewer: ModelClient | None = None,
) -> ConceptOutcome:
    """Ask for a generator module for ``concept``, check it on ``seeds``, repair if needed.

    ``references`` are the other concepts' reference routines (rivals of the crux check);
    ``reviewer`` reviews a routine that has no property test. A model call that fails for
    good ends the concept with ``outcome.error`` set; the attempts made before it are kept.
    """
    config = config or PuzzleConfig()
    outcome = ConceptOutcome(
        concept_id=concept.id, concept_name=concept.name, references=list(references or [])
    )
    conversation = build_messages(memory, concept, config)
    hints = routine_hints(concept)
    for round_ in range(repairs + 1):
        try:
            (completion,) = await model.generate(
                conversation,
                stage=STAGE if round_ == 0 else f"{STAGE}-repair",
                task_id=concept.id,
            )
        except ModelCallError as error:
            outcome.error = str(error)
            break
        attempt = Attempt(round=round_, answer=completion.text)
        try:
            attempt.source = extract_module(completion.text)
        except ValueError as error:
            attempt.error = str(error)
        else:
            attempt.puzzles = await asyncio.to_thread(
                verify_module,
                sandbox,
                attempt.source,
                seeds,
                config=config,
                hints=hints,
                references=outcome.references,
            )
            waiting = [p for p in attempt.puzzles if needs_review(p.report)]
            if waiting and reviewer is not None:
                attempt.review = await review_routine(reviewer, concept, attempt.source)
                for puzzle in waiting:
                    apply_review(puzzle.report, attempt.review)
                    if not puzzle.passed:
                        puzzle.train, puzzle.test = [], []
        outcome.attempts.append(attempt)
        if attempt.passed:
            break
        conversation = [
            *conversation,
            Message(role="assistant", content=completion.text),
            repair_message(attempt),
        ]
    return outcome


def resolve_concepts(memory: Memory, names: list[str]) -> list[Concept]:
    """The concepts named (any spelling of their names); raises on unknown names."""
    concepts, unknown = [], []
    for name in names:
        concept = memory.find(name)
        if concept is None:
            unknown.append(name)
        elif concept not in concepts:
            concepts.append(concept)
    if unknown:
        known = ", ".join(sorted(c.id for c in memory.concepts)) or "(none)"
        raise PuzzleGenerationError(
            f"unknown concept(s): {', '.join(unknown)}; the memory has: {known}"
        )
    return concepts


async def generate_puzzles(
    model: ModelClient,
    memory: Memory,
    concepts: list[Concept],
    *,
    sandbox: Sandbox,
    seeds: list[int],
    config: PuzzleConfig | None = None,
    repairs: int = 1,
    on_done: Callable[[Concept, ConceptOutcome], Any] | None = None,
    references: Path | None = None,
    reviewer: ModelClient | None = None,
) -> list[ConceptOutcome]:
    """Run :func:`generate_for_concept` for every concept concurrently.

    ``references`` is the folder of reference routines (``<concept id>.py``) whose other
    concepts are the crux check's rivals. ``on_done(concept, outcome)`` is called as each
    concept finishes (e.g. to write its files). A model call that fails for good is
    recorded in ``outcome.error``.
    """

    async def one(concept: Concept) -> ConceptOutcome:
        outcome = await generate_for_concept(
            model,
            memory,
            concept,
            sandbox=sandbox,
            seeds=seeds,
            config=config,
            repairs=repairs,
            references=load_references(references, memory, concept),
            reviewer=reviewer,
        )
        if on_done is not None:
            on_done(concept, outcome)
        return outcome

    return list(await asyncio.gather(*(one(concept) for concept in concepts)))
