"""Rendering a memory into prompt text.

Four views, following the paper's renderings:

* ``full``: every entry with every field (for people and for the "all memory" ablation);
* ``compressed``: what the abstraction prompt sees; established concepts in full (cues and
  implementation notes, parameters without their descriptions), the rest by name;
* ``selection``: what a selector reads; established concepts in full with parameter
  descriptions, cues and implementation notes, the rest by name, optionally within an exact
  token budget (the estimate of the rendered text never exceeds it; the most useful
  concepts come first);
* ``solve``: the selected entries in full, every other concept by title only; under a
  budget the titles are listed most useful first until it is spent and the rest are
  counted in a closing note.

A ``related:`` line lists at most :data:`RELATED_SHOWN` names (written relations first,
then those the types imply, most useful first) and counts the rest ("and 988 more"): in a
grown memory a thousand criteria routines relate to every filter, and listing them all on
every block would make each view grow with the square of the memory.

A concept is *established* when it was used at least ``usage_threshold`` times (default
:data:`USAGE_THRESHOLD` = 2, the paper's threshold) or comes from the hand-written seed
ontology (which the paper's memory reached through its hand annotations). Names of the
others are listed per section, so each section still shows what exists.

The type vocabulary is rendered only for memories that hold concepts: lesson and cheatsheet
memories carry no program-synthesis material into their prompts.

Rendering is deterministic (same memory, same arguments -> byte-identical text) so that
prompt prefixes stay cacheable at the provider.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter, itemgetter

from arcmemo.core.bulk import paused_gc
from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.edits import StaleCacheError, verifying
from arcmemo.memory.evidence import active
from arcmemo.memory.relations import RelationIndex, relation_index
from arcmemo.memory.schema import Concept, Lesson, Memory

VIEWS = ("full", "compressed", "selection", "solve")
USAGE_THRESHOLD = 2
GRID_MANIPULATION = "grid manipulation"
# Provenance source of the hand-written seed ontology (arcmemo.memory.seeds.SEED_SOURCE).
SEED_SOURCE = "seed"
LOWER_USAGE_LABEL = "lower-usage concepts"
OTHER_LABEL = "other concepts"
RELATED_SHOWN = 12
# The default cap on the solve view that selectors put in the solve prompt (their option
# solve_budget_tokens): at the paper's few hundred concepts every title fits; a memory of
# thousands lists its most useful titles and counts the rest.
SOLVE_BUDGET_TOKENS = 8000
# A space before a digit is a token of its own (arcmemo.core.tokens), so a title that starts
# with a digit costs one more after ": " or ", ".
_DIGIT_FIRST = re.compile(r"\d")
_LESSON_ID = re.compile(r"lesson-([1-9]\d*)")  # as concept_id(lesson_name(i)) spells it
_BY_ID = attrgetter("id")
_BY_NAME = attrgetter("name")
_BY_KEY = itemgetter(0)


def lesson_name(index: int) -> str:
    """The selectable name of the lesson at ``index`` (0-based) of a memory."""
    return f"lesson {index + 1}"


def _lesson_number(wanted_id: str) -> int | None:
    """The 0-based index a ``lesson N`` id names (``concept_id(lesson_name(i))``), if any."""
    match = _LESSON_ID.fullmatch(wanted_id)
    return int(match.group(1)) - 1 if match else None


def is_established(concept: Concept, usage_threshold: int = USAGE_THRESHOLD) -> bool:
    """Whether a view renders ``concept`` in full rather than by name."""
    return concept.usage >= usage_threshold or SEED_SOURCE in concept.provenance.sources


def _section_key(concept: Concept) -> tuple[int, str]:
    if concept.kind == "structure":
        return (0, "Structures")
    subtype = concept.routine_subtype or "misc"
    if subtype == GRID_MANIPULATION:
        return (1, "Routines: grid manipulation")
    return (2, f"Routines: {subtype}")


@dataclass(frozen=True, eq=False)  # two instances, known by identity (a fast hash in keys)
class _Fields:
    """Which fields a view shows in a concept block."""

    param_descriptions: bool
    implementation: bool


_FULL = _Fields(param_descriptions=True, implementation=True)
_COMPRESSED = _Fields(param_descriptions=False, implementation=True)


def _related_line(concept: Concept, index: RelationIndex) -> list[str]:
    names, more = index.related(concept, RELATED_SHOWN)
    if more:
        names = [*names, f"and {more:,} more"]
    return [f"  related: {', '.join(names)}"] if names else []


def _concept_block(concept: Concept, fields: _Fields, index: RelationIndex, verify: bool) -> str:
    """A concept's block (its lines joined), built once per version of the concept list
    (a budgeted view shows the same blocks for every task)."""
    return _kept_block(concept, fields, index, verify)[0]


def _block_cost(concept: Concept, fields: _Fields, index: RelationIndex, verify: bool) -> int:
    """:func:`_cost` of a concept's block, counted once per version of the list."""
    text, cost = _kept_block(concept, fields, index, verify)
    if cost < 0:
        # A line break is a piece of its own (arcmemo.core.tokens), so the joined lines cost
        # what they cost apart, less the break after the last.
        cost = estimate_tokens(text) + 1
        if index.holds(concept):
            index.rendered[(id(concept), fields)] = (text, cost)
    return cost


def _kept_block(
    concept: Concept, fields: _Fields, index: RelationIndex, verify: bool
) -> tuple[str, int]:
    # (text, cost or -1 until asked for), kept by the index of this version of the list:
    # a string and a pair, which the cyclic collector does not walk as it would lists.
    # ``verify``: edits.verifying(), read once per view (an environment lookup per block
    # was a tenth of a full view's time).
    key = (id(concept), fields)
    member = index.holds(concept)
    kept = index.kept_render(concept, key) if member else None
    if kept is not None:
        if verify and _build_block(concept, fields, index) != kept[0]:
            raise StaleCacheError(f"{concept.name!r} was edited without counting as an edit")
        return kept
    kept = (_build_block(concept, fields, index), -1)
    if member:
        index.rendered[key] = kept
    return kept


def _build_block(concept: Concept, fields: _Fields, index: RelationIndex) -> str:
    lines = [f"- concept: {concept.name}"]
    if concept.description:
        lines.append(f"  description: {concept.description}")
    if concept.parameters:
        lines.append("  parameters:")
        for param in concept.parameters:
            text = f"    - {param.name}"
            if param.type:
                text += f" ({param.type})"
            if fields.param_descriptions and param.description:
                text += f": {param.description}"
            lines.append(text)
    if concept.output_type:
        lines.append(f"  output: {concept.output_type}")
    if concept.cues:
        lines.append("  cues:")
        lines.extend(f"    - {cue}" for cue in concept.cues)
    if fields.implementation and concept.implementation:
        lines.append("  implementation:")
        lines.extend(f"    - {note}" for note in concept.implementation)
    lines += _related_line(concept, index)
    return "\n".join(lines)


def _names_line(label: str, names: list[str]) -> str:
    return f"- {label}: {', '.join(names)}"


_Section = tuple[tuple[int, str], list[Concept], list[Concept]]  # key, by id, by name
_SECTIONS = "sections"  # key of the members' sections among what an index keeps


def _sections(concepts: Iterable[Concept]) -> list[_Section]:
    """``concepts`` grouped in sections, in order, each by id and by name."""
    grouped: dict[tuple[int, str], list[Concept]] = {}
    for concept in concepts:
        grouped.setdefault(_section_key(concept), []).append(concept)
    return [
        (key, sorted(members, key=_BY_ID), sorted(members, key=_BY_NAME))
        for key, members in sorted(grouped.items(), key=_BY_KEY)
    ]


def _member_sections(index: RelationIndex) -> list[_Section]:
    """The sections of every member of ``index``, grouped once per version of the list
    (each unbudgeted view walks them all)."""
    kept = index.rendered.get(_SECTIONS)
    if kept is None:
        kept = index.rendered[_SECTIONS] = _sections(index.order)
    return kept


def _render_concepts(
    sections: list[_Section],
    index: RelationIndex,
    full: set[str],
    titled: set[str],
    fields: _Fields,
    title_label: str,
) -> list[str]:
    """The concepts of ``sections``; ids in ``full`` as blocks, ids in ``titled`` by name,
    the rest left out (and a section left out when nothing of it is shown)."""
    verify = verifying()
    lines: list[str] = []
    for (_, header), by_id, by_name in sections:
        blocks = [_concept_block(c, fields, index, verify) for c in by_id if c.id in full]
        names = [c.name for c in by_name if c.id not in full and c.id in titled]
        if blocks or names:
            lines.append(f"## {header}")
            lines += blocks
            if names:
                lines.append(_names_line(title_label, names))
            lines.append("")
    return lines


def _render_types(memory: Memory) -> list[str]:
    if not memory.types or not memory.concepts:
        return []
    lines = ["## Types"]
    lines.extend(
        f"- {t.name} := {t.definition}" for t in sorted(memory.types, key=lambda t: t.name.lower())
    )
    lines.append("")
    return lines


def _lesson_lines(index: int, lesson: Lesson) -> list[str]:
    # A pitfall (learned from a failed attempt) is marked, so it reads as a warning.
    mark = "Pitfall: " if lesson.kind == "pitfall" else ""
    lines = [
        f"- {lesson_name(index)}",
        f"  {mark}situation: {lesson.situation}",
        f"  suggestion: {lesson.suggestion}",
    ]
    if lesson.guards:
        lines.append(f"  guards: {lesson.guards}")
    return lines


def _render_lessons(lessons: Iterable[tuple[int, Lesson]]) -> list[str]:
    lines = [line for index, lesson in lessons for line in _lesson_lines(index, lesson)]
    return (["## Lessons", *lines, ""]) if lines else []


def _render_cheatsheet(memory: Memory) -> list[str]:
    return ["## Cheatsheet", memory.cheatsheet.strip(), ""] if memory.cheatsheet.strip() else []


def _finish(lines: list[str]) -> str:
    return "\n".join(lines).strip() + "\n" if lines else ""


def _cost(lines: list[str]) -> int:
    """Estimated tokens of ``lines`` with their line breaks (what they add to a view)."""
    return sum(estimate_tokens(line) + 1 for line in lines)


# -- the selection and solve views under a budget ----------------------------------------


@dataclass
class _Layout:
    """What a view shows: concepts in full, by name, lessons, and what is left."""

    full: set[str] = field(default_factory=set)
    titled: set[str] = field(default_factory=set)
    lessons: list[int] = field(default_factory=list)
    cheatsheet: bool = False
    types: bool = True
    # The concepts of ``full`` and ``titled`` (a view of a big memory shows a few).
    shown: dict[str, Concept] = field(default_factory=dict)
    # Every choice in the order it was made, so the last ones can be taken back.
    order: list[tuple[str, str | int]] = field(default_factory=list)


@dataclass(frozen=True)
class _View:
    """How the selection or solve view chooses, in the order of its preference."""

    candidates: Iterable[Concept]  # concepts in the order they claim room (read once)
    in_full: Callable[[Concept], bool]  # which are shown in full when they fit
    lessons: list[int]  # lessons it may show, in order
    title_label: str
    omitted: str  # how the closing note says what is left out ("not shown")
    types_always: bool  # without a budget, the type vocabulary even when nothing is in full


def _count(number: int, noun: str) -> str:
    return f"{number:,} more {noun}{'' if number == 1 else 's'}"


def omitted_note(concepts: int, lessons: int, budget: int, omitted: str = "not shown") -> str:
    parts = [_count(concepts, "concept")] if concepts else []
    parts += [_count(lessons, "lesson")] if lessons else []
    return f"({' and '.join(parts)} {omitted}: memory budget of {budget:,} tokens)"


def _view_lines(
    memory: Memory, index: RelationIndex, view: _View, layout: _Layout, budget: int | None
) -> list[str]:
    lines = _render_types(memory) if layout.types else []
    # Every member shown (an unbudgeted view) reads the sections the index keeps.
    every = len(layout.shown) == len(index.order)
    sections = _member_sections(index) if every else _sections(layout.shown.values())
    lines += _render_concepts(sections, index, layout.full, layout.titled, _FULL, view.title_label)
    lines += _render_lessons((i, memory.lessons[i]) for i in sorted(layout.lessons))
    if layout.cheatsheet:
        lines += _render_cheatsheet(memory)
    hidden = len(memory.concepts) - len(layout.full) - len(layout.titled)
    hidden_lessons = len(view.lessons) - len(layout.lessons)
    if budget is not None and (hidden or hidden_lessons):
        lines.append(omitted_note(hidden, hidden_lessons, budget, view.omitted))
    return lines


@lru_cache(maxsize=1 << 16)  # a budgeted view costs the same titles for every task
def _title_cost(name: str) -> int:
    return estimate_tokens(name) + (1 if _DIGIT_FIRST.match(name) else 0)


def _budgeted_text(memory: Memory, index: RelationIndex, view: _View, budget: int) -> str:
    """Greedy within ``budget`` in the view's order, then lessons, then the cheatsheet;
    every line is costed as the estimator counts it (line breaks, headers, ``related:``
    lines, the closing note), and the text is measured at the end, taking back the last
    choices until it fits, so the estimate never exceeds the budget ("" when not even the
    closing note fits)."""
    layout = _Layout(types=False)
    limit = budget
    # The omitted note (and its line break) comes first in the accounting; the type
    # vocabulary comes with the first concept shown in full (names alone need no types).
    spent = _cost([omitted_note(len(memory.concepts), len(view.lessons), budget, view.omitted)])
    types_cost = _cost(_render_types(memory))
    opened: set[tuple[int, str]] = set()
    named: set[tuple[int, str]] = set()
    names_line = _cost([f"- {view.title_label}:"])
    verify = verifying()

    def section_cost(key: tuple[int, str]) -> int:
        return 0 if key in opened else _cost([f"## {key[1]}", ""])  # header, blank line

    # Each concept in full when the view wants it so and it fits, else by name; from the
    # first one that fits neither way on, the rest are left out (never a later entry in
    # place of an earlier one).
    for concept in view.candidates:
        key = _section_key(concept)
        if view.in_full(concept):
            cost = _block_cost(concept, _FULL, index, verify) + section_cost(key)
            cost += 0 if layout.types else types_cost
            if spent + cost <= limit:
                spent += cost
                opened.add(key)
                layout.types = True
                layout.full.add(concept.id)
                layout.shown[concept.id] = concept
                layout.order.append(("full", concept.id))
                continue
        cost = _title_cost(concept.name) + (1 if key in named else names_line)
        cost += section_cost(key)
        if spent + cost > limit:
            break
        spent += cost
        opened.add(key)
        named.add(key)
        layout.titled.add(concept.id)
        layout.shown[concept.id] = concept
        layout.order.append(("titled", concept.id))
    if view.lessons:
        spent += _cost(["## Lessons", ""])
    for lesson_index in view.lessons:
        cost = _cost(_lesson_lines(lesson_index, memory.lessons[lesson_index]))
        if spent + cost > limit:
            break
        spent += cost
        layout.lessons.append(lesson_index)
        layout.order.append(("lesson", lesson_index))
    cheatsheet = _cost(_render_cheatsheet(memory))
    if cheatsheet and spent + cheatsheet <= limit:
        layout.cheatsheet = True
    # Exact check: take back the last choices until the measured text fits.
    while True:
        text = _finish(_view_lines(memory, index, view, layout, budget))
        if estimate_tokens(text) <= budget:
            return text
        if layout.cheatsheet:
            layout.cheatsheet = False
            continue
        if not layout.order:
            return ""
        what, item = layout.order.pop()
        if what == "full":
            layout.full.discard(str(item))
            layout.types = bool(layout.full)
        elif what == "titled":
            layout.titled.discard(str(item))
        else:
            layout.lessons.remove(int(item))


def _render_view(memory: Memory, index: RelationIndex, view: _View, budget: int | None) -> str:
    """``view`` in full without a budget, else within ``budget``."""
    if budget is None:
        shown = {c.id: c for c in view.candidates}
        full = {key for key, c in shown.items() if view.in_full(c)}
        layout = _Layout(
            full=full,
            titled=set(shown) - full,
            lessons=list(view.lessons),
            cheatsheet=True,
            types=view.types_always or bool(full),
            shown=shown,
        )
        return _finish(_view_lines(memory, index, view, layout, None))
    return _budgeted_text(memory, index, view, budget)


def render_selection(
    memory: Memory, *, budget_tokens: int | None = None, usage_threshold: int = USAGE_THRESHOLD
) -> str:
    """The selection view; with ``budget_tokens``, its estimate never exceeds the budget
    (what does not fit is counted in a closing note, when the note itself fits)."""
    index = relation_index(memory)
    view = _View(
        candidates=index.order,
        in_full=lambda c: is_established(c, usage_threshold),
        lessons=list(range(len(memory.lessons))),
        title_label=LOWER_USAGE_LABEL,
        omitted="not shown",
        types_always=True,
    )
    return _render_view(memory, index, view, budget_tokens)


def render_solve(
    memory: Memory, selected: Iterable[str] | None = None, *, budget_tokens: int | None = None
) -> str:
    """The solve view: the ``selected`` concepts and lessons in full, every other concept
    by title. With ``budget_tokens`` its estimate never exceeds the budget: selected
    entries claim room first, then titles most useful first, and the closing note counts
    what is not listed."""
    index = relation_index(memory)
    wanted = {memory.key(name) for name in selected or []}
    chosen = index.by_usefulness(index.with_ids(wanted))
    # The rest most useful first, read only as far as the budget reaches.
    others = (c for c in index.order if c.id not in wanted)
    lessons = (_lesson_number(w) for w in wanted)
    view = _View(
        candidates=itertools.chain(chosen, others),
        in_full=lambda c: c.id in wanted,
        lessons=sorted(i for i in lessons if i is not None and i < len(memory.lessons)),
        title_label=OTHER_LABEL,
        omitted="not listed",
        types_always=False,
    )
    return _render_view(memory, index, view, budget_tokens)


def render_memory(
    memory: Memory,
    view: str = "full",
    *,
    selected: list[str] | None = None,
    budget_tokens: int | None = None,
    usage_threshold: int = USAGE_THRESHOLD,
) -> str:
    """Render ``memory`` in one of :data:`VIEWS`; see the module docstring.

    ``selected`` (solve view) holds concept names or lesson names (``lesson 3``);
    ``budget_tokens`` (selection and solve views) caps the estimated size of the whole
    text; ``usage_threshold`` (compressed and selection views) is the usage from which a
    concept is shown in full.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")
    with paused_gc():  # a view of a big memory builds a big graph (arcmemo.core.bulk)
        return _render_memory(memory, view, selected, budget_tokens, usage_threshold)


def _render_memory(
    memory: Memory,
    view: str,
    selected: list[str] | None,
    budget_tokens: int | None,
    usage_threshold: int,
) -> str:
    memory = active(memory)  # retired concepts are never shown
    if view == "selection":
        return render_selection(
            memory, budget_tokens=budget_tokens, usage_threshold=usage_threshold
        )
    if view == "solve":
        return render_solve(memory, selected, budget_tokens=budget_tokens)
    index = relation_index(memory)
    every = {c.id for c in memory.concepts}
    indexed_lessons = list(enumerate(memory.lessons))
    lines: list[str] = _render_types(memory)
    if view == "full":
        lines += _render_concepts(_member_sections(index), index, every, set(), _FULL, OTHER_LABEL)
    else:
        established = {c.id for c in memory.concepts if is_established(c, usage_threshold)}
        lines += _render_concepts(
            _member_sections(index),
            index,
            established,
            every - established,
            _COMPRESSED,
            LOWER_USAGE_LABEL,
        )
    lines += _render_lessons(indexed_lessons)
    lines += _render_cheatsheet(memory)
    return _finish(lines)


def render_lessons(
    memory: Memory, indices: Iterable[int] | None = None, *, budget_tokens: int | None = None
) -> str:
    """Lessons alone (all, or those at ``indices``), numbered as selectors name them; with
    ``budget_tokens``, the first that fit and a closing note counting the rest (the
    estimate never exceeds the budget)."""
    chosen = range(len(memory.lessons)) if indices is None else sorted(set(indices))
    if budget_tokens is None:
        return _finish(_render_lessons((i, memory.lessons[i]) for i in chosen))
    view = _View(
        candidates=(),
        in_full=lambda c: False,
        lessons=list(chosen),
        title_label=LOWER_USAGE_LABEL,
        omitted="not shown",
        types_always=False,
    )
    # Lessons only: no concepts, types or cheatsheet claim any of the budget.
    alone = memory.model_copy(update={"concepts": [], "cheatsheet": ""})
    with paused_gc():
        return _budgeted_text(alone, RelationIndex([]), view, budget_tokens)
