"""Every way of editing a concept counts as an edit, so cached relation indexes rebuild."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arcmemo.memory import edits
from arcmemo.memory.edits import TrackedList
from arcmemo.memory.ontology import Concept, ConceptStats, Memory, Parameter, Provenance, TypeDef
from arcmemo.memory.relations import StaleIndexError, relation_index


def _memory() -> Memory:
    return Memory(
        types=[TypeDef(name="criteria", definition="Callable[[object], bool]")],
        concepts=[
            Concept(
                name="filter objects",
                kind="routine",
                parameters=[Parameter(name="keep", type="criteria")],
            ),
            Concept(name="size criteria", kind="routine", routine_subtype="criteria"),
            Concept(name="color criteria", kind="routine", routine_subtype="criteria"),
        ],
    )


def _copied(concept: Concept) -> None:
    # A concept copied with new lists (as merges do) is still tracked afterwards.
    concept.stats = concept.stats.model_copy(update={"helpful": ["t1", "t2"]})
    concept.stats.harmful.append("t3")


EDITS: dict[str, Callable[[Memory], None]] = {
    "relations appended": lambda m: m.concepts[0].relations.append("color criteria"),
    "relations assigned": lambda m: setattr(m.concepts[0], "relations", ["size criteria"]),
    "relations extended with +=": lambda m: m.concepts[0].relations.__iadd__(["x"]),
    "parameter type assigned": lambda m: setattr(m.concepts[0].parameters[0], "type", "grid"),
    "parameter removed": lambda m: m.concepts[0].parameters.pop(),
    "parameter replaced": lambda m: m.concepts[0].parameters.__setitem__(
        0, Parameter(name="keep", type="grid")
    ),
    "subtype assigned": lambda m: setattr(m.concepts[2], "routine_subtype", "intermediate"),
    "solved selections counted": lambda m: setattr(
        m.concepts[2].stats, "selected_solved", m.concepts[2].stats.selected_solved + 3
    ),
    "helpful verdict appended": lambda m: m.concepts[2].stats.helpful.append("t1"),
    "source appended": lambda m: m.concepts[2].provenance.sources.extend(["t1", "t2"]),
    "provenance replaced": lambda m: setattr(
        m.concepts[2], "provenance", Provenance(sources=["t1", "t2", "t3"])
    ),
    "stats copied with new lists": lambda m: _copied(m.concepts[2]),
    "concept appended to the list": lambda m: m.concepts.append(
        Concept(name="shape criteria", kind="routine", routine_subtype="criteria")
    ),
    "concept removed from the list": lambda m: m.concepts.pop(1),
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_an_edit_rebuilds_the_index_and_the_relations_follow(edit: str) -> None:
    memory, fresh = _memory(), _memory()
    before = relation_index(memory)
    assert relation_index(memory) is before  # unchanged: the cached index
    EDITS[edit](memory)
    EDITS[edit](fresh)
    after = relation_index(memory)
    assert after is not before
    assert after.matches(memory.concepts)
    # The same relations as an index built from scratch over the edited memory.
    rebuilt = type(after)(fresh.concepts)
    for mine, theirs in zip(memory.concepts, fresh.concepts, strict=True):
        assert after.related(mine) == rebuilt.related(theirs)
    assert [c.name for c in after.order] == [c.name for c in rebuilt.order]


def test_an_edit_the_count_cannot_see_is_caught_by_the_test_suites_check() -> None:
    memory = _memory()
    relation_index(memory)
    # Writing the model's storage directly bypasses every hook: only the field-by-field
    # check that the test suite turns on can see it, and it must.
    memory.concepts[2].__dict__["routine_subtype"] = "intermediate"
    with pytest.raises(StaleIndexError):
        relation_index(memory)


def test_lists_of_every_origin_are_tracked() -> None:
    loaded = Memory.model_validate_json(_memory().model_dump_json())
    concept = Concept.model_construct(name="x", kind="routine", relations=["a"])
    default = Concept(name="y", kind="routine")
    for lists in (loaded.concepts[0], concept, default):
        assert type(lists.relations) is TrackedList
    assert type(default.provenance.sources) is TrackedList
    assert type(ConceptStats().helpful) is TrackedList
    # ... and they stay lists to everything else: equal, serialised and copied as lists.
    assert loaded == _memory().model_copy(update={"concepts": _memory().concepts})
    assert loaded.model_dump()["concepts"][0]["relations"] == []
    assert type(loaded.model_copy(deep=True).concepts[0].parameters) is TrackedList


def test_reading_and_rendering_count_no_edits() -> None:
    memory = _memory()
    memory.render("full")
    before = edits.count()
    for view in ("full", "compressed", "selection", "solve"):
        memory.render(view)
    memory.relations()
    Memory.model_validate_json(memory.model_dump_json())  # loading a file edits nothing
    assert edits.count() == before
