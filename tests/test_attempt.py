"""The leakage guard's rule: which task an entry came from alone."""

from __future__ import annotations

import pytest

from arcmemo.attempt import _sole_source, _sole_sources
from arcmemo.memory.ontology import Concept, Provenance


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
