"""Consolidation: find near-duplicate concepts and merge them with full provenance.

Models write near-duplicates under other names ("split grid", "split regions", "split region
grid" in the paper's published memory), which the id normalization cannot catch. A pair is
proposed when

* both are active concepts of the same kind,
* their names are similar: rapidfuzz's ``token_set_ratio`` of the normalized names is at
  least ``name_threshold`` (word order and a subset of words do not matter), and
* their contents confirm it: the cosine similarity of their description, cues,
  implementation notes and parameter names under an embedder (``tfidf``, offline, fitted on
  the memory's concepts; or ``openai:MODEL``) is at least ``content_threshold``. Names
  alone cannot tell "split regions" (a duplicate of "split grid") from "split colors"
  (another idea); the content does.

Clusters are stars around a keeper, never chains: concepts are visited most useful first
(:func:`arcmemo.memory.evidence.usefulness_key`), each unassigned one becomes a keeper and
absorbs every later unassigned concept that pairs with *it*. A merge follows the write merge
rules (:func:`arcmemo.memory.merge.fold_concept`): cues, notes, parameters, sources
(``used_in``), authors and statistics accumulate, conflicting scalars are recorded, the
absorbed name goes to ``merged_from`` and one ``consolidate`` history entry keeps the
absorbed concept's content.
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from rapidfuzz import fuzz

from arcmemo.memory.evidence import active, usefulness_key
from arcmemo.memory.merge import WriteResult, fold_concept
from arcmemo.memory.schema import Concept, Memory
from arcmemo.models.embedding import create_embedder

NAME_THRESHOLD = 70.0
CONTENT_THRESHOLD = 0.35


class MergeProposal(BaseModel):
    """One near-duplicate to fold into a keeper, with the scores that proposed it."""

    keeper: str = Field(description="Name of the concept that stays.")
    absorbed: str = Field(description="Name of the concept merged into it.")
    name_score: float = Field(description="rapidfuzz token_set_ratio of the names (0-100).")
    content_score: float = Field(description="Cosine similarity of the contents (0-1).")

    def line(self) -> str:
        """The proposal as one reviewable line."""
        return (
            f"merge {self.absorbed!r} into {self.keeper!r} "
            f"(name {self.name_score:.0f}, content {self.content_score:.2f})"
        )


def name_score(a: Concept, b: Concept) -> float:
    """Name similarity 0-100 on the normalized names (singular words)."""
    return float(fuzz.token_set_ratio(a.id.replace("-", " "), b.id.replace("-", " ")))


def content_text(concept: Concept) -> str:
    """What the content confirmation compares (everything but the name)."""
    parts = [concept.description, *concept.cues, *concept.implementation]
    parts += [p.name for p in concept.parameters]
    return " ".join(parts)


async def propose_merges(
    memory: Memory,
    *,
    name_threshold: float = NAME_THRESHOLD,
    content_threshold: float = CONTENT_THRESHOLD,
    embedder: str = "tfidf",
) -> list[MergeProposal]:
    """The merges consolidation would apply to ``memory`` (nothing is changed)."""
    concepts = sorted(active(memory).concepts, key=usefulness_key)
    if len(concepts) < 2:
        return []
    corpus = [content_text(c) for c in concepts]
    vectors = await create_embedder(embedder).embed(corpus, corpus=corpus)
    similarity = vectors @ vectors.T
    assigned: set[int] = set()
    proposals: list[MergeProposal] = []
    for i, keeper in enumerate(concepts):
        if i in assigned:
            continue
        for j in range(i + 1, len(concepts)):
            other = concepts[j]
            if j in assigned or other.kind != keeper.kind:
                continue
            names = name_score(keeper, other)
            content = float(similarity[i, j])
            if names >= name_threshold and content >= content_threshold:
                assigned.add(j)
                proposals.append(
                    MergeProposal(
                        keeper=keeper.name,
                        absorbed=other.name,
                        name_score=names,
                        content_score=round(content, 4),
                    )
                )
    return proposals


def apply_merges(
    memory: Memory, proposals: list[MergeProposal], *, actor: str = "human"
) -> list[WriteResult]:
    """Fold each proposal's absorbed concept into its keeper (in place)."""
    results = []
    for proposal in proposals:
        keeper, absorbed = memory.find(proposal.keeper), memory.find(proposal.absorbed)
        if keeper is None or absorbed is None or keeper.id == absorbed.id:
            raise KeyError(f"cannot apply {proposal.line()}: a concept is missing")
        why = f"consolidate: {proposal.line()}"
        results.append(fold_concept(memory, absorbed, keeper, actor=actor, why=why))
    return results
