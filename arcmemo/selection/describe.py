"""Description-based lesson selection (ArcMemo-OE's read, as in the paper).

The selector model first describes the problem in text (observations across the examples,
then speculation about the rule); a second call picks the ``top_k`` lessons (5 by default)
from the numbered lesson list given that description (and, on a retry, the failed attempt).
Lesson numbers are resolved exactly: a number outside the list is reported as unknown,
never mapped to another lesson. The solve prompt shows the description, marked as possibly
wrong, above the chosen lessons.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.core import prompting
from arcmemo.core.records import Selection
from arcmemo.core.tokens import Usage
from arcmemo.memory.render import lesson_name, render_lessons
from arcmemo.memory.schema import Memory
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.structured import OutputError, generate_structured, load_yaml_block, tagged
from arcmemo.selection.base import (
    EARLIER_ANSWER,
    SELECTORS,
    Selector,
    render_hint,
    warn_if_empty,
)

# The selection trace holds the description first, then the selection answer.
DESCRIPTION_HEADER = "## description\n"
ANSWER_HEADER = "\n## selection\n"
_LESSON_NUMBER = re.compile(r"^\s*(?:lesson\s*)?#?\s*(\d+)\s*\.?\s*$", re.IGNORECASE)


def parse_description(text: str) -> str:
    """The description: the observation summary and the speculation (``<details>`` left
    out), from the tagged answer."""
    summary = tagged(text, "summary") or tagged(text, "observations")
    speculation = tagged(text, "speculation")
    if not summary and not speculation:
        raise OutputError(
            "expected <observations> with a <summary>...</summary> inside, and "
            "<speculation>...</speculation>"
        )
    parts = []
    if summary:
        summary = re.sub(r"</?summary>", "", summary).strip()
        parts.append(f"Observations: {summary}")
    if speculation:
        speculation = re.sub(r"<details>.*?</details>", "", speculation, flags=re.DOTALL)
        parts.append(f"Speculation: {speculation.strip()}")
    return "\n\n".join(parts)


def parse_lesson_numbers(text: str) -> list[int]:
    """Lesson numbers of the YAML list at the end of an answer (``3``, ``lesson 3``)."""
    data = load_yaml_block(text)
    if isinstance(data, dict):
        data = data.get("lessons") or data.get("selected")
    if not isinstance(data, list):
        raise OutputError("expected a YAML list of lesson numbers in a ```yaml block")
    numbers: list[int] = []
    for item in data:
        if isinstance(item, dict) and len(item) == 1:
            item = next(iter(item))
        match = _LESSON_NUMBER.match(str(item))
        if match is None:
            raise OutputError(f"{item!r} is not a lesson number; list numbers such as 3")
        numbers.append(int(match.group(1)))
    return numbers


def description_of(selection: Selection) -> str:
    """The description a ``describe`` selection was made from ("" if none)."""
    trace = selection.trace or ""
    if not trace.startswith(DESCRIPTION_HEADER):
        return ""
    return trace[len(DESCRIPTION_HEADER) :].split(ANSWER_HEADER, 1)[0].strip()


class DescribeSelectorOptions(BaseModel):
    """Options of the ``describe`` selector."""

    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=5, ge=1, description="Lessons kept per problem.")
    budget_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Exact cap (estimated tokens) on the lesson list the model picks from: "
        "the first lessons that fit, the rest counted in a closing note (none: every lesson, "
        "as the paper).",
    )


@SELECTORS.register("describe", options=DescribeSelectorOptions)
class DescribeSelector(Selector):
    """Describe the problem, then pick the top-k lessons from the description (OE)."""

    uses_model = True

    def __init__(self, options: DescribeSelectorOptions | None = None) -> None:
        options = options or DescribeSelectorOptions()
        self.top_k = options.top_k
        self.budget_tokens = options.budget_tokens

    def _describe_prompt(self, memory: Memory, problem: str) -> str:
        return prompting.render("selection/describe", domain=memory.domain, problem=problem)

    def _lessons_prompt(self, memory: Memory, description: str, previous: str | None) -> str:
        return prompting.render(
            "selection/lessons",
            domain=memory.domain,
            description=description,
            lessons=render_lessons(memory, budget_tokens=self.budget_tokens).strip(),
            top_k=self.top_k,
            previous=previous or "",
        )

    async def preview(self, memory: Memory, problem: str, *, task_id: str) -> list[str]:
        if not memory.lessons:
            return []
        return [
            self._describe_prompt(memory, problem),
            self._lessons_prompt(memory, EARLIER_ANSWER, None),
        ]

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        clients: Mapping[str, ModelClient],
        previous_attempt: str | None = None,
    ) -> Selection:
        model = self.client(clients)
        if not memory.lessons:
            return Selection(selector=self.name, trace="memory has no lessons")
        described = await generate_structured(
            model,
            [Message(role="user", content=self._describe_prompt(memory, problem))],
            parse_description,
            stage="select",
            task_id=task_id,
        )
        if not described.ok:
            failed = Selection(
                selector=self.name,
                usage=described.usage,
                trace=f"description failed: {described.error}\n\n{described.raw[-1]}",
            )
            return warn_if_empty(failed, f"the description did not parse ({described.error})")
        description = described.value
        prompt = self._lessons_prompt(memory, description, previous_attempt)
        answer = await generate_structured(
            model,
            [Message(role="user", content=prompt)],
            parse_lesson_numbers,
            stage="select",
            task_id=task_id,
        )
        usage: Usage = described.usage + answer.usage
        trace = DESCRIPTION_HEADER + description + ANSWER_HEADER + answer.raw[-1]
        if not answer.ok:
            why = f"\n\nselection failed: {answer.error}"
            return warn_if_empty(
                Selection(selector=self.name, usage=usage, trace=trace + why),
                f"the answer did not parse ({answer.error})",
            )
        selected: list[str] = []
        unknown: list[str] = []
        for number in answer.value:
            if not 1 <= number <= len(memory.lessons):
                unknown.append(lesson_name(number - 1))
            elif lesson_name(number - 1) not in selected and len(selected) < self.top_k:
                selected.append(lesson_name(number - 1))
        return warn_if_empty(
            Selection(
                selector=self.name, selected=selected, unknown=unknown, trace=trace, usage=usage
            )
        )

    def render(self, memory: Memory, selection: Selection) -> str:
        indices = [
            index
            for index in range(len(memory.lessons))
            if lesson_name(index) in selection.selected
        ]
        description = description_of(selection)
        body = render_lessons(memory, indices) if indices else ""
        if not body and description:
            body = "(none of the lessons was chosen)"
        return render_hint(memory, body, description=description, fmt="oe")
