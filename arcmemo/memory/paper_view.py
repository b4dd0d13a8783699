"""A memory rendered in the paper's view: the layout of the published ``to_string``.

Four sections, each left out when empty, separated by a blank line: structure concepts,
types, grid manipulation routines, other routines (one ``### subtype`` heading per subtype,
alphabetical, ``misc`` for none; cues are never shown there). Concepts come in the order
they were written; a concept shows its description, ``output_typing``, its parameters as
``- name (type: T)`` with the type as the concept writes it (inline definitions included),
its cues and its implementation notes. There are no relation lines, and the types section
lists only names the published harvester would have collected (one word, no spaces) and,
for a memory with arcmemo's conventions, none that arcmemo declared as ``Any`` because they
were used without a definition.

Lower-usage names are listed in the order their concepts were written (routines: subtype
by subtype), as in the paper's rendered memory (``barc_init_mem.txt``; the published code
sorts them now); other concepts' names are sorted, as the published code sorts them. A
subtype heading is shown only when a concept is shown under it (the published code heads a
subtype whose routines are all of lower usage too, with nothing under it).

A memory that also holds lessons (pitfalls written from failed attempts, say) has them
after the concepts as arcmemo renders lessons (``## Lessons``, ``- lesson N``): every lesson
in the selection context, the selected ones in the solve context; the paper's memories hold
none.

Two uses, as in the paper: the selection context (every concept used at least
``usage_threshold`` times in full, as are arcmemo's hand-written seed concepts, which stand
where the paper's hand-annotated starting memory stood; the rest by name per section, the
lower-usage routines of every subtype in one list at the end) and the solve context
(``selected`` in full with parameter descriptions, every other concept by title per
section).
"""

from __future__ import annotations

from collections.abc import Iterable

from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.evidence import active
from arcmemo.memory.render import is_established, lesson_name, omitted_note, render_lessons
from arcmemo.memory.schema import Concept, Memory
from arcmemo.memory.types import OPAQUE_DEFINITION

GRID_MANIPULATION = "grid manipulation"
LOWER_USAGE = "lower usage concepts"
OTHERS = "other concepts"


def _block(concept: Concept, *, parameter_descriptions: bool, cues: bool) -> list[str]:
    lines = [f"- concept: {concept.name}"]
    if concept.description:
        lines.append(f"  description: {concept.description}")
    if concept.output_type:
        lines.append(f"  output_typing: {concept.output_type}")
    if concept.parameters:
        lines.append("  parameters:")
        for param in concept.parameters:
            line = f"    - {param.name}"
            if param.type:
                line += f" (type: {param.type})"
            if parameter_descriptions and param.description:
                line += f": {param.description}"
            lines.append(line)
    if cues and concept.cues:
        lines += ["  cues:", *(f"    - {cue}" for cue in concept.cues)]
    if concept.implementation:
        lines += ["  implementation:", *(f"    - {note}" for note in concept.implementation)]
    return lines


def _names(label: str, names: list[str], *, ordered: bool = False) -> list[str]:
    listed = names if ordered else sorted(names)
    return [f"- {label}: [{', '.join(listed)}]"] if listed else []


def _types(memory: Memory) -> list[str]:
    shown = [
        t
        for t in memory.types
        if " " not in t.name
        and (memory.conventions == "paper" or t.definition != OPAQUE_DEFINITION)
    ]
    return [f"- {t.name} := {t.definition}" for t in sorted(shown, key=lambda t: t.name)]


def render_paper(
    memory: Memory,
    selected: Iterable[str] | None = None,
    *,
    usage_threshold: int = 2,
    budget_tokens: int | None = None,
) -> str:
    """The paper's view of ``memory``: the selection context, or with ``selected`` (concept
    names) the solve context (see the module docstring).

    The paper's memory fits any budget arcmemo sets by default, and then the view is exactly
    the paper's. A larger memory over ``budget_tokens`` (estimated) is cut the paper's way:
    the selection context raises the usage threshold (more concepts by name only) until it
    fits, and at last shows the seed concepts by name too (every concept by name, which may
    still be over); the solve context lists as many other titles as fit,
    most used first, and counts the rest in a closing note.
    """
    memory = active(memory)
    wanted = None if selected is None else {memory.key(name) for name in selected}
    text = _render(memory, wanted, usage_threshold if wanted is None else 0)
    if budget_tokens is None or estimate_tokens(text) <= budget_tokens:
        return text
    if wanted is None:
        for usage in sorted({c.usage for c in memory.concepts if c.usage >= usage_threshold}):
            text = _render(memory, None, usage + 1)
            if estimate_tokens(text) <= budget_tokens:
                return text
        above_all = 1 + max((c.usage for c in memory.concepts), default=0)
        return _render(memory, None, above_all, seeds=False)
    others = sorted(
        (c for c in memory.concepts if c.id not in wanted), key=lambda c: -c.usage
    )  # stable: equal usage keeps the order of writing

    def listing(kept: int) -> str:
        note = omitted_note(len(others) - kept, 0, budget_tokens, "not listed")
        return _render(memory, wanted, 0, {c.id for c in others[:kept]}, note)

    low, high = 0, len(others)  # the most titles that fit: listing(low) is the answer
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_tokens(listing(middle)) <= budget_tokens:
            low = middle
        else:
            high = middle - 1
    return listing(low)


def _render(
    memory: Memory,
    wanted: set[str] | None,
    threshold: int,
    titles: set[str] | None = None,
    note: str = "",
    *,
    seeds: bool = True,
) -> str:
    """The view: ``wanted`` in full (None: every concept used ``threshold`` times, and the
    seed concepts unless not ``seeds``), the other titles (those in ``titles`` when given)
    by name, and ``note`` at the end."""
    structures = [c for c in memory.concepts if c.kind == "structure"]
    routines = [c for c in memory.concepts if c.kind == "routine"]
    grid = [c for c in routines if c.routine_subtype == GRID_MANIPULATION]
    other = [c for c in routines if c.routine_subtype != GRID_MANIPULATION]

    def section(
        members: list[Concept], cues: bool = True
    ) -> tuple[list[str], list[str], list[str]]:
        blocks: list[str] = []
        lower: list[str] = []
        others: list[str] = []
        for concept in members:
            if wanted is not None and concept.id not in wanted:
                if titles is None or concept.id in titles:
                    others.append(concept.name)
            elif not (is_established(concept, threshold) if seeds else concept.usage >= threshold):
                lower.append(concept.name)
            else:
                blocks += _block(concept, parameter_descriptions=wanted is not None, cues=cues)
        return blocks, lower, others

    parts: list[list[str]] = []
    for header, members in (
        ("structure concepts", structures),
        ("grid manipulation routines", grid),
    ):
        if not members:
            continue
        blocks, lower, others = section(members)
        parts.append(
            [
                f"## {header}",
                *blocks,
                *_names(LOWER_USAGE, lower, ordered=True),
                *_names(OTHERS, others),
            ]
        )
        if header == "structure concepts" and (types := _types(memory)):
            parts.append(["## types", *types])
    if not structures and (types := _types(memory)):
        parts.insert(0, ["## types", *types])
    if other:
        lines = ["## other routines"]
        lower_all: list[str] = []
        others_all: list[str] = []
        by_subtype: dict[str, list[Concept]] = {}
        for concept in other:
            by_subtype.setdefault(concept.routine_subtype or "misc", []).append(concept)
        for subtype in sorted(by_subtype):
            blocks, lower, others = section(by_subtype[subtype], cues=False)
            if blocks:  # a heading with nothing under it says nothing
                lines.append(f"### {subtype}")
            lines += blocks
            lower_all += lower
            others_all += others
        parts.append(
            lines + _names(LOWER_USAGE, lower_all, ordered=True) + _names(OTHERS, others_all)
        )
    if memory.lessons:
        numbers = {memory.key(lesson_name(i)): i for i in range(len(memory.lessons))}
        shown = None if wanted is None else [numbers[w] for w in wanted if w in numbers]
        if lessons := render_lessons(memory, shown).rstrip():
            parts.append([lessons])
    if note:
        parts.append([note])
    return "\n\n".join("\n".join(part) for part in parts)
