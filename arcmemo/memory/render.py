"""Rendering a memory into prompt text.

Four views:

* ``full``: every entry with every field (for people and for the "all memory" ablation);
* ``compressed``: what the abstraction prompt sees; established concepts (usage at least
  ``COMPRESSED_USAGE_THRESHOLD``) in full without implementation notes, the rest by name;
* ``selection``: what a selector needs (cues, types, parameters; no implementation notes),
  the most useful concepts first within a token budget, the rest by name;
* ``solve``: the selected entries in full, every other concept by title only.

Rendering is deterministic (same memory, same arguments -> byte-identical text) so that
prompt prefixes stay cacheable at the provider.
"""

from __future__ import annotations

from collections.abc import Iterable

from arcmemo.memory.ontology import Concept, Lesson, Memory, concept_id
from arcmemo.tokens import estimate_tokens

VIEWS = ("full", "compressed", "selection", "solve")
COMPRESSED_USAGE_THRESHOLD = 2
GRID_MANIPULATION = "grid manipulation"


def lesson_name(index: int) -> str:
    """The selectable name of the lesson at ``index`` (0-based) of a memory."""
    return f"lesson {index + 1}"


def _section_key(concept: Concept) -> tuple[int, str]:
    if concept.kind == "structure":
        return (0, "Structures")
    subtype = concept.routine_subtype or "misc"
    if subtype == GRID_MANIPULATION:
        return (1, "Routines: grid manipulation")
    return (2, f"Routines: {subtype}")


def _concept_block(
    concept: Concept,
    *,
    param_descriptions: bool,
    cues: bool,
    implementation: bool,
    related: list[str] | None = None,
) -> list[str]:
    lines = [f"- concept: {concept.name}"]
    if concept.description:
        lines.append(f"  description: {concept.description}")
    if concept.parameters:
        lines.append("  parameters:")
        for param in concept.parameters:
            text = f"    - {param.name}"
            if param.type:
                text += f" ({param.type})"
            if param_descriptions and param.description:
                text += f": {param.description}"
            lines.append(text)
    if concept.output_type:
        lines.append(f"  output: {concept.output_type}")
    if cues and concept.cues:
        lines.append("  cues:")
        lines.extend(f"    - {cue}" for cue in concept.cues)
    if implementation and concept.implementation:
        lines.append("  implementation:")
        lines.extend(f"    - {note}" for note in concept.implementation)
    related = concept.relations if related is None else related
    if related:
        lines.append(f"  related: {', '.join(related)}")
    return lines


def _render_concepts(
    memory: Memory,
    full: set[str],
    titled: set[str],
    *,
    param_descriptions: bool,
    implementation: bool,
    title_label: str,
) -> list[str]:
    """Concepts grouped in sections; ids in ``full`` as blocks, ids in ``titled`` by name."""
    sections: dict[tuple[int, str], list[Concept]] = {}
    for concept in memory.concepts:
        if concept.id in full or concept.id in titled:
            sections.setdefault(_section_key(concept), []).append(concept)
    lines: list[str] = []
    related = memory.relations()
    for key in sorted(sections):
        members = sorted(sections[key], key=lambda c: c.id)
        lines.append(f"## {key[1]}")
        for concept in members:
            if concept.id in full:
                lines.extend(
                    _concept_block(
                        concept,
                        param_descriptions=param_descriptions,
                        cues=True,
                        implementation=implementation,
                        related=related[concept.id],
                    )
                )
        names = sorted(c.name for c in members if c.id not in full)
        if names:
            lines.append(f"- {title_label}: {', '.join(names)}")
        lines.append("")
    return lines


def _render_types(memory: Memory) -> list[str]:
    if not memory.types:
        return []
    lines = ["## Types"]
    lines.extend(
        f"- {t.name} := {t.definition}" for t in sorted(memory.types, key=lambda t: t.name.lower())
    )
    lines.append("")
    return lines


def _render_lessons(lessons: Iterable[tuple[int, Lesson]]) -> list[str]:
    lines: list[str] = []
    for index, lesson in lessons:
        lines.append(f"- {lesson_name(index)}")
        lines.append(f"  situation: {lesson.situation}")
        lines.append(f"  suggestion: {lesson.suggestion}")
    return (["## Lessons", *lines, ""]) if lines else []


def _render_cheatsheet(memory: Memory) -> list[str]:
    return ["## Cheatsheet", memory.cheatsheet.strip(), ""] if memory.cheatsheet.strip() else []


def _by_usefulness(concepts: list[Concept]) -> list[Concept]:
    return sorted(concepts, key=lambda c: (-c.usage, -c.stats.selected_solved, c.id))


def _selection_ids(memory: Memory, budget_tokens: int | None) -> tuple[set[str], set[str], int]:
    """(rendered in full, by title, omitted count) for the selection view."""
    every = {c.id for c in memory.concepts}
    if budget_tokens is None:
        return every, set(), 0
    full: set[str] = set()
    spent = estimate_tokens("\n".join(_render_types(memory)))
    for concept in _by_usefulness(memory.concepts):
        block = "\n".join(
            _concept_block(concept, param_descriptions=True, cues=True, implementation=False)
        )
        cost = estimate_tokens(block)
        if spent + cost > budget_tokens:
            break
        full.add(concept.id)
        spent += cost
    titled: set[str] = set()
    for concept in _by_usefulness([c for c in memory.concepts if c.id not in full]):
        cost = estimate_tokens(concept.name) + 1
        if spent + cost > budget_tokens:
            break
        titled.add(concept.id)
        spent += cost
    return full, titled, len(every) - len(full) - len(titled)


def render_memory(
    memory: Memory,
    view: str = "full",
    *,
    selected: list[str] | None = None,
    budget_tokens: int | None = None,
) -> str:
    """Render ``memory`` in one of :data:`VIEWS`; see the module docstring.

    ``selected`` (solve view) holds concept names or lesson names (``lesson 3``);
    ``budget_tokens`` (selection view) caps the estimated size of the concept text.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")
    every = {c.id for c in memory.concepts}
    indexed_lessons = list(enumerate(memory.lessons))
    lines: list[str] = []
    omitted = 0
    if view == "full":
        lines += _render_types(memory)
        lines += _render_concepts(
            memory,
            every,
            set(),
            param_descriptions=True,
            implementation=True,
            title_label="other concepts",
        )
        lines += _render_lessons(indexed_lessons)
    elif view == "compressed":
        established = {c.id for c in memory.concepts if c.usage >= COMPRESSED_USAGE_THRESHOLD}
        lines += _render_types(memory)
        lines += _render_concepts(
            memory,
            established,
            every - established,
            param_descriptions=False,
            implementation=False,
            title_label="lower-usage concepts",
        )
        lines += _render_lessons(indexed_lessons)
    elif view == "selection":
        full, titled, omitted = _selection_ids(memory, budget_tokens)
        lines += _render_types(memory)
        lines += _render_concepts(
            memory,
            full,
            titled,
            param_descriptions=True,
            implementation=False,
            title_label="more concepts",
        )
        lines += _render_lessons(indexed_lessons)
    else:
        wanted = {concept_id(name) for name in selected or []}
        chosen = every & wanted
        lines += _render_types(memory) if chosen else []
        lines += _render_concepts(
            memory,
            chosen,
            every - chosen,
            param_descriptions=True,
            implementation=True,
            title_label="other concepts",
        )
        lessons = [(i, les) for i, les in indexed_lessons if concept_id(lesson_name(i)) in wanted]
        lines += _render_lessons(lessons)
    lines += _render_cheatsheet(memory)
    if omitted:
        lines.append(
            f"({omitted} more concepts not shown: memory budget of {budget_tokens} tokens)"
        )
    return "\n".join(lines).strip() + "\n" if lines else ""
