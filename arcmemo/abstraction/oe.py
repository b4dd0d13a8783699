"""Open-ended abstraction (ArcMemo-OE): situation/suggestion lessons from a solution."""

from __future__ import annotations

from pydantic import ValidationError

from arcmemo import prompting
from arcmemo.abstraction.base import (
    ABSTRACTORS,
    AbstractionOutcome,
    Abstractor,
    SolvedItem,
)
from arcmemo.memory.ontology import Lesson, Memory, Solution
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.structured import OutputError, generate_structured, load_yaml_block


def parse_lessons(text: str) -> list[Lesson]:
    """Lessons of a model answer; every item must have a situation and a suggestion."""
    data = load_yaml_block(text)
    if isinstance(data, dict) and isinstance(data.get("lessons"), list):
        data = data["lessons"]
    if not isinstance(data, list) or not data:
        raise OutputError("expected a non-empty YAML list of {situation, suggestion} items")
    lessons, errors = [], []
    for number, item in enumerate(data, 1):
        if not isinstance(item, dict):
            errors.append(f"item {number}: expected a mapping with situation and suggestion")
            continue
        fields = {str(k).lower(): v for k, v in item.items()}
        try:
            lessons.append(
                Lesson(
                    situation=str(fields.get("situation") or ""),
                    suggestion=str(fields.get("suggestion") or ""),
                )
            )
        except ValidationError:
            errors.append(f"item {number}: situation and suggestion must both be non-empty")
    if errors:
        raise OutputError("; ".join(errors))
    return lessons


@ABSTRACTORS.register("oe")
class LessonAbstractor(Abstractor):
    """Writes two to four lessons per verified solution."""

    name = "oe"

    async def abstract(
        self, memory: Memory, item: SolvedItem, model: ModelClient
    ) -> AbstractionOutcome:
        outcome = AbstractionOutcome(task_id=item.task_id, format=self.name)
        answer = await generate_structured(
            model,
            [
                Message(
                    role="user",
                    content=prompting.render(
                        "abstraction/lessons",
                        domain=item.domain,
                        problem=item.problem,
                        solution=item.solution,
                        reasoning=item.reasoning or "",
                        memory=memory.render("compressed") if memory.lessons else "",
                    ),
                )
            ],
            parse_lessons,
            stage="abstract",
            task_id=item.task_id,
        )
        if not outcome.account(answer, "lessons"):
            return outcome
        for lesson in answer.value:
            if memory.add_lesson(lesson, task_id=item.task_id, actor=self.actor):
                outcome.written.append(f"lesson {len(memory.lessons)}")
        memory.solutions[item.task_id] = Solution(program=item.solution)
        return outcome
