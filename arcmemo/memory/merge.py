"""Writing into a memory: adding concepts, merging re-written ones, logging history.

Merge rules (fixing the published code, which could erase parameter types and silently
dropped conflicting kinds):

* the same id (case, spacing and plural-insensitive name) means the same concept;
* scalar fields (description, routine_subtype, output_type) keep the first non-empty value;
  a different later value is recorded as a conflict, never silently applied or dropped;
* a conflicting ``kind`` is recorded as a conflict and the existing kind kept;
* parameters merge by name, filling only missing type/description fields;
* cues, implementation notes and relations are de-duplicated in order (case and spacing
  insensitive);
* provenance (sources, authors) and stats accumulate;
* inline typedefs (``name := definition``, at any depth) move into the vocabulary; a name
  that is already a type keeps its definition and the redefinition is a conflict;
* a type used but never defined is declared as ``Any`` with a note, so that every memory
  a write produces can be saved and loaded again.

A memory with the paper's conventions (``Memory.conventions == "paper"``, what importing
the published memory makes) is written by the published code's rules instead: only the
exact name (up to case and spacing) is the same concept; a concept keeps its own inline
typedefs (each new type name is added to the vocabulary, a different definition of a known
one is recorded as a conflict, and no type is declared); a parameter written again takes
the later type and description (the paper's last-wins), the replaced value recorded as a
conflict.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from arcmemo.memory.edits import keep_index
from arcmemo.memory.schema import (
    POSITIONS,
    Concept,
    HistoryEntry,
    Lesson,
    Memory,
    Parameter,
    TypeDef,
    concept_positions,
    exact_id,
    ids_stamp,
    utc_now,
)
from arcmemo.memory.types import OPAQUE_DEFINITION, split_inline_typedefs, unresolved


class WriteResult(BaseModel):
    """What one concept write did."""

    op: str = Field(description="'add' for a new concept, 'merge' for an existing one.")
    concept_id: str
    changes: list[str] = Field(default_factory=list, description="Fields that changed.")
    conflicts: list[str] = Field(default_factory=list, description="Values that were not applied.")


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def merge_unique(existing: list[str], new: list[str]) -> list[str]:
    """``existing`` followed by the items of ``new`` not already present (normalized)."""
    seen = {_key(item) for item in existing}
    merged = list(existing)
    for item in new:
        cleaned = " ".join(item.split())
        if cleaned and _key(cleaned) not in seen:
            seen.add(_key(cleaned))
            merged.append(cleaned)
    return merged


class TypeHarvest(BaseModel):
    """What moving a concept's inline typedefs into the vocabulary did."""

    concept: Concept = Field(
        description="The concept with each inline definition replaced by its name."
    )
    changes: list[str] = Field(default_factory=list, description="Types added to the vocabulary.")
    conflicts: list[str] = Field(
        default_factory=list, description="Redefinitions of existing types that were not applied."
    )


def harvest_typedefs(memory: Memory, concept: Concept, *, keep_inline: bool = False) -> TypeHarvest:
    """Move inline ``name := definition`` annotations of ``concept`` into the vocabulary.

    The parameter or output keeps just the type name, so the definition lives in one place.
    Definitions nested in an annotation (``list[symmetry := ...]``) are harvested too. A
    name that is already a type keeps its definition; a different one is a conflict (the
    meaning of a type never changes silently). With ``keep_inline`` (the paper's
    conventions) the vocabulary is derived the same way but the concept keeps its own
    annotations, definitions included.
    """
    known = {t.name.lower(): t for t in memory.types}
    harvest = TypeHarvest(concept=concept)

    def move(annotation: str | None, where: str) -> str | None:
        if annotation is None:
            return None
        text, typedefs = split_inline_typedefs(annotation)
        for name, definition in typedefs:
            existing = known.get(name.lower())
            if existing is None:
                typedef = TypeDef(name=name, definition=definition)
                memory.types.append(typedef)
                known[name.lower()] = typedef
                harvest.changes.append(f"type {name!r} defined as {definition!r}")
            elif _key(existing.definition) != _key(definition) and keep_inline:
                harvest.conflicts.append(
                    f"type {existing.name!r} ({concept.name}, {where}): the vocabulary keeps "
                    f"{existing.definition!r}, the concept its own {definition!r}"
                )
            elif _key(existing.definition) != _key(definition):
                harvest.conflicts.append(
                    f"type {existing.name!r} ({where}): kept {existing.definition!r}, "
                    f"ignored redefinition {definition!r}"
                )
        return annotation if keep_inline else text

    parameters = [
        p.model_copy(update={"type": move(p.type, f"parameter {p.name!r}")})
        for p in concept.parameters
    ]
    harvest.concept = concept.model_copy(
        update={"parameters": parameters, "output_type": move(concept.output_type, "output")}
    )
    return harvest


def declare_undeclared_types(memory: Memory, concept: Concept) -> list[str]:
    """Declare as ``Any`` each type ``concept`` (or the vocabulary) uses but never defines,
    so that the memory stays loadable; one note per declared type."""
    notes: list[str] = []
    for annotation in [*concept.type_references(), *(t.definition for t in memory.types)]:
        for name in dict.fromkeys(unresolved(annotation, memory.type_names())):
            memory.types.append(TypeDef(name=name, definition=OPAQUE_DEFINITION))
            notes.append(
                f"type {name!r} was used without a definition: declared as {OPAQUE_DEFINITION!r}"
            )
    return notes


def _merge_parameters(
    existing: list[Parameter],
    new: list[Parameter],
    changes: list[str],
    conflicts: list[str],
    last_wins: bool,
) -> list[Parameter]:
    by_name = {p.name: p for p in existing}
    merged = list(existing)
    for param in new:
        old = by_name.get(param.name)
        if old is None:
            merged.append(param)
            changes.append(f"parameter {param.name} added")
            continue
        if last_wins:
            replaced = {
                field: getattr(param, field)
                for field in ("type", "description")
                if getattr(param, field) is not None
                and getattr(param, field) != getattr(old, field)
            }
            for field in replaced:
                if getattr(old, field) is not None:
                    conflicts.append(
                        f"parameter {param.name} {field}: took {getattr(param, field)!r}, "
                        f"replaced {getattr(old, field)!r}"
                    )
            if replaced:
                merged[merged.index(old)] = by_name[param.name] = old.model_copy(update=replaced)
                changes.append(f"parameter {param.name}: set {', '.join(sorted(replaced))}")
            continue
        filled = {
            field: getattr(param, field)
            for field in ("type", "description")
            if getattr(old, field) is None and getattr(param, field) is not None
        }
        if filled:
            index = merged.index(old)
            merged[index] = old.model_copy(update=filled)
            changes.append(f"parameter {param.name}: filled {', '.join(sorted(filled))}")
    return merged


def _merge_concept(
    old: Concept, new: Concept, now: datetime, last_wins: bool = False
) -> tuple[Concept, list[str], list[str]]:
    changes: list[str] = []
    conflicts: list[str] = []
    update: dict[str, object] = {}
    if new.kind != old.kind:
        conflicts.append(f"kind: kept {old.kind!r}, ignored {new.kind!r}")
    for field in ("description", "routine_subtype", "output_type"):
        old_value, new_value = getattr(old, field), getattr(new, field)
        if field == "routine_subtype" and new.kind != old.kind:
            continue
        if not new_value or old_value == new_value:
            continue
        if not old_value:
            update[field] = new_value
            changes.append(f"{field} set")
        elif _key(str(old_value)) != _key(str(new_value)):
            conflicts.append(f"{field}: kept {old_value!r}, ignored {new_value!r}")
    parameters = _merge_parameters(old.parameters, new.parameters, changes, conflicts, last_wins)
    if parameters != old.parameters:
        update["parameters"] = parameters
    for field in ("cues", "implementation", "relations"):
        merged = merge_unique(getattr(old, field), getattr(new, field))
        if merged != getattr(old, field):
            update[field] = merged
            changes.append(f"{field}: +{len(merged) - len(getattr(old, field))}")
    provenance = old.provenance.model_copy(
        update={
            "sources": merge_unique(old.provenance.sources, new.provenance.sources),
            "authors": merge_unique(old.provenance.authors, new.provenance.authors),
            "updated_at": now,
        }
    )
    stats = old.stats.model_copy(
        update={
            "selected": old.stats.selected + new.stats.selected,
            "selected_solved": old.stats.selected_solved + new.stats.selected_solved,
            "cited": old.stats.cited + new.stats.cited,
            "cited_solved": old.stats.cited_solved + new.stats.cited_solved,
            "helpful": merge_unique(old.stats.helpful, new.stats.helpful),
            "unused": merge_unique(old.stats.unused, new.stats.unused),
            "harmful": merge_unique(old.stats.harmful, new.stats.harmful),
        }
    )
    if new.merged_from:
        update["merged_from"] = merge_unique(old.merged_from, new.merged_from)
    update.update(provenance=provenance, stats=stats)
    return old.model_copy(update=update), changes, conflicts


def fold_concept(
    memory: Memory,
    absorbed: Concept,
    into: Concept,
    *,
    actor: str = "human",
    why: str | None = None,
    now: datetime | None = None,
) -> WriteResult:
    """Merge ``absorbed`` (another concept of ``memory``) into ``into`` by the rules above
    and remove it; its name goes to ``merged_from`` and one ``consolidate`` history entry
    records the merge with the absorbed concept's content."""
    now = now or utc_now()
    renamed = absorbed.model_copy(
        update={"name": into.name, "id": into.id, "merged_from": [absorbed.name]}
    )
    merged, changes, conflicts = _merge_concept(into, renamed, now)
    if absorbed.name not in merged.merged_from:
        merged = merged.model_copy(
            update={"merged_from": merge_unique(merged.merged_from, [absorbed.name])}
        )
    memory.concepts = [
        merged if c.id == into.id else c for c in memory.concepts if c.id != absorbed.id
    ]
    memory.history.append(
        HistoryEntry(
            op="consolidate",
            target=into.id,
            actor=actor,
            at=now,
            why=why,
            changes=[f"absorbed {absorbed.name!r}", *changes]
            + [f"conflict: {c}" for c in conflicts]
            + [f"absorbed content: {absorbed.model_dump_json(exclude={'stats'})}"],
        )
    )
    return WriteResult(op="merge", concept_id=into.id, changes=changes, conflicts=conflicts)


def write_concept(
    memory: Memory,
    concept: Concept,
    *,
    task_id: str | None = None,
    actor: str = "human",
    why: str | None = None,
    now: datetime | None = None,
    declare: bool = True,
) -> WriteResult:
    """Add ``concept`` to ``memory`` or merge it into the entry with the same id.

    Inline typedefs go into the vocabulary (a redefinition is a conflict); with
    ``declare``, types used but never defined are declared as ``Any`` with a note, so a
    saved memory always loads. Seed files pass ``declare=False`` and reject such types.
    A memory with the paper's conventions is written by its rules (the module docstring).
    """
    now = now or utc_now()
    paper = memory.conventions == "paper"
    if paper:
        keyed = concept.model_copy(update={"id": exact_id(concept.name)})
        harvest = harvest_typedefs(memory, keyed, keep_inline=True)
        concept, type_notes = harvest.concept, harvest.changes
    else:
        harvest = harvest_typedefs(memory, concept)
        concept = harvest.concept
        type_notes = harvest.changes + (
            declare_undeclared_types(memory, concept) if declare else []
        )
    provenance = concept.provenance.model_copy(
        update={
            "sources": merge_unique(concept.provenance.sources, [task_id] if task_id else []),
            "authors": merge_unique(concept.provenance.authors, [actor]),
        }
    )
    concept = concept.model_copy(update={"provenance": provenance})
    positions = concept_positions(memory.concepts)
    index = positions.get(concept.id)
    if index is None:
        concept.provenance.created_at = concept.provenance.updated_at = now
        memory.concepts.append(concept)
        positions[concept.id] = len(memory.concepts) - 1
        result = WriteResult(op="add", concept_id=concept.id)
    else:
        merged, changes, conflicts = _merge_concept(memory.concepts[index], concept, now, paper)
        memory.concepts[index] = merged  # the same id at the same place
        result = WriteResult(
            op="merge", concept_id=concept.id, changes=changes, conflicts=conflicts
        )
    # The index follows the write instead of being rebuilt from the whole list.
    keep_index(memory.concepts, POSITIONS, positions, stamp=ids_stamp())
    result.changes = type_notes + result.changes
    result.conflicts = harvest.conflicts + result.conflicts
    memory.history.append(
        HistoryEntry(
            op=result.op,
            target=concept.id,
            task_id=task_id,
            actor=actor,
            at=now,
            why=why,
            changes=result.changes + [f"conflict: {c}" for c in result.conflicts],
        )
    )
    return result


def write_lesson(
    memory: Memory,
    lesson: Lesson,
    *,
    task_id: str | None = None,
    actor: str = "human",
    now: datetime | None = None,
) -> bool:
    """Append an open-ended lesson unless an identical one exists; True when added."""
    key = (_key(lesson.situation), _key(lesson.suggestion))
    for existing in memory.lessons:
        if (_key(existing.situation), _key(existing.suggestion)) == key:
            if task_id:
                existing.provenance.sources = merge_unique(existing.provenance.sources, [task_id])
            return False
    now = now or utc_now()
    lesson = lesson.model_copy(deep=True)
    lesson.provenance.sources = merge_unique(
        lesson.provenance.sources, [task_id] if task_id else []
    )
    lesson.provenance.authors = merge_unique(lesson.provenance.authors, [actor])
    lesson.provenance.created_at = lesson.provenance.updated_at = now
    memory.lessons.append(lesson)
    memory.history.append(
        HistoryEntry(
            op="lesson", target=str(len(memory.lessons) - 1), task_id=task_id, actor=actor, at=now
        )
    )
    return True


def delete_concept(
    memory: Memory, name: str, *, actor: str = "human", why: str | None = None
) -> Concept:
    """Remove the concept called ``name`` (any spelling of its id); KeyError if absent."""
    concept = memory.find(name)
    if concept is None:
        raise KeyError(f"no concept named {name!r}")
    memory.concepts = [c for c in memory.concepts if c.id != concept.id]
    memory.history.append(HistoryEntry(op="delete", target=concept.id, actor=actor, why=why))
    return concept
