"""Open-ended abstraction (ArcMemo-OE), as in the paper: a post-hoc reconstruction of how the
solution was found (interleaved observations and thoughts), then situation/suggestion
lessons from it, both few-shot with the hand-written examples that carry a thought process
and lessons. Existing lessons are not shown (the paper's OE write ignores the memory); an
identical lesson is not added twice.

For AIME the lessons follow the authors' pilot adaptation (``docs/method.md``, section 3):
written from the solution trace, two to five per problem, with number-free structural
situations, concrete techniques, one lesson for the key step, no meta advice, and each
situation opening with its mathematical domain in brackets (``[Number theory] ...``), which
the answer must carry: the option ``domain_prefix`` (``experiments/aime/oe.sh`` sets it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import Field

from arcmemo.abstraction.base import ABSTRACTORS, Abstractor, PitfallOptions
from arcmemo.abstraction.contrast import ContrastOptions
from arcmemo.abstraction.examples import Example, ExampleOptions, load_examples
from arcmemo.abstraction.lessons import parse_lessons
from arcmemo.abstraction.outcome import AbstractionOutcome, ask
from arcmemo.core.inlined_library import without_library
from arcmemo.core.records import SolvedItem
from arcmemo.memory.schema import Lesson, Memory, Solution
from arcmemo.models.client import ModelClient
from arcmemo.models.structured import OutputError, tagged

_STEP = re.compile(r"^\s*-\s*[ot]\s*\d+\s*:", re.MULTILINE | re.IGNORECASE)
# "[Number theory] when ...": a bracketed domain of a few words, then the situation itself.
_DOMAIN_PREFIX = re.compile(r"^\[[^\[\]\n]{2,40}\]\s*\S")


def parse_thought_process(text: str) -> str:
    """The reconstruction inside <thought_process> tags (numbered o/t lines)."""
    body = tagged(text, "thought_process")
    if not body or len(_STEP.findall(body)) < 2:
        raise OutputError(
            "expected <thought_process>...</thought_process> holding numbered lines such as "
            "'- o 1: ...' (observations) and '- t 1: ...' (thoughts)"
        )
    return body


def parse_prefixed_lessons(text: str) -> list[Lesson]:
    """:func:`parse_lessons`, each situation opening with its domain in brackets."""
    lessons = parse_lessons(text)
    missing = [n for n, les in enumerate(lessons, 1) if not _DOMAIN_PREFIX.match(les.situation)]
    if missing:
        raise OutputError(
            f"item {', '.join(map(str, missing))}: the situation must start with its domain "
            "in brackets, e.g. '[Number theory] ...'"
        )
    return lessons


class LessonOptions(ExampleOptions, PitfallOptions, ContrastOptions):
    """Options of the ``oe`` format (``--memory-format-arg k=v``)."""

    domain_prefix: bool = Field(
        default=False,
        description="The AIME pilot's lessons: two to five, number-free situations opening "
        "with their mathematical domain in brackets ([Geometry] ...), concrete techniques.",
    )


@ABSTRACTORS.register("oe", options=LessonOptions)
class LessonAbstractor(Abstractor):
    """Thought-process reconstruction, then up to four lessons per verified solution."""

    model_calls = 2  # the thought process, then the lessons
    contrast_entries = "lessons"

    def __init__(self, options: LessonOptions | None = None, *, actor: str = "human") -> None:
        super().__init__(options or LessonOptions(), actor=actor)
        self.settings = options or LessonOptions()

    def examples(self, domain: str, task_id: str | None = None) -> list[Example]:
        """The examples that show both steps (a thought process and lessons), never
        ``task_id``'s."""
        examples = load_examples(self.settings.examples, domain, excluding=task_id)
        usable = [e for e in examples if e.thought_process.strip() and e.lessons]
        limit = self.settings.n_examples
        return usable if limit is None else usable[:limit]

    async def abstract(
        self, memory: Memory, item: SolvedItem, clients: Mapping[str, ModelClient]
    ) -> AbstractionOutcome:
        model = self.client(clients)
        outcome = AbstractionOutcome(task_id=item.task_id, format=self.name)
        examples = self.examples(item.domain, item.task_id)
        solution = without_library(item.solution)
        trace = await ask(
            model,
            "abstraction/thought_process",
            parse_thought_process,
            task_id=item.task_id,
            domain=item.domain,
            problem=item.problem,
            solution=solution,
            reasoning=item.reasoning or "",
            examples=examples,
        )
        if not outcome.account(trace, "thought process"):
            return outcome
        prefixed = self.settings.domain_prefix
        answer = await ask(
            model,
            "abstraction/lessons",
            parse_prefixed_lessons if prefixed else parse_lessons,
            task_id=item.task_id,
            domain=item.domain,
            domain_prefix=prefixed,
            problem=item.problem,
            solution=solution,
            thought_process=trace.value,
            examples=examples,
        )
        if not outcome.account(answer, "lessons"):
            return outcome
        for lesson in answer.value:
            if memory.add_lesson(lesson, task_id=item.task_id, actor=self.actor):
                outcome.written.append(f"lesson {len(memory.lessons)}")
        memory.solutions[item.task_id] = Solution(program=item.solution)
        return outcome
