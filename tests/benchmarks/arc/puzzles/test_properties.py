"""The property table: which seed concepts get which property tests."""

from __future__ import annotations

from arcmemo.benchmarks.arc.puzzles.properties import concept_properties
from arcmemo.memory.schema import Concept, Memory


def test_seed_concepts_match_the_rules_by_name(arc_memory: Memory) -> None:
    def props(name: str) -> list[str]:
        concept = arc_memory.find(name)
        assert concept is not None
        return concept_properties(concept)

    assert props("reflect grid") == ["involution", "same_colors"]
    assert props("rotate grid") == ["order_four", "same_colors"]
    assert props("recolor object") == ["keeps_shapes"]
    assert props("draw line") == ["collinear"]
    assert props("crop to bounding box") == ["subgrid"]
    assert props("scale grid") == ["scaled"]
    assert props("fill enclosed regions") == ["fills_enclosed"]
    assert props("move object until collision") == ["translated"]
    # not a grid routine, or no rule: no property test
    assert props("extract objects") == []
    assert props("divider lines") == []
    assert props("tile grid") == []


def test_a_rule_needs_all_its_words() -> None:
    fill = Concept(name="fill background", kind="routine", output_type="grid")
    assert concept_properties(fill) == []
