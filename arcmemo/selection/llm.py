"""Reasoning-guided selection (ArcMemo-PS): the model reads the memory and names concepts.

Returned names are resolved against the memory: exact ids first (case, spacing and
plural-insensitive), then the closest id when that match is unambiguous and has the same
numbers (``lesson 20`` is never ``lesson 2``, ``rotate 90`` never ``rotate 180``); the rest
are reported as unknown in the selection record, never silently dropped.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence

from pydantic import ConfigDict, Field
from rapidfuzz import fuzz, process

from arcmemo.core import prompting
from arcmemo.core.records import Selection
from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.edits import derived
from arcmemo.memory.paper_view import render_paper
from arcmemo.memory.render import USAGE_THRESHOLD, lesson_name
from arcmemo.memory.schema import Concept, Memory, concept_id
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.context import answer_room
from arcmemo.models.structured import (
    OutputError,
    fenced_blocks,
    generate_structured,
    load_yaml_block,
)
from arcmemo.selection.base import (
    SELECTORS,
    Examples,
    RunSandbox,
    Selector,
    SolveViewOptions,
    memory_format,
    warn_if_empty,
)
from arcmemo.selection.behaviour import BehaviourOptions, BehaviourRunner, prefilter

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
        wanted = memory.key(name)
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


# Keys under which an answer's mapping holds its list, and under which a list item that is a
# mapping holds its name ("- name: scale grid\n  why: ..."), in the order they are tried.
LIST_KEYS = ("concepts", "selected", "names", "lessons", "selection", "entries")
NAME_KEYS = ("name", "concept", "lesson", "title", "id", "entry")
# Fenced blocks whose plain lines are read as names when they hold no YAML list.
TEXT_BLOCKS = ("text", "txt", "plain", "markdown", "md")
PLAIN_BLOCKS = ("yaml", "yml", "json", "", *TEXT_BLOCKS)
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _plain_names(text: str) -> list[str]:
    """Names written as plain text in a fenced block: one a line (list markers dropped), or
    comma-separated on a single line."""
    lines = [_LIST_MARKER.sub("", line).strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line]
    if len(lines) == 1:
        return [part.strip() for part in lines[0].split(",")]
    return lines


def _item_name(item: object, position: int) -> str:
    """The name of one list item: a string or number as it is; a mapping by its name key, or
    a one-key mapping by its key (``- rotate grid: why``)."""
    if isinstance(item, dict):
        lowered = {str(key).strip().lower(): value for key, value in item.items()}
        for key in NAME_KEYS:
            if key in lowered and isinstance(lowered[key], (str, int, float)):
                return str(lowered[key]).strip()
        if len(item) == 1:
            return str(next(iter(item))).strip()
        raise OutputError(
            f"item {position} of the YAML list is a mapping without a `name` key "
            f"(keys: {', '.join(map(str, item))})"
        )
    if isinstance(item, (list, tuple, set)):
        raise OutputError(f"item {position} of the YAML list is itself a list")
    return "" if item is None else str(item).strip()


def parse_names(text: str) -> list[str]:
    """The list of names at the end of a selection answer.

    Read as a careful reader would: a YAML or JSON list of names, of mappings with a name
    (``- name: scale grid``), of ``name: why`` pairs, that list under a key (``concepts:``),
    or plain names in a fenced block, one a line.
    """
    try:
        data = load_yaml_block(text)
    except OutputError:
        text_blocks = fenced_blocks(text, TEXT_BLOCKS)
        if not text_blocks:
            raise
        data = text_blocks[-1]
    if isinstance(data, dict):
        lowered = {str(key).strip().lower(): value for key, value in data.items()}
        found = next((lowered[k] for k in LIST_KEYS if k in lowered), None)
        lists = [value for value in data.values() if isinstance(value, list)]
        if found is not None:
            data = found
        elif len(lists) == 1:
            data = lists[0]
        elif any(key in lowered for key in NAME_KEYS):
            data = [data]  # one entry, as a mapping with its name
        elif all(v is None or isinstance(v, str) for v in data.values()):
            data = list(data)  # names as keys, each with its reason
    plain = fenced_blocks(text, PLAIN_BLOCKS) if isinstance(data, str) else []
    if plain:
        data = _plain_names(plain[-1])  # YAML would fold the lines into one name
    if not isinstance(data, list):
        raise OutputError("expected a YAML list of concept names in a ```yaml block")
    names = [_item_name(item, i) for i, item in enumerate(data, start=1)]
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
    behaviour_top_k: int | None = Field(
        default=None,
        ge=1,
        description="Pre-filter by behaviour: before the model reads the memory, keep of the "
        "concepts that carry library functions only the N whose functions come closest to "
        "the train outputs (arcmemo.selection.behaviour); concepts without code stay. None: "
        "no pre-filter.",
    )
    behaviour_budget_s: float = Field(
        default=20.0, gt=0, description="The pre-filter's time budget per task (budget_s)."
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
        self.view = options.view
        self.behaviour: BehaviourRunner | None = None
        if options.behaviour_top_k is not None:
            self.uses_examples = True
            self.behaviour = BehaviourRunner(
                BehaviourOptions(top_k=options.behaviour_top_k, budget_s=options.behaviour_budget_s)
            )

    def selection_view(self, memory: Memory, budget_tokens: int | None = None) -> str:
        """The memory as the selection prompt shows it, within ``budget_tokens`` (default:
        the selector's own budget)."""
        budget = budget_tokens or self.budget_tokens
        threshold = self.usage_threshold
        if self.shows_paper_view(memory):
            return render_paper(memory, usage_threshold=threshold, budget_tokens=budget)
        return memory.render("selection", budget_tokens=budget, usage_threshold=threshold)

    def _prompt(
        self,
        memory: Memory,
        problem: str,
        previous: str | None,
        budget_tokens: int | None = None,
    ) -> str:
        if self.shows_paper_view(memory):
            return prompting.render(
                "selection/paper",
                memory=self.selection_view(memory, budget_tokens),
                problem=problem,
                previous=previous or "",
            )
        return prompting.render(
            "selection/select",
            domain=memory.domain,
            format=memory_format(memory),
            memory=self.selection_view(memory, budget_tokens),
            problem=problem,
            previous=previous or "",
        )

    async def _fitting_prompt(
        self, memory: Memory, problem: str, previous: str | None, model: ModelClient
    ) -> str:
        """The selection prompt, its memory view shrunk to fit the model's context window
        (with room for the answer) where the whole view would not."""
        prompt = self._prompt(memory, problem, previous)
        window = await model.context_window()
        if window is None:
            return prompt
        room = window - answer_room(window, model.defaults.max_tokens)
        if estimate_tokens(prompt) <= room:
            return prompt
        # What the prompt costs besides the memory view: the view gets what is left.
        frame = estimate_tokens(prompt) - estimate_tokens(self.selection_view(memory))
        budget = max(1, room - frame)
        if self.budget_tokens is not None:
            budget = min(budget, self.budget_tokens)
        return self._prompt(memory, problem, previous, budget_tokens=budget)

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
        clients: Mapping[str, ModelClient],
        previous_attempt: str | None = None,
        examples: Examples = (),
        sandbox: RunSandbox | None = None,
    ) -> Selection:
        model = self.client(clients)
        if not memory.concepts and not memory.lessons:
            return Selection(selector=self.name, trace="memory is empty")
        if self.behaviour is not None and examples:
            runner = self.behaviour
            ranking = await asyncio.to_thread(runner.rank, memory, examples, task_id, sandbox)
            memory = prefilter(memory, ranking, runner.options.top_k)
        answer = await generate_structured(
            model,
            [
                Message(
                    role="user",
                    content=await self._fitting_prompt(memory, problem, previous_attempt, model),
                )
            ],
            parse_names,
            stage="select",
            task_id=task_id,
        )
        if not answer.ok:
            failed = Selection(
                selector=self.name,
                usage=answer.usage,
                trace=f"selection failed: {answer.error}\n\n{answer.raw[-1]}",
            )
            return warn_if_empty(failed, f"the answer did not parse ({answer.error})")
        selected, unknown, notes = resolve_names(answer.value, memory)
        trace = answer.raw[-1] + ("\n\n" + "\n".join(notes) if notes else "")
        return warn_if_empty(
            Selection(
                selector=self.name,
                selected=selected,
                unknown=unknown,
                trace=trace,
                usage=answer.usage,
            )
        )
