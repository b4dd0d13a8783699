"""The memory's reference routines: hand-written modules of other concepts, as rival rules.

A reference folder holds ``<concept id>.py`` modules (``puzzles/handwritten/`` in a
checkout), each a generator module of its concept that may also define ``variants(grid)``
(see ``_alone.py`` beside this module). The ``concept_is_crux`` check runs the references
of every concept of the memory *other than* the target on the puzzle's inputs; a concept
without a reference module there is not tried (the check's note lists those tried).
"""

from __future__ import annotations

from pathlib import Path

from arcmemo.benchmarks.arc.puzzles.verify import ReferenceRoutine
from arcmemo.memory.schema import Concept, Memory

_CHECKOUT_REFERENCES = Path(__file__).resolve().parents[4] / "puzzles" / "handwritten"


def default_reference_dir() -> Path | None:
    """``puzzles/handwritten`` of the checkout arcmemo runs from; None when not installed so."""
    return _CHECKOUT_REFERENCES if _CHECKOUT_REFERENCES.is_dir() else None


def load_references(folder: Path | None, memory: Memory, target: Concept) -> list[ReferenceRoutine]:
    """The reference routines in ``folder`` of the memory's concepts other than ``target``."""
    if folder is None:
        return []
    found = []
    for concept in memory.concepts:
        path = folder / f"{concept.id}.py"
        if concept.id != target.id and path.is_file():
            found.append(
                ReferenceRoutine(
                    concept_id=concept.id,
                    concept_name=concept.name,
                    source=path.read_text(encoding="utf-8"),
                )
            )
    return found
