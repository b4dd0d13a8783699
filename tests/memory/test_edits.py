"""Every way of editing a concept counts as an edit, so cached relation indexes rebuild."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from arcmemo.memory import edits
from arcmemo.memory.edits import StaleCacheError, TrackedList, derived, yaml_text
from arcmemo.memory.evidence import active
from arcmemo.memory.relations import RelationIndex, relation_index
from arcmemo.memory.schema import Concept, ConceptStats, Memory, Parameter, Provenance, TypeDef
from arcmemo.run.solve_prompt import hide_own_concepts


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
    with pytest.raises(StaleCacheError):
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


def test_a_memorys_own_list_is_tracked_however_it_is_set() -> None:
    memory = _memory()
    before = edits.count()
    memory.concepts.append(Concept(name="shape criteria", kind="routine"))
    assert edits.count() > before
    memory.concepts = [memory.concepts[0]]
    assert type(memory.concepts) is TrackedList
    copy = memory.model_copy(update={"concepts": [memory.concepts[0]]})
    assert type(copy.concepts) is TrackedList


def test_a_derivation_is_kept_until_an_edit_and_never_shared_across_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(edits.VERIFY_VARIABLE)  # its check builds again on every hit
    built: list[int] = []

    def count_names(concepts: Sequence[Concept]) -> int:
        built.append(len(concepts))
        return len(concepts)

    memory = _memory()
    assert derived("names", memory.concepts, count_names) == 3
    assert derived("names", memory.concepts, count_names) == 3
    assert built == [3]
    memory.concepts[0].cues.append("many objects")  # any edit to any concept
    assert derived("names", memory.concepts, count_names) == 3
    assert built == [3, 3]
    other = _memory()
    assert derived("names", other.concepts[:2], count_names) == 2  # a plain list: by members
    assert derived("names", list(other.concepts[:2]), count_names) == 2
    assert built == [3, 3, 2]


def test_a_stale_derivation_is_caught_by_the_test_suites_check() -> None:
    memory = _memory()
    derived("subtypes", memory.concepts, lambda cs: [c.routine_subtype for c in cs])
    memory.concepts[1].__dict__["routine_subtype"] = "other"  # bypasses every hook
    with pytest.raises(StaleCacheError):
        derived("subtypes", memory.concepts, lambda cs: [c.routine_subtype for c in cs])


def test_copies_without_retired_or_a_tasks_own_concepts_share_one_index() -> None:
    memory = _memory()
    memory.concepts[1].retired = "never helped"
    memory.concepts[2].provenance.sources.append("task-a")
    built: list[int] = []
    build = RelationIndex.__init__

    def counting(self: RelationIndex, concepts: Sequence[Concept]) -> None:
        built.append(len(concepts))
        build(self, concepts)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RelationIndex, "__init__", counting)
        for _ in range(3):  # a task's first try and its retries
            visible = hide_own_concepts(active(memory), "task-a")
            assert [c.name for c in visible.concepts] == ["filter objects"]
            visible.render("selection", budget_tokens=500)
            visible.render("solve", selected=["filter objects"], budget_tokens=500)
        assert built == [2]  # the unretired list's, once; the task's is derived from it
        assert [c.name for c in hide_own_concepts(active(memory), "task-b").concepts] == [
            "filter objects",
            "color criteria",
        ]
        memory.concepts[2].provenance.sources.append("task-b")  # now owned by nobody alone
        assert len(hide_own_concepts(active(memory), "task-a").concepts) == 2


def test_a_tracked_list_serialises_as_a_list_everywhere() -> None:
    import copy
    import json
    import pickle

    import yaml

    concept = Concept(name="x", kind="routine", cues=["many objects"])
    assert yaml_text(concept.cues) == yaml.safe_dump(["many objects"])
    assert json.dumps(concept.cues) == '["many objects"]'
    for copied in (pickle.loads(pickle.dumps(concept)), copy.deepcopy(concept)):
        assert copied == concept and type(copied.cues) is TrackedList


def test_derivations_from_before_an_edit_are_let_go() -> None:
    import gc
    import weakref

    memory = _memory()
    index = weakref.ref(relation_index(memory))
    memory.concepts[0].cues.append("an edit")
    relation_index(_memory())  # the next derivation drops what the edit made stale
    gc.collect()
    assert index() is None


def test_a_memorys_derivations_are_held_by_its_list_and_go_with_it() -> None:
    import gc
    import weakref

    memory = _memory()
    index = weakref.ref(relation_index(memory))
    assert index() is relation_index(memory)
    del memory  # no edit anywhere: only the memory's own list held its index
    gc.collect()
    assert index() is None
