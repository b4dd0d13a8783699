"""The leakage guard's rule: which task an entry came from alone."""

from __future__ import annotations

from typing import Any

import pytest

from arcmemo.memory.relations import RelationIndex, relation_index
from arcmemo.memory.schema import Concept, Provenance
from arcmemo.memory.synthetic import synthetic_memory
from arcmemo.run.solve_prompt import _sole_source, _sole_sources, hide_own_concepts


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        ([], None),
        (["t1"], "t1"),
        (["t1", "t1", "t1"], "t1"),
        (["t1", "t2"], None),
        (["t1", "t1", "t2"], None),
        (["t2", "t1", "t1"], None),
        (["seed"], "seed"),
    ],
)
def test_sole_source_is_the_one_task_every_source_names(
    sources: list[str], expected: str | None
) -> None:
    assert _sole_source(sources) == expected


def test_sole_sources_groups_concepts_by_their_only_task() -> None:
    def concept(name: str, *sources: str) -> Concept:
        return Concept(name=name, kind="structure", provenance=Provenance(sources=list(sources)))

    only_a, again_a, shared, orphan, only_b = (
        concept("only a", "a"),
        concept("again a", "a", "a"),
        concept("shared", "a", "b"),
        concept("orphan"),
        concept("only b", "b"),
    )
    owned = _sole_sources([only_a, again_a, shared, orphan, only_b])
    assert owned == {"a": {id(only_a), id(again_a)}, "b": {id(only_b)}}


def test_a_task_view_renders_as_a_fresh_memory_and_reuses_the_memorys_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = synthetic_memory(200, seed=3)
    busiest = sorted(memory.concepts, key=lambda c: -len(relation_index(memory).related(c)[0]))[:3]
    for concept in busiest:
        concept.provenance.sources = ["task-x"]
    relation_index(memory)  # the run's memory, indexed once
    builds: list[int] = []
    init = RelationIndex.__init__

    def counting(self: RelationIndex, *args: Any, **kwargs: Any) -> None:
        builds.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(RelationIndex, "__init__", counting)
    view = hide_own_concepts(memory, "task-x")
    assert not {c.name for c in busiest} & {c.name for c in view.concepts}
    texts = [
        view.render("selection", budget_tokens=3000),
        view.render("solve", selected=[view.concepts[0].name], budget_tokens=2000),
        view.render("full"),
    ]
    assert builds == []  # derived from the memory's index, not rebuilt
    fresh = view.model_copy(update={"concepts": list(view.concepts)})  # a list of its own
    assert texts == [
        fresh.render("selection", budget_tokens=3000),
        fresh.render("solve", selected=[view.concepts[0].name], budget_tokens=2000),
        fresh.render("full"),
    ]
    assert builds == [1]
    assert not any(c.name in texts[2] for c in busiest)  # not even in a related: line


def test_a_task_view_renders_again_only_the_blocks_its_hidden_concepts_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from arcmemo.memory import render

    monkeypatch.delenv("ARCMEMO_VERIFY_CACHES", raising=False)  # its checks rebuild blocks
    memory = synthetic_memory(300, seed=5)
    index = relation_index(memory)
    owned = max(memory.concepts, key=lambda c: len(index.related(c)[0]))  # relates to many
    owned.provenance.sources = ["task-x"]
    memory.render("full")
    built: list[str] = []
    build = render._build_block

    def counting(concept: Concept, *args: Any) -> str:
        built.append(concept.name)
        return build(concept, *args)

    monkeypatch.setattr(render, "_build_block", counting)
    view = hide_own_concepts(memory, "task-x")
    view.render("full")
    related = set(relation_index(memory).related(owned)[0])
    assert built and set(built) <= {c.name for c in view.concepts}
    assert len(built) < len(view.concepts) // 2  # the rest read from the memory's index
    assert related & set(built)  # those the hidden concept related to were redone


def test_a_task_view_shows_no_written_relation_to_the_tasks_own_concepts() -> None:
    memory = synthetic_memory(60, seed=2)
    own, other, third = memory.concepts[0], memory.concepts[1], memory.concepts[2]
    own.provenance.sources = ["task-x"]
    other.relations = [own.name.upper(), third.name]  # any spelling of the name
    third.relations = [own.name]
    assert own.name.upper() in memory.render("full")
    view = hide_own_concepts(memory, "task-x")
    for text in (view.render("full"), view.render("solve", selected=[other.name, third.name])):
        related = [
            name.lower()
            for line in text.splitlines()
            if line.startswith("  related: ")
            for name in line.removeprefix("  related: ").split(", ")
        ]
        assert third.name in related and own.name not in related
    assert relation_index(view).related(other, 12)[0][0] == third.name
