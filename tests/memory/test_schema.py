"""The ontology records: ids, validation, typedef parsing, integrity checks, schema."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from arcmemo import Concept, Lesson, Memory, Parameter, TypeDef
from arcmemo.memory.edits import VERIFY_VARIABLE
from arcmemo.memory.schema import concept_id, parse_typedef


@pytest.mark.parametrize(
    "name", ["Extract Objects", "extract  object", "extract_objects", " EXTRACT-objects "]
)
def test_near_duplicate_names_share_one_id(name: str) -> None:
    assert concept_id(name) == "extract-object"


def test_find_accepts_any_spelling(small_memory: Memory) -> None:
    found = small_memory.find("Recolor_Objects")
    assert found is not None and found.name == "recolor object"
    assert small_memory.find("rotate grid") is None


def test_concept_derives_id_and_cleans_name() -> None:
    concept = Concept(name="  Draw   Line ", kind="routine")
    assert concept.name == "Draw Line"
    assert concept.id == "draw-line"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": "draw line", "kind": "routine", "id": "other"}, "does not match name"),
        ({"name": "hole", "kind": "structure", "routine_subtype": "x"}, "only allowed on routines"),
        ({"name": "---", "kind": "routine"}, "no letters or digits"),
        ({"name": "draw line", "kind": "procedure"}, "'structure' or 'routine'"),
        ({"name": "draw line", "kind": "routine", "colour": "red"}, "Extra inputs"),
        (
            {
                "name": "draw line",
                "kind": "routine",
                "parameters": [{"name": "start"}, {"name": "start"}],
            },
            "duplicate parameter names: start",
        ),
    ],
)
def test_invalid_concepts_are_rejected(fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Concept.model_validate(fields)


def test_parse_typedef_keeps_multi_word_names() -> None:
    assert parse_typedef("selection  criteria := Callable[[object], bool]") == (
        "selection criteria",
        "Callable[[object], bool]",
    )
    assert parse_typedef("list[object]") is None


def test_integrity_issues_name_the_place() -> None:
    memory = Memory(
        types=[TypeDef(name="grid", definition="list[list[color]]")],
        concepts=[
            Concept(
                name="recolor object",
                kind="routine",
                parameters=[Parameter(name="scheme", type="color scheme")],
                output_type="grid",
            ),
            Concept(name="Recolor Objects", kind="routine"),
        ],
    )
    issues = dict(memory.integrity_issues())
    assert "duplicate concept id 'recolor-object'" in issues["concepts[1].name"]
    assert "'color scheme'" in issues["concepts[0].parameters[0].type"]
    assert "'color'" in issues["types[0].definition"]


def test_valid_memory_has_no_integrity_issues(small_memory: Memory) -> None:
    assert small_memory.integrity_issues() == []


def test_usage_counts_distinct_sources_and_solved_selections(small_memory: Memory) -> None:
    recolor = small_memory.find("recolor object")
    assert recolor is not None
    assert recolor.usage == 2
    recolor.stats.selected_solved = 3
    assert recolor.usage == 5


def _undocumented(schema: dict, where: str) -> list[str]:
    missing = []
    for name, prop in schema.get("properties", {}).items():
        if "description" not in prop:
            missing.append(f"{where}.{name}")
    return missing


def test_every_schema_field_has_a_description() -> None:
    schema = Memory.model_json_schema()
    defs = schema.get("$defs", {})
    missing = _undocumented(schema, "Memory")
    for name, definition in defs.items():
        missing += _undocumented(definition, name)
    assert missing == []


def test_public_api_is_importable_from_the_package() -> None:
    lesson = Lesson(situation="a", suggestion="b")
    assert isinstance(Memory(lessons=[lesson]).lessons[0], Lesson)


def test_relations_derived_from_callable_types_both_ways() -> None:
    from arcmemo.memory.schema import Concept, Memory, Parameter, TypeDef

    memory = Memory(
        types=[TypeDef(name="selection criteria", definition="Callable[[object], bool]")],
        concepts=[
            Concept(
                name="filter objects",
                kind="routine",
                routine_subtype="intermediate",
                parameters=[Parameter(name="keep", type="list[selection criteria]")],
                relations=["extract objects"],
            ),
            Concept(name="size criteria", kind="routine", routine_subtype="selection criteria"),
            Concept(name="extract objects", kind="routine"),
        ],
    )
    related = memory.relations()
    assert related["filter-object"] == ["extract objects", "size criteria"]
    assert related["size-criteria"] == ["filter objects"]
    assert related["extract-object"] == []
    assert "related: filter objects" in memory.render("full")


def _counting_index(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patch the id index of ``Memory.find`` to record the size of every list it indexes."""
    from arcmemo.memory import schema

    monkeypatch.delenv(VERIFY_VARIABLE)  # else every kept index is checked by a rebuild
    built: list[int] = []
    real = schema._positions

    def counted(concepts: list[Concept]) -> dict[str, int]:
        built.append(len(concepts))
        return real(concepts)

    monkeypatch.setattr(schema, "_positions", counted)
    return built


def test_find_indexes_a_version_of_the_list_once(
    small_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = _counting_index(monkeypatch)
    names = [c.name for c in small_memory.concepts]
    small_memory.concepts = list(small_memory.concepts)  # a version not indexed yet
    for _ in range(3):
        assert [small_memory.find(n) for n in names] == list(small_memory.concepts)
    assert built == [len(names)]  # a scan per lookup was quadratic in the report


def test_writes_keep_the_index_instead_of_rebuilding_it(
    small_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = _counting_index(monkeypatch)
    small_memory.concepts = list(small_memory.concepts)
    assert small_memory.find(small_memory.concepts[0].name) is small_memory.concepts[0]
    for number in range(5):  # adding costs the same at any memory size: no full pass
        small_memory.add(Concept(name=f"added routine {number}", kind="routine"))
    small_memory.add(Concept(name="added routine 0", kind="routine", cues=["again"]))  # merge
    small_memory.concepts[1].stats.helpful.append("t1")  # an edit inside a concept
    assert small_memory.find("added routine 4") is small_memory.concepts[-1]
    assert small_memory.find("added routine 0").cues == ["again"]  # type: ignore[union-attr]
    assert built == [len(small_memory.concepts) - 5]


def test_find_sees_every_kind_of_edit(small_memory: Memory) -> None:
    first = small_memory.concepts[0]
    assert small_memory.find(first.name) is first
    small_memory.concepts.append(Concept(name="draw line", kind="routine"))
    assert small_memory.find("draw lines") is small_memory.concepts[-1]
    small_memory.concepts.pop(0)
    assert small_memory.find(first.name) is None
    small_memory.concepts[0].id = "renamed"  # an assignment counts as an edit
    assert small_memory.find("renamed") is small_memory.concepts[0]
    small_memory.concepts = [Concept(name="only one", kind="structure")]
    assert small_memory.find("draw line") is None and small_memory.find("only one") is not None


def test_find_answers_the_first_of_a_repeated_id() -> None:
    # A list that would not load (integrity_issues names it); the first answers, as a scan.
    one, two = Concept(name="fill hole", kind="routine"), Concept(name="fill holes", kind="routine")
    memory = Memory.model_construct(concepts=[one, two])
    assert memory.find("fill hole") is one
