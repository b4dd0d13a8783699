"""The relation index: same relations as the definition, counted exactly, never stale."""

from __future__ import annotations

import pytest

from arcmemo.memory.relations import RelationIndex, relation_index, usefulness
from arcmemo.memory.schema import Concept, Memory, Parameter, TypeDef
from arcmemo.memory.synthetic import synthetic_memory
from arcmemo.memory.types import type_names


def _reference(memory: Memory, concept: Concept) -> list[str]:
    """The definition, spelled out over all pairs: written names, then every routine
    that fills one of the concept's parameter types and every concept with a parameter of
    the type the concept fills, most useful first."""

    def used(c: Concept) -> set[str]:
        return {n.lower() for p in c.parameters for n in type_names(p.type or "")}

    def fills(c: Concept) -> str | None:
        return c.routine_subtype.lower() if c.kind == "routine" and c.routine_subtype else None

    implied = [
        other
        for other in memory.concepts
        if other.name != concept.name
        and ((fills(other) or "") in used(concept) or (fills(concept) or "") in used(other))
    ]
    written = list(dict.fromkeys(concept.relations))
    return written + [c.name for c in sorted(implied, key=usefulness) if c.name not in written]


@pytest.mark.parametrize("size", [40, 300])
def test_index_gives_the_defined_relations_and_exact_counts(size: int) -> None:
    memory = synthetic_memory(size, seed=size)
    # Written relations that overlap the implied ones must not be counted twice.
    for concept in memory.concepts[:30]:
        concept.relations = [*_reference(memory, concept)[-1:], memory.concepts[-1].name]
    assert sum(len(c.relations) == 2 for c in memory.concepts[:30]) > 5
    index = RelationIndex(memory.concepts)
    assert max(len(_reference(memory, c)) for c in memory.concepts) > size // 20
    for concept in memory.concepts:
        expected = _reference(memory, concept)
        assert index.related(concept) == (expected, 0), concept.name
        for limit in (0, 1, 3, 12):
            names, more = index.related(concept, limit)
            assert names == expected[:limit]
            assert more == len(expected) - len(names)


def _criteria_memory() -> Memory:
    return Memory(
        types=[TypeDef(name="criteria", definition="Callable[[object], bool]")],
        concepts=[
            Concept(
                name="filter objects",
                kind="routine",
                routine_subtype="intermediate",
                parameters=[Parameter(name="keep", type="criteria")],
            ),
            Concept(name="size criteria", kind="routine", routine_subtype="criteria"),
        ],
    )


def test_index_is_kept_until_the_concepts_change() -> None:
    memory = _criteria_memory()
    first = relation_index(memory)
    assert relation_index(memory) is first
    memory.render("full")
    assert relation_index(memory) is first
    memory.add(Concept(name="color criteria", kind="routine", routine_subtype="criteria"))
    assert relation_index(memory) is not first
    assert memory.relations()["filter-object"] == ["color criteria", "size criteria"]


def test_index_sees_a_type_and_a_parameter_added_by_a_merge() -> None:
    memory = _criteria_memory()
    assert memory.relations()["size-criteria"] == ["filter objects"]
    # A merge that brings a new callable type inline (the vocabulary grows) and a
    # parameter of it: the new routine of that type relates to the merged concept.
    memory.add(Concept(name="near criteria", kind="routine", routine_subtype="distance rule"))
    memory.add(
        Concept(
            name="filter objects",
            kind="routine",
            routine_subtype="intermediate",
            parameters=[Parameter(name="near", type="distance rule := Callable[[object], int]")],
        )
    )
    assert "distance rule" in memory.type_names()
    assert memory.relations()["filter-object"] == ["near criteria", "size criteria"]
    assert memory.relations()["near-criteria"] == ["filter objects"]
    assert "related: near criteria, size criteria" in memory.render("full")


def test_index_sees_deletions_and_edits_in_place() -> None:
    memory = _criteria_memory()
    memory.add(Concept(name="color criteria", kind="routine", routine_subtype="criteria"))
    assert memory.relations()["filter-object"] == ["color criteria", "size criteria"]
    # selection statistics grow in place (continual runs): the more useful comes first
    memory.concepts[1].stats.selected_solved += 3
    assert memory.relations()["filter-object"] == ["size criteria", "color criteria"]
    memory.concepts[0].parameters.append(Parameter(name="other", type="grid"))
    memory.concepts[0].parameters[0].type = "grid"
    assert memory.relations()["filter-object"] == []
    memory.concepts[0].parameters[0].type = "criteria"
    memory.delete("size criteria")
    assert memory.relations()["filter-object"] == ["color criteria"]
    copy = memory.model_copy(update={"concepts": memory.concepts[:1]})
    assert copy.relations()["filter-object"] == []
    assert memory.relations()["filter-object"] == ["color criteria"]


def test_cache_takes_no_part_in_equality_or_serialisation() -> None:
    memory, other = _criteria_memory(), _criteria_memory()
    memory.render("selection")
    assert memory == other
    assert memory.model_dump() == other.model_dump()


def test_long_related_lines_list_the_most_useful_and_count_the_rest() -> None:
    memory = _criteria_memory()
    for index in range(30):
        memory.add(
            Concept(name=f"rule number {index}", kind="routine", routine_subtype="criteria"),
            task_id=f"t{index}",
        )
    memory.add(Concept(name="rule number 7", kind="routine"), task_id="again")
    text = memory.render("full")
    line = next(x for x in text.splitlines() if x.startswith("  related: rule number 7"))
    names = line.removeprefix("  related: ").split(", ")
    assert len(names) == 13 and names[-1] == "and 19 more"  # 12 shown of 31


def test_a_concept_outside_the_list_relates_by_every_type() -> None:
    # The index keeps only the types its members fill; a concept from elsewhere may fill
    # another one ("grid", which no member fills) and still relates to its users.
    memory = _criteria_memory()
    memory.concepts[0].parameters.append(Parameter(name="canvas", type="list[grid]"))
    index = RelationIndex(memory.concepts)
    outsider = Concept(name="grid maker", kind="routine", routine_subtype="Grid")
    assert index.related(outsider) == (["filter objects"], 0)
    assert index.related(outsider, 0) == ([], 1)
    assert index.related(memory.concepts[1]) == (["filter objects"], 0)


def _same_answers(derived: RelationIndex, fresh: RelationIndex, members: list[Concept]) -> None:
    assert derived.order == fresh.order
    for concept in members:
        for limit in (None, 0, 1, 3, 12):
            assert derived.related(concept, limit) == fresh.related(concept, limit), concept.name
    assert derived.by_usefulness(members[::3]) == fresh.by_usefulness(members[::3])
    ids = [c.id for c in members[::5]] + ["no such concept"]
    assert derived.with_ids(ids) == fresh.with_ids(ids)


@pytest.mark.parametrize("seed", range(6))
def test_an_index_less_a_few_members_answers_as_one_built_afresh(seed: int) -> None:
    memory = synthetic_memory(300, seed=seed)
    for concept in memory.concepts[:40:4]:  # written relations, some naming hidden ones
        concept.relations = [memory.concepts[-1].name, memory.concepts[7].name]
    parent = RelationIndex(memory.concepts)
    # The members relating most, and every filler of one type: that type must stop
    # relating anything, as in a fresh index.
    busiest = sorted(memory.concepts, key=lambda c: -len(parent.related(c)[0]))[: seed + 1]
    subtype = next(c.routine_subtype for c in memory.concepts if parent._filled(c))
    sole = [c for c in memory.concepts if c.kind == "routine" and c.routine_subtype == subtype]
    hidden_concepts = busiest + (sole if seed % 2 else [])
    hidden = {id(c) for c in hidden_concepts}
    kept = [c for c in memory.concepts if id(c) not in hidden]
    derived, fresh = parent.without(hidden, kept), RelationIndex(kept)
    # A written relation to a hidden member is not shown (the leakage guard's rule).
    fresh._hidden_ids = frozenset(c.id for c in hidden_concepts)
    _same_answers(derived, fresh, kept)
    for outsider in hidden_concepts[:3]:  # no longer members: related by every type
        assert not derived.holds(outsider)
        assert derived.related(outsider, 12) == fresh.related(outsider, 12)
    _same_answers(parent, RelationIndex(memory.concepts), memory.concepts)  # untouched


def test_a_hidden_member_in_both_lists_of_a_kinship_is_taken_out_of_both() -> None:
    # x and z fill "a" and take a "b"; y fills "b" and takes an "a": for y, x and z are
    # fillers and users at once, each counted once.
    def routine(name: str, fills: str, takes: str) -> Concept:
        parameters = [Parameter(name="p", type=takes)]
        return Concept(name=name, kind="routine", routine_subtype=fills, parameters=parameters)

    x, y, z = routine("x", "a", "b"), routine("y", "b", "a"), routine("z", "a", "b")
    parent = RelationIndex([x, y, z])
    assert parent.related(y) == (["x", "z"], 0)
    derived = parent.without({id(z)}, [x, y])
    assert derived.related(y) == RelationIndex([x, y]).related(y) == (["x"], 0)
    assert derived.related(y, 0) == ([], 1)


def test_an_index_less_a_few_members_builds_nothing_the_size_of_the_list() -> None:
    memory = synthetic_memory(200)
    parent = RelationIndex(memory.concepts)
    hidden_concepts = memory.concepts[5:200:40]
    hidden = {id(c) for c in hidden_concepts}
    kept = [c for c in memory.concepts if id(c) not in hidden]
    derived = parent.without(hidden, kept)
    # its members' maps are the parent's less the hidden; their places the parent's own
    assert list(derived._members.values()) == kept
    assert list(derived._by_id) == [c.id for c in kept]
    assert derived.order == [c for c in parent.order if id(c) not in hidden]
    assert derived._positions() is parent._positions()
    assert derived.by_usefulness(kept[::20]) == RelationIndex(kept).by_usefulness(kept[::20])
    # a list that is not the members less the hidden ones is refused, not indexed wrongly
    with pytest.raises(ValueError, match="members less the hidden ones"):
        parent.without(hidden, kept[1:])
