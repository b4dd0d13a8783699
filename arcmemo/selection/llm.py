"""Reasoning-guided selection (ArcMemo-PS): the model reads the memory and names concepts.

Returned names are resolved against the memory: exact ids first (case, spacing and
plural-insensitive), then the closest id when that match is unambiguous and has the same
numbers (``lesson 20`` is never ``lesson 2``, ``rotate 90`` never ``rotate 180``); the rest
are reported as unknown in the selection record, never silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import ConfigDict, Field
from rapidfuzz import fuzz, process

from arcmemo import prompting
from arcmemo.memory.edits import derived
from arcmemo.memory.ontology import Concept, Memory, concept_id
from arcmemo.memory.render import USAGE_THRESHOLD, lesson_name
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.records import Selection
from arcmemo.selection.base import SELECTORS, Selector, SolveViewOptions, memory_format
from arcmemo.structured import OutputError, generate_structured, load_yaml_block

# High enough that only misspellings match: "fill region centre" must not become
# "fill region left" (0.82), while "fill region rite" is "fill region right" (0.91). The
# score is rapidfuzz's normalized Indel similarity, 2 * LCS / total length (difflib's ratio
# counts Ratcliff-Obershelp blocks instead, never more; on these names the two agree).
FUZZY_CUTOFF = 0.9
AMBIGUITY_MARGIN = 0.05
_NUMBER = re.compile(r"\d+")
_NUMBERED_LINE = re.compile(r"^.*\d.*$", re.MULTILINE)


def _numbers(name: str) -> list[int]:
    return [int(n) for n in _NUMBER.findall(name)]


def _concept_names(concepts: Sequence[Concept]) -> dict[str, str]:
    """The names a selector may return for concepts, by id (``lesson N`` are the others)."""
    return {c.id: c.name for c in concepts}


def _lesson_names(memory: Memory) -> dict[str, str]:
    return {concept_id(lesson_name(i)): lesson_name(i) for i in range(len(memory.lessons))}


def _ids_by_numbers(concepts: Sequence[Concept]) -> dict[tuple[int, ...], list[str]]:
    ids = derived("selectable concept names", concepts, _concept_names)
    # One scan of all ids (in C) finds the few with digits; the others share no numbers.
    text = "\n".join(ids)
    lines_are_ids = text.count("\n") == max(len(ids) - 1, 0)  # a slug holds no line break
    numbered = set(_NUMBERED_LINE.findall(text)) if lines_are_ids else set(ids)
    by_numbers: dict[tuple[int, ...], list[str]] = {}
    for cid in ids:
        key = tuple(_numbers(cid)) if cid in numbered else ()
        by_numbers.setdefault(key, []).append(cid)
    return by_numbers


def resolve_names(names: list[str], memory: Memory) -> tuple[list[str], list[str], list[str]]:
    """(resolved names in memory spelling, unknown names, notes on fuzzy matches).

    The concept names and their grouping by numbers are kept per version of the concept
    list (:func:`arcmemo.memory.edits.derived`): a selection is resolved for every task.
    """
    concepts = derived("selectable concept names", memory.concepts, _concept_names)
    lessons = _lesson_names(memory)
    resolved: list[str] = []
    unknown: list[str] = []
    notes: list[str] = []
    for name in names:
        wanted = concept_id(name)
        match = lessons.get(wanted) or concepts.get(wanted)  # a lesson's name wins over a concept's
        if match is None:
            numbers = tuple(_numbers(wanted))
            by_numbers = derived("concept ids by numbers", memory.concepts, _ids_by_numbers)
            candidates = by_numbers.get(numbers, [])  # each id once already
            numbered = [cid for cid in lessons if tuple(_numbers(cid)) == numbers]
            if numbered:  # else the kept list is read as it is, not copied per unknown name
                candidates = list(dict.fromkeys([*candidates, *numbered]))
            # Ties never pass the ambiguity margin, so their order does not matter.
            scored = [
                (score / 100, cid)
                for cid, score, _ in process.extract(
                    wanted, candidates, scorer=fuzz.ratio, processor=None, limit=2
                )
            ]
            best = scored[0] if scored else (0.0, "")
            runner_up = scored[1][0] if len(scored) > 1 else 0.0
            if best[0] >= FUZZY_CUTOFF and best[0] - runner_up >= AMBIGUITY_MARGIN:
                match = lessons.get(best[1]) or concepts[best[1]]
                notes.append(f"{name!r} matched to {match!r} ({best[0]:.2f})")
            else:
                unknown.append(name)
                continue
        if match not in resolved:
            resolved.append(match)
    return resolved, unknown, notes


def parse_names(text: str) -> list[str]:
    """The list of names at the end of a selection answer."""
    data = load_yaml_block(text)
    if isinstance(data, dict):
        data = data.get("concepts") or data.get("selected") or data.get("names")
    if not isinstance(data, list):
        raise OutputError("expected a YAML list of concept names in a ```yaml block")
    names = []
    for item in data:
        if isinstance(item, dict) and len(item) == 1:
            item = next(iter(item))  # "- name: why" parsed as a mapping: keep the name
        names.append(str(item).strip())
    return [n for n in names if n]


class LLMSelectorOptions(SolveViewOptions):
    """Options of the ``llm`` selector."""

    model_config = ConfigDict(extra="forbid")

    budget_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Exact cap (estimated tokens) on the memory text the model reads.",
    )
    usage_threshold: int = Field(
        default=USAGE_THRESHOLD,
        ge=0,
        description="Concepts used at least this often are shown in full, the rest by name.",
    )


@SELECTORS.register("llm", options=LLMSelectorOptions)
class LLMSelector(Selector):
    """The model explores the problem against the memory's selection view."""

    uses_model = True

    def __init__(self, options: LLMSelectorOptions | None = None) -> None:
        options = options or LLMSelectorOptions()
        self.budget_tokens = options.budget_tokens
        self.usage_threshold = options.usage_threshold
        self.solve_budget_tokens = options.solve_budget_tokens

    def _prompt(self, memory: Memory, problem: str, previous: str | None) -> str:
        return prompting.render(
            "selection/select",
            domain=memory.domain,
            format=memory_format(memory),
            memory=memory.render(
                "selection", budget_tokens=self.budget_tokens, usage_threshold=self.usage_threshold
            ),
            problem=problem,
            previous=previous or "",
        )

    async def preview(self, memory: Memory, problem: str, *, task_id: str) -> list[str]:
        if not memory.concepts and not memory.lessons:
            return []
        return [self._prompt(memory, problem, None)]

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        model: ModelClient | None,
        previous_attempt: str | None = None,
    ) -> Selection:
        if model is None:
            raise ValueError("the llm selector needs a model")
        if not memory.concepts and not memory.lessons:
            return Selection(selector=self.name, trace="memory is empty")
        answer = await generate_structured(
            model,
            [Message(role="user", content=self._prompt(memory, problem, previous_attempt))],
            parse_names,
            stage="select",
            task_id=task_id,
        )
        if not answer.ok:
            return Selection(
                selector=self.name,
                usage=answer.usage,
                trace=f"selection failed: {answer.error}\n\n{answer.raw[-1]}",
            )
        selected, unknown, notes = resolve_names(answer.value, memory)
        trace = answer.raw[-1] + ("\n\n" + "\n".join(notes) if notes else "")
        return Selection(
            selector=self.name, selected=selected, unknown=unknown, trace=trace, usage=answer.usage
        )
