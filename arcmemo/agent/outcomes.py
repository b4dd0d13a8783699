"""An agent's report of how a problem went, as the evidence runs record: selection statistics
and attribution verdicts on the concepts it used, and one history entry per outcome.

The report goes through the run's own paths (:func:`~arcmemo.run.continual.
record_selection_stats`, :func:`~arcmemo.memory.attribution.attribute_task`): it is made a
one-step task result whose step showed the concepts. With the solution's text, attribution
reads it as a run's does; without, the agent's word that it used them decides (helpful when
solved, harmful when not). An ``outcome_id`` is recorded in the history entry, and an id
recorded before is not counted again (an agent that retries a call counts once).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from arcmemo.core.records import Attempt, Selection, Step, TaskResult
from arcmemo.memory.attribution import (
    ConceptVerdict,
    TaskAttribution,
    attribute_task,
    record_attribution,
)
from arcmemo.memory.render import lesson_name
from arcmemo.memory.schema import HistoryEntry, Memory, concept_id
from arcmemo.run.continual import record_selection_stats

OUTCOME_TARGET = "outcome"


class UnknownConceptError(ValueError):
    """An outcome named entries the memory does not hold (nothing was recorded)."""


class OutcomeRecord(BaseModel):
    """What recording one outcome did."""

    counted: bool = Field(description="False: this outcome_id was recorded before.")
    task_id: str
    concepts: list[str] = Field(default_factory=list, description="The entries credited.")
    verdicts: dict[str, str] = Field(
        default_factory=dict, description="Attribution verdict by concept id."
    )


def _target(outcome_id: str | None) -> str:
    return OUTCOME_TARGET if outcome_id is None else f"{OUTCOME_TARGET} {outcome_id}"


def seen_outcome(memory: Memory, outcome_id: str) -> bool:
    target = _target(outcome_id)
    return any(e.op == "stats" and e.target == target for e in memory.history)


def resolve_names(memory: Memory, names: Sequence[str]) -> list[str]:
    """The memory's names of the concepts or lessons ``names`` give (any spelling of a
    concept); :class:`UnknownConceptError` naming those it does not hold."""
    lessons = {concept_id(lesson_name(i)): lesson_name(i) for i in range(len(memory.lessons))}
    resolved: list[str] = []
    unknown: list[str] = []
    for name in names:
        concept = memory.find(name)
        found = concept.name if concept is not None else lessons.get(concept_id(name))
        (resolved if found else unknown).append(found or name)
    if unknown:
        raise UnknownConceptError(f"not in the memory: {', '.join(map(repr, unknown))}")
    return list(dict.fromkeys(resolved))


def record_outcome(
    memory: Memory,
    concepts: Sequence[str],
    *,
    solved: bool,
    task_id: str,
    outcome_id: str | None = None,
    solution: str | None = None,
    actor: str = "agent",
) -> OutcomeRecord:
    """Record one outcome in ``memory`` (in place); see the module docstring."""
    names = resolve_names(memory, concepts)
    if outcome_id is not None and seen_outcome(memory, outcome_id):
        return OutcomeRecord(counted=False, task_id=task_id, concepts=names)
    step = Step(round=0, completion=solution or "", candidate=solution, verified=solved,
                concepts=names)  # fmt: skip
    result = TaskResult(
        task_id=task_id,
        solved=solved,
        attempts=[Attempt(index=0, steps=[step])],
        selection=Selection(selector="agent", selected=names),
    )
    record_selection_stats(memory, result, solved)
    if solution:
        attribution = attribute_task(memory, result, step if solved else None)
    else:
        verdict = "helpful" if solved else "harmful"
        attribution = TaskAttribution(task_id=task_id, confirmed=solved)
        for name in names:
            concept = memory.find(name)
            if concept is not None:  # lessons are not attributed
                attribution.verdicts.append(
                    ConceptVerdict(
                        concept_id=concept.id,
                        name=concept.name,
                        verdict=verdict,
                        evidence=["the agent reported using it"],
                    )
                )
    record_attribution(memory, attribution)
    memory.history.append(
        HistoryEntry(
            op="stats",
            target=_target(outcome_id),
            task_id=task_id,
            actor=actor,
            why="solved" if solved else "not solved",
            changes=names,
        )
    )
    return OutcomeRecord(
        counted=True,
        task_id=task_id,
        concepts=names,
        verdicts={v.concept_id: v.verdict for v in attribution.verdicts},
    )
