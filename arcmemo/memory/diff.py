"""Differences between two memories, field by field (``arcmemo memory diff``)."""

from __future__ import annotations

from arcmemo.memory.schema import Concept, Memory, concept_id


def _list_change(label: str, old: list[str], new: list[str]) -> list[str]:
    added = [item for item in new if item not in old]
    removed = [item for item in old if item not in new]
    return [f"{label}: +{item!r}" for item in added] + [f"{label}: -{item!r}" for item in removed]


def concept_changes(old: Concept, new: Concept) -> list[str]:
    """Field-by-field differences between two versions of a concept (timestamps ignored)."""
    changes: list[str] = []
    for field in ("name", "kind", "routine_subtype", "description", "output_type", "retired"):
        before, after = getattr(old, field), getattr(new, field)
        if before != after:
            changes.append(f"{field}: {before!r} -> {after!r}")
    old_params = {p.name: p for p in old.parameters}
    new_params = {p.name: p for p in new.parameters}
    for name in sorted(new_params.keys() - old_params.keys()):
        changes.append(f"parameters: +{name!r}")
    for name in sorted(old_params.keys() - new_params.keys()):
        changes.append(f"parameters: -{name!r}")
    for name in sorted(old_params.keys() & new_params.keys()):
        for field in ("type", "description"):
            before, after = getattr(old_params[name], field), getattr(new_params[name], field)
            if before != after:
                changes.append(f"parameters[{name!r}].{field}: {before!r} -> {after!r}")
    for field in ("cues", "implementation", "relations", "merged_from"):
        changes += _list_change(field, getattr(old, field), getattr(new, field))
    changes += _function_changes(old, new)
    for field in ("sources", "authors"):
        changes += _list_change(
            f"provenance.{field}", getattr(old.provenance, field), getattr(new.provenance, field)
        )
    for field in ("selected", "selected_solved", "cited", "cited_solved"):
        before, after = getattr(old.stats, field), getattr(new.stats, field)
        if before != after:
            changes.append(f"stats.{field}: {before} -> {after}")
    for field in ("helpful", "unused", "harmful"):  # attribution: counts of task ids
        before, after = len(getattr(old.stats, field)), len(getattr(new.stats, field))
        if before != after:
            changes.append(f"stats.{field}: {before} -> {after}")
    return changes


def _function_changes(old: Concept, new: Concept) -> list[str]:
    """Library functions added, removed and changed (source, signature, docstring, test
    count, source tasks, importing tasks)."""
    before = {f.name: f for f in old.functions}
    after = {f.name: f for f in new.functions}
    changes = [f"functions: +{name!r}" for name in after if name not in before]
    changes += [f"functions: -{name!r}" for name in before if name not in after]
    for name in (n for n in after if n in before):
        was, now = before[name], after[name]
        for field in ("source", "signature", "docstring"):
            if getattr(was, field) != getattr(now, field):
                changes.append(f"functions[{name!r}].{field} changed")
        if len(was.tests) != len(now.tests) or was.tests != now.tests:
            changes.append(f"functions[{name!r}].tests: {len(was.tests)} -> {len(now.tests)}")
        for field in ("sources", "imported_by"):
            changes += _list_change(
                f"functions[{name!r}].{field}", getattr(was, field), getattr(now, field)
            )
    return changes


def memory_diff(old: Memory, new: Memory) -> list[str]:
    """Concepts added (``+``), removed (``-``) and changed (``~``, field by field), types,
    and counts of lessons, solutions and history entries, from memory ``old`` to ``new``."""
    old_by_id = {c.id: c for c in old.concepts}
    new_by_id = {c.id: c for c in new.concepts}
    lines: list[str] = []
    for concept in new.concepts:
        if concept.id not in old_by_id:
            lines.append(f"+ {concept.name} ({concept.kind})")
    # A concept consolidated into another is named in that one's merged_from.
    merged_into = {concept_id(name): c.name for c in new.concepts for name in c.merged_from}
    for concept in old.concepts:
        if concept.id not in new_by_id:
            into = merged_into.get(concept.id)
            merged = f": merged into {into}" if into else ""
            lines.append(f"- {concept.name} ({concept.kind}){merged}")
    for concept in new.concepts:
        if concept.id in old_by_id:
            changes = concept_changes(old_by_id[concept.id], concept)
            if changes:
                retired = " (retired)" if concept.retired else ""
                lines.append(f"~ {concept.name}{retired}")
                lines += [f"    {change}" for change in changes]
    old_types = {t.name: t.definition for t in old.types}
    new_types = {t.name: t.definition for t in new.types}
    for name in sorted(new_types.keys() - old_types.keys()):
        lines.append(f"+ type {name} := {new_types[name]}")
    for name in sorted(old_types.keys() - new_types.keys()):
        lines.append(f"- type {name} := {old_types[name]}")
    for name in sorted(old_types.keys() & new_types.keys()):
        if old_types[name] != new_types[name]:
            lines.append(f"~ type {name}: {old_types[name]!r} -> {new_types[name]!r}")
    for label, before, after in (
        ("lessons", len(old.lessons), len(new.lessons)),
        ("solutions", len(old.solutions), len(new.solutions)),
        ("history entries", len(old.history), len(new.history)),
    ):
        if before != after:
            lines.append(f"{label}: {before} -> {after}")
    if old.domain != new.domain:
        lines.append(f"domain: {old.domain!r} -> {new.domain!r}")
    return lines
