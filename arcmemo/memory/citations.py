"""Attribution by citation: the solver's own list of the entries it used (``--cite``).

The same three verdicts as :mod:`arcmemo.memory.attribution`, with "used" meaning "cited"
(:attr:`~arcmemo.core.records.Step.cited`, which holds only entries the step's prompt showed):

* ``helpful``: the write signal confirmed a solution whose step showed the concept and
  cited it;
* ``harmful``: no solution was confirmed, and an answered step that showed the concept
  cited it;
* ``unused``: every other shown concept (never cited, or cited only by an attempt that
  failed while another was confirmed).

A name cited but not shown (:attr:`~arcmemo.core.records.Step.cited_unshown`) earns nothing.
Lessons are left out, as in the other sources.
"""

from __future__ import annotations

from arcmemo.core.records import Step, TaskResult
from arcmemo.memory.attribution import ConceptVerdict, TaskAttribution, Verdict
from arcmemo.memory.schema import Memory


def _cites(memory: Memory, step: Step, concept_id: str) -> bool:
    return any(memory.key(name) == concept_id for name in step.cited)


def attribute_by_citations(
    memory: Memory, result: TaskResult, confirmed: Step | None
) -> TaskAttribution:
    """The citation verdict of every concept of ``memory`` shown to ``result``'s task;
    ``confirmed`` is the step the write signal confirmed (None when it confirmed none)."""
    attribution = TaskAttribution(task_id=result.task_id, confirmed=confirmed is not None)
    steps = [s for a in result.attempts for s in a.steps if s.answered]
    seen: set[str] = set()
    for name in result.shown:
        concept = memory.find(name)
        if concept is None or concept.id in seen:
            continue  # a lesson, or a concept no longer in the memory
        seen.add(concept.id)
        verdict: Verdict = "unused"
        evidence: list[str] = []
        if confirmed is not None:
            if _cites(memory, confirmed, concept.id):
                verdict, evidence = "helpful", ["cited by the confirmed solution"]
        elif any(_cites(memory, s, concept.id) for s in steps):
            verdict, evidence = "harmful", ["cited by an unconfirmed attempt"]
        attribution.verdicts.append(
            ConceptVerdict(
                concept_id=concept.id, name=concept.name, verdict=verdict, evidence=evidence
            )
        )
    return attribution
