"""Using attribution evidence: the usefulness order, retired concepts and pruning.

The selection view under ``--memory-budget`` keeps the most useful concepts;
:func:`usefulness_key` says which those are: attributed help first (helpful minus harmful
verdicts, :mod:`arcmemo.memory.attribution`), then usage (distinct source tasks plus solved
selections), then the id for a stable order. A concept that only ever hurt sorts below one
without evidence.

``arcmemo memory prune --min-evidence N`` retires (never deletes) the concepts with at
least ``N`` attributed selections and not one helpful verdict: the concept stays in the
file with a ``retired`` reason and a history entry, and :func:`active` leaves it out of
every rendering and selection. A concept a verified program imported a function of (credit
by import, ``imported_by``) has exact evidence of use and is never retired.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from arcmemo.memory.edits import TrackedList, derived
from arcmemo.memory.schema import Concept, HistoryEntry, Memory

_RETIRED = attrgetter("retired")


def helped(concept: Concept) -> int:
    """Helpful minus harmful verdicts."""
    return len(concept.stats.helpful) - len(concept.stats.harmful)


def importers(concept: Concept) -> list[str]:
    """Tasks whose verified programs imported one of the concept's functions."""
    return list(dict.fromkeys(t for f in concept.functions for t in f.imported_by))


def evidence_count(concept: Concept) -> int:
    """How many selections of the concept were attributed (any verdict)."""
    stats = concept.stats
    return len(stats.helpful) + len(stats.unused) + len(stats.harmful)


def usefulness_key(concept: Concept) -> tuple[int, int, int, str]:
    """Sort key, most useful first: attributed help, usage, solved selections, id."""
    return (-helped(concept), -concept.usage, -concept.stats.selected_solved, concept.id)


def _unretired(concepts: Sequence[Concept]) -> TrackedList[Concept] | None:
    if not any(map(_RETIRED, concepts)):  # C-level: asked of every concept of a version
        return None
    return TrackedList(c for c in concepts if not c.retired)


def active(memory: Memory) -> Memory:
    """``memory`` without its retired concepts (the same object when none is retired).

    Asked for every task, so the answer is kept per version of the concept list (copies
    of one version share their concept list's relation index too)."""
    kept = derived("unretired concepts", memory.concepts, _unretired)
    if kept is None:
        return memory
    # The kept list itself: a change to it through the copy counts as an edit.
    return memory.model_copy(update={"concepts": kept})


def prune_candidates(memory: Memory, min_evidence: int) -> list[Concept]:
    """Active concepts with at least ``min_evidence`` attributed selections, none helpful,
    and no function any verified program imported.

    Only attributed selections count: ``stats.selected`` of a memory written before
    attribution existed says nothing about whether the concept helped.
    """
    if min_evidence < 1:
        raise ValueError(f"min_evidence must be at least 1, got {min_evidence}")
    return [
        c
        for c in memory.concepts
        if not c.retired
        and evidence_count(c) >= min_evidence
        and not c.stats.helpful
        and not importers(c)
    ]


def retire(memory: Memory, concept: Concept, why: str, *, actor: str = "human") -> None:
    """Mark ``concept`` retired with ``why`` and log it (it stays in the file)."""
    concept.retired = why
    memory.history.append(HistoryEntry(op="retire", target=concept.id, actor=actor, why=why))


def prune(memory: Memory, min_evidence: int, *, actor: str = "human") -> list[Concept]:
    """Retire every :func:`prune_candidates` concept; returns them."""
    retired = prune_candidates(memory, min_evidence)
    for concept in retired:
        stats = concept.stats
        why = (
            f"selected with attribution {evidence_count(concept)} times, never helped "
            f"({len(stats.unused)} unused, {len(stats.harmful)} harmful; "
            f"prune --min-evidence {min_evidence})"
        )
        retire(memory, concept, why, actor=actor)
    return retired
