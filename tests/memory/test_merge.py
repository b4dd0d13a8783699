"""Merge rules applied when a concept is written again, typedef harvesting, history."""

from __future__ import annotations

from pathlib import Path

import pytest

from arcmemo import Concept, Lesson, Memory, Parameter
from arcmemo.memory.merge import write_concept
from arcmemo.memory.schema import ConceptStats, TypeDef


def _routine(name: str = "recolor object", **fields: object) -> Concept:
    return Concept.model_validate({"name": name, "kind": "routine", **fields})


def test_first_write_adds_and_logs() -> None:
    memory = Memory()
    result = memory.add(_routine(), task_id="t1", actor="openai:o4-mini")
    assert result.op == "add" and result.concept_id == "recolor-object"
    assert memory.concepts[0].provenance.sources == ["t1"]
    assert memory.concepts[0].provenance.authors == ["openai:o4-mini"]
    assert [(h.op, h.target, h.task_id) for h in memory.history] == [
        ("add", "recolor-object", "t1")
    ]


def test_parameter_merge_fills_missing_fields_and_never_erases() -> None:
    memory = Memory()
    memory.add(_routine(parameters=[Parameter(name="grid", type="grid")]))
    result = memory.add(
        _routine(
            parameters=[
                Parameter(name="grid", type=None, description="the input grid"),
                Parameter(name="color", type="color", description="new color"),
            ]
        )
    )
    memory.add(_routine(parameters=[Parameter(name="grid", type="object", description="x")]))
    params = {p.name: p for p in memory.concepts[0].parameters}
    assert params["grid"].type == "grid"  # not erased by None, not replaced by "object"
    assert params["grid"].description == "the input grid"  # filled once, then kept
    assert params["color"].type == "color"
    assert [p.name for p in memory.concepts[0].parameters] == ["grid", "color"]
    assert "parameter grid: filled description" in result.changes
    assert "parameter color added" in result.changes


def test_cues_and_implementation_dedup_ignores_case_and_spacing() -> None:
    memory = Memory()
    memory.add(_routine(cues=["Objects  change color"], implementation=["copy the grid"]))
    memory.add(
        _routine(
            cues=["objects change COLOR", "color depends on size"],
            implementation=["  Copy the   grid ", "then paint"],
        )
    )
    concept = memory.concepts[0]
    assert concept.cues == ["Objects  change color", "color depends on size"]
    assert concept.implementation == ["copy the grid", "then paint"]


def test_provenance_and_stats_accumulate() -> None:
    memory = Memory()
    memory.add(_routine(stats=ConceptStats(selected=2, selected_solved=1)), task_id="t1")
    memory.add(
        _routine(stats=ConceptStats(selected=3, selected_solved=2)),
        task_id="t2",
        actor="anthropic:claude",
    )
    memory.add(_routine(), task_id="t1")
    concept = memory.concepts[0]
    assert concept.provenance.sources == ["t1", "t2"]
    assert concept.provenance.authors == ["human", "anthropic:claude"]
    assert (concept.stats.selected, concept.stats.selected_solved) == (5, 3)


def test_conflicting_kind_is_reported_not_applied() -> None:
    memory = Memory()
    memory.add(_routine(routine_subtype="grid manipulation"))
    result = memory.add(Concept(name="recolor object", kind="structure"), task_id="t9")
    assert memory.concepts[0].kind == "routine"
    assert memory.concepts[0].routine_subtype == "grid manipulation"
    assert any("kind" in c and "'structure'" in c for c in result.conflicts)
    last = memory.history[-1]
    assert last.op == "merge" and last.task_id == "t9"
    assert any(change.startswith("conflict: kind") for change in last.changes)


def test_scalar_fields_keep_first_value_and_report_a_different_one() -> None:
    memory = Memory()
    memory.add(_routine(output_type="grid"))
    result = memory.add(_routine(description="paint an object", output_type="object"))
    concept = memory.concepts[0]
    assert concept.description == "paint an object"  # was empty: filled
    assert concept.output_type == "grid"
    assert any(c.startswith("output_type") for c in result.conflicts)


@pytest.mark.parametrize("spelling", ["Extract Objects", "extract  object", "extract_objects"])
def test_near_duplicate_names_merge_into_one_entry(spelling: str) -> None:
    memory = Memory()
    memory.add(_routine("extract objects", cues=["shapes"]), task_id="a")
    result = memory.add(_routine(spelling, cues=["blobs"]), task_id="b")
    assert result.op == "merge"
    assert len(memory.concepts) == 1
    assert memory.concepts[0].name == "extract objects"
    assert memory.concepts[0].cues == ["shapes", "blobs"]


def test_typedefs_are_harvested_including_multi_word_names() -> None:
    memory = Memory()
    memory.add(
        _routine(
            "filter objects",
            parameters=[
                Parameter(name="criteria", type="selection criteria := Callable[[object], bool]")
            ],
            output_type="object list := list[object]",
        )
    )
    types = {t.name: t.definition for t in memory.types}
    assert types == {
        "selection criteria": "Callable[[object], bool]",
        "object list": "list[object]",
    }
    concept = memory.concepts[0]
    assert concept.parameters[0].type == "selection criteria"
    assert concept.output_type == "object list"
    assert memory.integrity_issues() == []


def test_harvesting_keeps_the_first_definition_and_records_the_redefinition() -> None:
    memory = Memory()
    memory.add(_routine(parameters=[Parameter(name="s", type="scheme := dict[int, int]")]))
    memory.add(_routine(parameters=[Parameter(name="t", type="scheme :=  dict[int,  int]")]))
    result = memory.add(
        _routine("other", parameters=[Parameter(name="s", type="Scheme := int")]), task_id="t9"
    )
    assert [(t.name, t.definition) for t in memory.types] == [("scheme", "dict[int, int]")]
    assert memory.concepts[1].parameters[0].type == "Scheme"
    expected = "type 'scheme' (parameter 's'): kept 'dict[int, int]', ignored redefinition 'int'"
    assert result.conflicts == [expected]
    # Only the real redefinition is a conflict (spacing differences are the same type) ...
    assert [h.changes for h in memory.history if any("conflict" in c for c in h.changes)] == [
        [f"conflict: {expected}"]
    ]
    # ... and the history entry says which task wrote it.
    assert memory.history[-1].task_id == "t9"


def test_typedefs_nested_in_an_annotation_are_harvested() -> None:
    memory = Memory(types=[TypeDef(name="position", definition="tuple[int, int]")])
    memory.add(
        _routine(
            "find symmetries",
            output_type="list[symmetry := Callable[[position], position]]",
        )
    )
    assert memory.concepts[0].output_type == "list[symmetry]"
    assert {t.name: t.definition for t in memory.types}["symmetry"] == (
        "Callable[[position], position]"
    )
    assert memory.integrity_issues() == []


def test_undeclared_types_are_declared_as_any_with_a_note(tmp_path: Path) -> None:
    memory = Memory()
    result = memory.add(
        _routine(
            parameters=[Parameter(name="g", type="grid"), Parameter(name="c", type="hue")],
            output_type="palette := dict[hue, shade] | Callable[[shade], shade]",
        ),
        task_id="t1",
    )
    assert [t.name for t in memory.types] == ["palette", "grid", "hue", "shade"]
    assert {t.name: t.definition for t in memory.types} == {
        "palette": "dict[hue, shade] | Callable[[shade], shade]",
        "grid": "Any",
        "hue": "Any",
        "shade": "Any",
    }
    assert "type 'grid' was used without a definition: declared as 'Any'" in result.changes
    assert "type 'grid' was used without a definition: declared as 'Any'" in (
        memory.history[-1].changes
    )
    # The point of declaring: the saved file loads again.
    memory.save(tmp_path / "m.json")
    assert Memory.load(tmp_path / "m.json").type_names() == memory.type_names()


def test_declare_false_leaves_undeclared_types_to_the_caller() -> None:
    memory = Memory()
    write_concept(memory, _routine(parameters=[Parameter(name="g", type="grid")]), declare=False)
    assert memory.types == []
    assert [m for _, m in memory.integrity_issues()] == [
        "type 'grid' (in 'recolor object') is not defined in 'types'"
    ]


def test_delete_logs_and_rejects_unknown_names() -> None:
    memory = Memory()
    memory.add(_routine())
    removed = memory.delete("Recolor Objects", why="duplicate")
    assert removed.id == "recolor-object" and memory.concepts == []
    assert (memory.history[-1].op, memory.history[-1].why) == ("delete", "duplicate")
    with pytest.raises(KeyError, match="no concept named"):
        memory.delete("recolor object")


def test_lessons_dedup_and_accumulate_sources() -> None:
    memory = Memory()
    assert memory.add_lesson(Lesson(situation="A wall", suggestion="Slide"), task_id="t1")
    assert not memory.add_lesson(Lesson(situation="a  wall", suggestion="slide"), task_id="t2")
    assert len(memory.lessons) == 1
    assert memory.lessons[0].provenance.sources == ["t1", "t2"]
    assert [h.op for h in memory.history] == ["lesson"]
