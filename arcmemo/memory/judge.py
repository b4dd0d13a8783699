"""The aux model's second opinion on attribution (the run option ``attribution_judge``).

The lexical check of :mod:`arcmemo.memory.attribution` misses an idea used under other
names and counts a shared word. With the option on, one aux-model call per final task
(``prompts/attribution/judge.j2``, stage ``attribute``) reads the step that decides the
verdicts (the confirmed step, else the last failed final step that was shown concepts) with
the concepts it was shown and names those the solution uses; its answer then decides "used"
for those concepts, and the evidence records both opinions. A call that fails or cannot be
parsed leaves the lexical verdicts alone.
"""

from __future__ import annotations

from typing import Any

from arcmemo.core import prompting
from arcmemo.core.records import Step, TaskResult
from arcmemo.memory.schema import Concept, Memory, concept_id
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.structured import OutputError, generate_structured, load_yaml_block


def judged_step(result: TaskResult, confirmed: Step | None) -> Step | None:
    """The step whose use of the concepts decides the task's verdicts."""
    if confirmed is not None:
        return confirmed
    finals = [a.steps[-1] for a in result.attempts if a.steps and a.steps[-1].answered]
    shown = [s for s in finals if s.concepts]
    return shown[-1] if shown else None


def _shown_concepts(memory: Memory, step: Step) -> list[Concept]:
    found: dict[str, Concept] = {}
    for name in step.concepts:
        concept = memory.find(name)
        if concept is not None:
            found.setdefault(concept.id, concept)
    return list(found.values())


def parser(concepts: list[Concept]) -> Any:
    """A parser of the judge's answer: the YAML list of used names, each one of ``concepts``."""
    known = {c.id: c for c in concepts}

    def parse(text: str) -> set[str]:
        data = load_yaml_block(text)
        if data is None:
            data = []
        if not isinstance(data, list) or not all(isinstance(n, str) for n in data):
            raise OutputError("expected a YAML list of concept names (or [])")
        unknown = [n for n in data if concept_id(n) not in known]
        if unknown:
            names = ", ".join(c.name for c in concepts)
            raise OutputError(f"not among the concepts shown: {', '.join(unknown)}; use {names}")
        return {concept_id(n) for n in data}

    return parse


async def judge_usage(
    model: ModelClient, memory: Memory, result: TaskResult, confirmed: Step | None, *, domain: str
) -> dict[str, bool] | None:
    """Whether the deciding step used each concept it was shown, by concept id ({} when it
    was shown none; None when the answer could not be used)."""
    step = judged_step(result, confirmed)
    concepts = _shown_concepts(memory, step) if step is not None else []
    if step is None or not concepts:
        return {}
    content = prompting.render(
        "attribution/judge",
        domain=domain,
        solution=step.candidate or step.completion,
        concepts=[{"name": c.name, "description": c.description} for c in concepts],
    )
    answer = await generate_structured(
        model,
        [Message(role="user", content=content)],
        parser(concepts),
        stage="attribute",
        task_id=result.task_id,
    )
    if not answer.ok or answer.value is None:
        return None
    return {c.id: c.id in answer.value for c in concepts}
