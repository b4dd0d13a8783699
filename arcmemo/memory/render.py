"""Rendering a memory into prompt text.

Four views, following the paper's renderings:

* ``full``: every entry with every field (for people and for the "all memory" ablation);
* ``compressed``: what the abstraction prompt sees; established concepts in full (cues and
  implementation notes, parameters without their descriptions), the rest by name;
* ``selection``: what a selector reads; established concepts in full with parameter
  descriptions, cues and implementation notes, the rest by name, optionally within an exact
  token budget (the estimate of the rendered text never exceeds it; the most useful
  concepts come first);
* ``solve``: the selected entries in full, every other concept by title only.

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

from collections.abc import Iterable
from dataclasses import dataclass, field

from arcmemo.memory.evidence import active, usefulness_key
from arcmemo.memory.ontology import Concept, Lesson, Memory, concept_id
from arcmemo.tokens import estimate_tokens

VIEWS = ("full", "compressed", "selection", "solve")
USAGE_THRESHOLD = 2
GRID_MANIPULATION = "grid manipulation"
# Provenance source of the hand-written seed ontology (arcmemo.memory.seeds.SEED_SOURCE).
SEED_SOURCE = "seed"
LOWER_USAGE_LABEL = "lower-usage concepts"
OTHER_LABEL = "other concepts"


def lesson_name(index: int) -> str:
    """The selectable name of the lesson at ``index`` (0-based) of a memory."""
    return f"lesson {index + 1}"


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


@dataclass(frozen=True)
class _Fields:
    """Which fields a view shows in a concept block."""

    param_descriptions: bool
    implementation: bool


_FULL = _Fields(param_descriptions=True, implementation=True)
_COMPRESSED = _Fields(param_descriptions=False, implementation=True)


def _concept_block(concept: Concept, fields: _Fields, related: list[str]) -> list[str]:
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
    if related:
        lines.append(f"  related: {', '.join(related)}")
    return lines


def _names_line(label: str, names: list[str]) -> str:
    return f"- {label}: {', '.join(names)}"


def _render_concepts(
    memory: Memory,
    full: set[str],
    titled: set[str],
    fields: _Fields,
    title_label: str,
    related: dict[str, list[str]] | None = None,
) -> list[str]:
    """Concepts grouped in sections; ids in ``full`` as blocks, ids in ``titled`` by name."""
    sections: dict[tuple[int, str], list[Concept]] = {}
    for concept in memory.concepts:
        if concept.id in full or concept.id in titled:
            sections.setdefault(_section_key(concept), []).append(concept)
    related = memory.relations() if related is None else related
    lines: list[str] = []
    for key in sorted(sections):
        members = sorted(sections[key], key=lambda c: c.id)
        lines.append(f"## {key[1]}")
        for concept in members:
            if concept.id in full:
                lines.extend(_concept_block(concept, fields, related[concept.id]))
        names = sorted(c.name for c in members if c.id not in full)
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
    return [
        f"- {lesson_name(index)}",
        f"  {mark}situation: {lesson.situation}",
        f"  suggestion: {lesson.suggestion}",
    ]


def _render_lessons(lessons: Iterable[tuple[int, Lesson]]) -> list[str]:
    lines = [line for index, lesson in lessons for line in _lesson_lines(index, lesson)]
    return (["## Lessons", *lines, ""]) if lines else []


def _render_cheatsheet(memory: Memory) -> list[str]:
    return ["## Cheatsheet", memory.cheatsheet.strip(), ""] if memory.cheatsheet.strip() else []


def _by_usefulness(concepts: list[Concept]) -> list[Concept]:
    return sorted(concepts, key=usefulness_key)


def _finish(lines: list[str]) -> str:
    return "\n".join(lines).strip() + "\n" if lines else ""


def _cost(lines: list[str]) -> int:
    """Estimated tokens of ``lines`` with their line breaks (what they add to a view)."""
    return sum(estimate_tokens(line) + 1 for line in lines)


# -- the selection view under a budget ---------------------------------------------------


@dataclass
class _Layout:
    """What the selection view shows: concepts in full, by name, lessons, and what is left."""

    full: set[str] = field(default_factory=set)
    titled: set[str] = field(default_factory=set)
    lessons: list[int] = field(default_factory=list)
    cheatsheet: bool = False
    types: bool = True
    # Every choice in the order it was made, so the last ones can be taken back.
    order: list[tuple[str, str | int]] = field(default_factory=list)


def _count(number: int, noun: str) -> str:
    return f"{number} more {noun}{'' if number == 1 else 's'}"


def _omitted_note(concepts: int, lessons: int, budget: int) -> str:
    parts = [_count(concepts, "concept")] if concepts else []
    parts += [_count(lessons, "lesson")] if lessons else []
    return f"({' and '.join(parts)} not shown: memory budget of {budget} tokens)"


def _selection_lines(memory: Memory, layout: _Layout, budget: int | None) -> list[str]:
    lines = _render_types(memory) if layout.types else []
    lines += _render_concepts(
        memory,
        layout.full,
        layout.titled,
        _FULL,
        LOWER_USAGE_LABEL,
    )
    lines += _render_lessons((i, memory.lessons[i]) for i in sorted(layout.lessons))
    if layout.cheatsheet:
        lines += _render_cheatsheet(memory)
    hidden = len(memory.concepts) - len(layout.full) - len(layout.titled)
    hidden_lessons = len(memory.lessons) - len(layout.lessons)
    if budget is not None and (hidden or hidden_lessons):
        lines.append(_omitted_note(hidden, hidden_lessons, budget))
    return lines


def _budgeted_layout(memory: Memory, usage_threshold: int, budget: int) -> _Layout:
    """Greedy within ``budget``, most useful concepts first, then lessons; the text is
    measured at the end and the last choices are taken back until it fits, so the estimate
    never exceeds the budget."""
    layout = _Layout(types=False)
    limit = budget
    # The omitted note (and its line break) comes first in the accounting; the type
    # vocabulary comes with the first concept shown in full (names alone need no types).
    spent = _cost([_omitted_note(len(memory.concepts), len(memory.lessons), budget)])
    types_cost = _cost(_render_types(memory))
    related = memory.relations()
    opened: set[tuple[int, str]] = set()
    named: dict[tuple[int, str], int] = {}
    names_line = _cost([f"- {LOWER_USAGE_LABEL}: "])

    def section_cost(key: tuple[int, str]) -> int:
        return 0 if key in opened else _cost([f"## {key[1]}", ""])  # header, blank line

    # Most useful first: each concept in full when it is established and fits, else by
    # name; from the first one that fits neither way on, the rest are left out (never a
    # less useful entry in place of a more useful one).
    for concept in _by_usefulness(memory.concepts):
        key = _section_key(concept)
        if is_established(concept, usage_threshold):
            block = _concept_block(concept, _FULL, related[concept.id])
            cost = _cost(block) + section_cost(key) + (0 if layout.types else types_cost)
            if spent + cost <= limit:
                spent += cost
                opened.add(key)
                layout.types = True
                layout.full.add(concept.id)
                layout.order.append(("full", concept.id))
                continue
        name = estimate_tokens(concept.name)
        cost = name + (1 if named.get(key) else names_line) + section_cost(key)
        if spent + cost > limit:
            break
        spent += cost
        opened.add(key)
        named[key] = named.get(key, 0) + 1
        layout.titled.add(concept.id)
        layout.order.append(("titled", concept.id))
    if memory.lessons:
        spent += _cost(["## Lessons", ""])
    for index, lesson in enumerate(memory.lessons):
        cost = _cost(_lesson_lines(index, lesson))
        if spent + cost > limit:
            break
        spent += cost
        layout.lessons.append(index)
        layout.order.append(("lesson", index))
    cheatsheet = _cost(_render_cheatsheet(memory))
    if cheatsheet and spent + cheatsheet <= limit:
        layout.cheatsheet = True
    # Exact check: take back the last choices until the measured text fits.
    while estimate_tokens(_finish(_selection_lines(memory, layout, budget))) > budget:
        if layout.cheatsheet:
            layout.cheatsheet = False
            continue
        if not layout.order:
            break
        what, item = layout.order.pop()
        if what == "full":
            layout.full.discard(str(item))
            layout.types = bool(layout.full)
        elif what == "titled":
            layout.titled.discard(str(item))
        else:
            layout.lessons.remove(int(item))
    return layout


def render_selection(
    memory: Memory, *, budget_tokens: int | None = None, usage_threshold: int = USAGE_THRESHOLD
) -> str:
    """The selection view; with ``budget_tokens``, its estimate never exceeds the budget
    (what does not fit is counted in a closing note, when the note itself fits)."""
    every = {c.id for c in memory.concepts}
    if budget_tokens is None:
        full = {c.id for c in memory.concepts if is_established(c, usage_threshold)}
        layout = _Layout(
            full=full,
            titled=every - full,
            lessons=list(range(len(memory.lessons))),
            cheatsheet=True,
        )
        return _finish(_selection_lines(memory, layout, None))
    layout = _budgeted_layout(memory, usage_threshold, budget_tokens)
    text = _finish(_selection_lines(memory, layout, budget_tokens))
    if estimate_tokens(text) > budget_tokens:  # not even the note fits
        return ""
    return text


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
    ``budget_tokens`` (selection view) caps the estimated size of the whole text;
    ``usage_threshold`` (compressed and selection views) is the usage from which a concept
    is shown in full.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")
    memory = active(memory)  # retired concepts are never shown
    if view == "selection":
        return render_selection(
            memory, budget_tokens=budget_tokens, usage_threshold=usage_threshold
        )
    every = {c.id for c in memory.concepts}
    indexed_lessons = list(enumerate(memory.lessons))
    lines: list[str] = []
    if view == "full":
        lines += _render_types(memory)
        lines += _render_concepts(memory, every, set(), _FULL, OTHER_LABEL)
        lines += _render_lessons(indexed_lessons)
    elif view == "compressed":
        established = {c.id for c in memory.concepts if is_established(c, usage_threshold)}
        lines += _render_types(memory)
        lines += _render_concepts(
            memory, established, every - established, _COMPRESSED, LOWER_USAGE_LABEL
        )
        lines += _render_lessons(indexed_lessons)
    else:
        wanted = {concept_id(name) for name in selected or []}
        chosen = every & wanted
        lines += _render_types(memory) if chosen else []
        lines += _render_concepts(memory, chosen, every - chosen, _FULL, OTHER_LABEL)
        lessons = [(i, les) for i, les in indexed_lessons if concept_id(lesson_name(i)) in wanted]
        lines += _render_lessons(lessons)
    lines += _render_cheatsheet(memory)
    return _finish(lines)


def render_lessons(memory: Memory, indices: Iterable[int] | None = None) -> str:
    """Lessons alone (all, or those at ``indices``), numbered as selectors name them."""
    chosen = range(len(memory.lessons)) if indices is None else sorted(set(indices))
    return _finish(_render_lessons((i, memory.lessons[i]) for i in chosen))
