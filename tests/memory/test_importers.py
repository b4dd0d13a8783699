"""Importing the paper's published artifacts, from small files written here in their formats
(the project ships none of the paper's files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arcmemo import Memory
from arcmemo.cli.main import cli
from arcmemo.memory.importers import (
    ESTABLISHED_SOURCE,
    PublishedFileError,
    import_arc_memo,
    part_of,
)
from arcmemo.memory.paper_view import render_paper

# The published rendering (ConceptMemory.to_string) with the quirks of barc_init_mem.txt.
RENDERED = """\
## structure concepts
- concept: container
  description: an object that contains other objects
  cues:
    - if there is an object with a cavity
- lower usage concepts: [nested layers, cup opening]

## types
- direction := Literal["up", "down", "left", "right"]
- list[symmetry := Callable[[position], position]]
- shape := Any

## grid manipulation routines
- concept: recolor object
  description: recolor an object based on a color scheme
  output_typing: grid | object
  parameters:
    - object (type: object)
    - color scheme (type: dict[color, color])
    - object | object | position - the object or pixel to recolor
  cues:
    - if objects change color
  implementation:
    - {'for a single pixel': 'set grid[position] = color'}
- concept: draw objects
  description: draw several objects onto a grid
  parameters:
    - objects (type: list[object])
- concept: draw object
  description: draw a sprite on top of a base grid
  parameters:
    - sprite (type: grid)
- lower usage concepts: [slide from center, Recolor Objects]

## other routines
### Callable[[object], int]
### selection criteria
- concept: size criteria
  output_typing: bool
  parameters:
    - object (type: object)
    - mirror_axis | position (type: int | position)
- concept: find symmetry
  output_typing: list[symmetry := Literal['x', 'y']]
- lower usage concepts: [diagonal order, distance]
"""

PRELIM = """\
concepts:
  - concept: extract objects
    kind: routine
    routine_subtype: intermediate
    parameters:
      - name: input grid
        typing: grid
  - concept: filter objects
    kind: routine
    routine_subtype: intermediate
    output: list[object]
    parameters:
      - name: criteria
        typing: selection criteria := Callable[[object], bool]
"""

ANNOTATIONS = """\
776ffc46:
  pseudocode: |
    objects = extract_objects(grid)
  summary: recolor objects matching a guide's shape
  concepts:
    - concept: inside container criteria
      kind: routine
      routine_subtype: selection criteria
      output_typing: bool
    - concept: extract objects
    - concept: filter object
    - concept: never defined anywhere
"""

PUBLISHED_MEMORY = {
    "concepts": {
        "slide object": {
            "name": "slide object",
            "kind": "routine",
            "routine_subtype": "grid manipulation",
            "output_typing": "grid",
            "parameters": [
                "object | object - the object to move",
                {"name": "stop", "typing": "stopping criteria := Callable[[object, grid], bool]"},
            ],
            "cues": ["things slide"],
            "implementation": [],
            "used_in": ["4093f84a", "prelim"],
        },
        "Slide Objects": {
            "name": "Slide Objects",
            "kind": "routine",
            "routine_subtype": None,
            "output_typing": None,
            "parameters": [],
            "description": "move until collision",
            "cues": ["things slide", "pieces stack"],
            "used_in": ["228f6490"],
        },
        "region grid": {"name": "region grid", "kind": "structure", "used_in": ["9f236235"]},
    },
    "solutions": {"4093f84a": {"summary": "slide", "pseudocode": "slide all", "solution": "x"}},
    "custom_types": {"direction": "Literal['up', 'down']"},
}

LESSONS = {
    "0d3d703e": [
        {"situation": "colors change in place", "suggestion": "build a color table"},
        {"situation": "colors change in place", "suggestion": "build a color table"},
    ],
    "4093f84a": [{"situation": "pixels near a bar", "suggestion": "slide them to it"}],
}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The published files at their places in a checkout of the paper's repository."""
    op3 = tmp_path / "arc_memo" / "data" / "abstract_anno" / "op3"
    op3.mkdir(parents=True)
    (op3 / "barc_init_mem.txt").write_text(RENDERED)
    (op3 / "prelim2.yaml").write_text(PRELIM)
    (op3 / "op3a.yaml").write_text(ANNOTATIONS)
    lessons = tmp_path / "arc_memo" / "data" / "lessons" / "from_trace_fs"
    lessons.mkdir(parents=True)
    (lessons / "parsed_lessons.json").write_text(json.dumps(LESSONS))
    (tmp_path / "arc_memo" / "memory.json").write_text(json.dumps(PUBLISHED_MEMORY))
    return tmp_path / "arc_memo"


def _roundtrip(memory: Memory, tmp_path: Path) -> Memory:
    memory.save(tmp_path / "imported.json")
    return Memory.load(tmp_path / "imported.json")


def test_rendered_selection_memory_imports_by_arcmemo_s_conventions(
    checkout: Path, tmp_path: Path
) -> None:
    memory, report = import_arc_memo([checkout], part="selection", conventions="arcmemo")
    assert report.concepts_read == 12
    assert report.concepts == 10  # "draw objects" and "Recolor Objects" merge
    loaded = _roundtrip(memory, tmp_path)
    assert loaded.integrity_issues() == []
    recolor = loaded.find("recolor object")
    assert recolor is not None
    params = {p.name: p for p in recolor.parameters}
    assert list(params) == ["object", "color scheme"]  # the string one merged into "object"
    assert params["object"].description == "the object or pixel to recolor"
    assert recolor.output_type == "grid | object"
    assert recolor.implementation == ["for a single pixel: set grid[position] = color"]
    assert recolor.provenance.sources == ["arc-memo", ESTABLISHED_SOURCE]
    assert loaded.find("nested layers").kind == "structure"  # type: ignore[union-attr]
    size = loaded.find("size criteria")
    assert size is not None and size.routine_subtype == "selection criteria"
    assert [p.name for p in size.parameters] == ["object", "mirror_axis"]
    types = {t.name: t.definition for t in loaded.types}
    assert types["symmetry"] == "Callable[[position], position]"  # rebuilt from list[symmetry
    assert types["position"] == "Any" and types["color"] == "Any"
    assert loaded.find("find symmetry").output_type == "list[symmetry]"  # type: ignore[union-attr]
    quirks = report.quirks
    for quirk in (
        "a parameter written as one string: split into name, type and text",
        "a stringified dict as a list item: written as 'key: value'",
        "a malformed type name in the vocabulary: rebuilt from its text",
        "a typedef nested inside an annotation: harvested",
        "a type redefined with another meaning: first kept, conflict recorded",
        "a type used but never defined: declared as Any",
        "a near-duplicate name (case, spacing, plural) merged",
        "a parameter name holding alternatives: the first kept as the name",
        "a subtype heading with no concept under it (all of lower usage)",
        "lower-usage routines listed after the last subtype heading: subtype unknown",
        "a parameter listed twice in one concept: merged",
    ):
        assert quirk in quirks, quirk
    assert quirks["a near-duplicate name (case, spacing, plural) merged"] == 2
    # the conflicting symmetry definition is in the history, not applied silently
    assert any(
        "conflict: type 'symmetry'" in change
        for entry in loaded.history
        for change in entry.changes
    )
    # The paper's usage threshold survives: full entries stay full, the rest by name.
    view = loaded.render("selection")
    assert "- concept: recolor object" in view and "- concept: container" in view
    assert "- lower-usage concepts: cup opening, nested layers" in view
    assert "- concept: slide from center" not in view


def test_annotations_start_the_paper_s_memory(checkout: Path, tmp_path: Path) -> None:
    memory, report = import_arc_memo([checkout], part="annotations", conventions="arcmemo")
    loaded = _roundtrip(memory, tmp_path)
    assert {c.name for c in loaded.concepts} == {
        "extract objects",
        "filter objects",
        "inside container criteria",
    }
    extract = loaded.find("extract objects")
    assert extract is not None and extract.provenance.sources == ["prelim", "776ffc46"]
    assert extract.usage == 2  # the paper counts "prelim" as a use
    assert loaded.find("filter objects").output_type == "list[object]"  # type: ignore[union-attr]
    assert "'output' used instead of 'output_typing'" in report.quirks
    assert "a multi-word inline typedef: harvested" in report.quirks
    assert report.skipped == [
        "never defined anywhere: a reference to a concept that is not in the memory"
    ]
    assert loaded.solutions["776ffc46"].summary == "recolor objects matching a guide's shape"


def test_published_memory_json_imports(checkout: Path, tmp_path: Path) -> None:
    memory, report = import_arc_memo([checkout / "memory.json"], conventions="arcmemo")
    loaded = _roundtrip(memory, tmp_path)
    assert [c.name for c in loaded.concepts] == ["slide object", "region grid"]
    slide = loaded.find("slide object")
    assert slide is not None
    assert slide.provenance.sources == ["4093f84a", "prelim", "228f6490"]
    assert slide.cues == ["things slide", "pieces stack"]
    assert slide.description == "move until collision"
    assert [(p.name, p.type) for p in slide.parameters] == [
        ("object", "object"),
        ("stop", "stopping criteria"),
    ]
    assert loaded.solutions["4093f84a"].program == "x"
    assert report.concepts_read == 3 and report.concepts == 2


def test_lessons_import_without_program_synthesis_material(checkout: Path, tmp_path: Path) -> None:
    memory, report = import_arc_memo([checkout], part="lessons")
    loaded = _roundtrip(memory, tmp_path)
    assert report.lessons_read == 3 and report.lessons == 2
    assert report.quirks == {"an identical lesson written twice: kept once": 1}
    assert loaded.types == [] and loaded.concepts == []
    assert loaded.lessons[1].provenance.sources == ["4093f84a"]
    assert "## Types" not in loaded.render("selection")


def test_files_are_recognised_and_bad_input_is_named(checkout: Path, tmp_path: Path) -> None:
    op3 = checkout / "data" / "abstract_anno" / "op3"
    assert part_of(op3 / "barc_init_mem.txt") == "selection"
    assert part_of(checkout / "memory.json") == "memory"
    assert part_of(checkout / "data/lessons/from_trace_fs/parsed_lessons.json") == "lessons"
    with pytest.raises(PublishedFileError, match="say which part"):
        import_arc_memo([checkout])
    (tmp_path / "empty.txt").write_text("hello\n")
    with pytest.raises(PublishedFileError, match="not a rendered ArcMemo memory"):
        import_arc_memo([tmp_path / "empty.txt"])
    (tmp_path / "other.json").write_text("[1, 2]")
    with pytest.raises(PublishedFileError, match="not a published memory"):
        import_arc_memo([tmp_path / "other.json"])


def test_cli_memory_import(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "paper.json"
    runner = CliRunner()
    result = runner.invoke(
        cli,
        ["memory", "import", "arc-memo", str(checkout), "--part", "selection", "--out", str(out),
         "--report", str(tmp_path / "report.json")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "concepts: 12 read -> 12 in the memory" in result.output  # the paper's names
    assert "quirk handled (1x): a malformed type name in the vocabulary" in result.output
    assert json.loads((tmp_path / "report.json").read_text())["concepts"] == 12
    merged = runner.invoke(
        cli,
        ["memory", "import", "arc-memo", str(checkout), "--part", "selection", "--out",
         str(tmp_path / "merged.json"), "--conventions", "arcmemo"],
    )  # fmt: skip
    assert "concepts: 12 read -> 10 in the memory" in merged.output
    validated = runner.invoke(cli, ["memory", "validate", str(out)])
    assert validated.exit_code == 0, validated.output
    again = runner.invoke(cli, ["memory", "import", "arc-memo", str(checkout), "--out", str(out)])
    assert again.exit_code == 1 and "already exists" in again.output


# -- the paper's conventions (the default) ----------------------------------------------

# A rendered memory as the paper's selection context shows it, with what its import must
# keep: near-duplicate names the paper keeps apart, concepts defining a type differently
# inline, parameter alternatives, a string parameter, lower-usage names in written order.
PAPER_RENDERED = """\
## structure concepts
- concept: container
  description: an object that holds others
  cues:
    - an object with a cavity
- lower usage concepts: [nested layers, cup opening]

## types
- direction := Literal["up", "down"]
- list[symmetry := Callable[[position], position]]
- shape := Any

## grid manipulation routines
- concept: draw objects
  description: draw several objects onto a grid
  parameters:
    - objects (type: list[object])
- concept: draw object
  description: draw one sprite on a base grid
  output_typing: grid
  parameters:
    - sprite (type: grid)
    - mirror_axis (type: int | float)
    - mirror_axis | position (type: int | float | position)
    - object | object | position - the pixel to draw
- concept: draw line
  parameters:
    - direction (type: direction := Literal["up", "down", "left", "right", "up-left"])
- lower usage concepts: [slide from center, draw lines]

## other routines
### intermediate
- concept: find pixels
  output_typing: list[position]
  implementation:
    - scan the grid
- concept: find pixel
  output_typing: position
### selection criteria
- concept: size criteria
  output_typing: bool
  parameters:
    - criteria (type: selection criteria := Callable[[object], bool])
- lower usage concepts: [unique colors, unique color, distance]"""


def _typed_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "(type:" in line or "output_typing:" in line]


def test_the_paper_s_rendered_memory_imports_as_the_paper_s_concepts(tmp_path: Path) -> None:
    source = tmp_path / "barc_init_mem.txt"
    source.write_text(PAPER_RENDERED)
    memory, report = import_arc_memo([source])
    loaded = _roundtrip(memory, tmp_path)
    assert loaded.conventions == "paper" and loaded.integrity_issues() == []
    assert report.concepts_read == report.concepts == len(loaded.concepts) == 14
    for one, other in [("draw objects", "draw object"), ("unique colors", "unique color"),
                       ("find pixels", "find pixel"), ("draw lines", "draw line")]:  # fmt: skip
        first, second = loaded.find(one), loaded.find(other)
        assert first is not None and second is not None and first.id != second.id
        assert (first.name, second.name) == (one, other)
    draw_line = loaded.find("draw line")
    assert draw_line is not None  # its own five directions, not the vocabulary's two
    assert draw_line.parameters[0].type == (
        'direction := Literal["up", "down", "left", "right", "up-left"]'
    )
    draw = loaded.find("draw object")
    assert draw is not None
    assert [p.name for p in draw.parameters] == [
        "sprite", "mirror_axis", "mirror_axis | position",
        "object | object | position - the pixel to draw",
    ]  # fmt: skip
    assert draw.parameters[2].type == "int | float | position"
    types = {t.name: t.definition for t in loaded.types}
    assert types["direction"] == 'Literal["up", "down"]'  # the listed vocabulary, first
    assert "list[symmetry" in types and "selection criteria" in types  # derived
    assert "grid" not in types and "position" not in types  # nothing declared as Any
    assert (
        report.quirks["a concept's own type definition differs from the vocabulary's: both kept"]
        == 1
    )
    # Round trip: the paper's view of the import is the source, line for line.
    assert render_paper(loaded) == PAPER_RENDERED
    assert _typed_lines(render_paper(loaded)) == _typed_lines(PAPER_RENDERED)


def test_paper_conventions_keep_writing_by_exact_names() -> None:
    source_memory = Memory(conventions="paper")
    from arcmemo.memory.schema import Concept, Parameter

    source_memory.add(Concept(name="draw object", kind="routine"))
    source_memory.add(Concept(name="Draw Objects", kind="routine"))
    source_memory.add(
        Concept(
            name="draw object",
            kind="routine",
            parameters=[Parameter(name="at", type="position := tuple[int, int]")],
        )
    )
    assert [c.name for c in source_memory.concepts] == ["draw object", "Draw Objects"]
    assert source_memory.find("draw objects") is source_memory.concepts[1]
    assert source_memory.concepts[0].parameters[0].type == "position := tuple[int, int]"
    assert source_memory.integrity_issues() == []


def test_annotations_follow_the_paper_s_parameter_last_wins(tmp_path: Path) -> None:
    (tmp_path / "prelim2.yaml").write_text(
        "concepts:\n"
        "  - concept: draw line\n    kind: routine\n    routine_subtype: grid manipulation\n"
        "    parameters:\n      - name: start\n        typing: position\n"
        "        description: the first pixel\n"
    )
    (tmp_path / "op3a.yaml").write_text(
        "4093f84a:\n  summary: lines\n  pseudocode: draw\n  concepts:\n"
        "    - concept: draw line\n      parameters:\n"
        "        - name: start\n          description: the position to start from\n"
        "    - concept: draw lines\n      kind: routine\n"
    )
    memory, report = import_arc_memo([tmp_path / "prelim2.yaml", tmp_path / "op3a.yaml"])
    draw = memory.find("draw line")
    assert draw is not None and [c.name for c in memory.concepts] == ["draw line", "draw lines"]
    assert (draw.parameters[0].type, draw.parameters[0].description) == (
        "position",
        "the position to start from",
    )
    assert (
        report.quirks["a parameter written again: the later value kept (the paper's last-wins)"]
        == 1
    )
    assert any(
        "conflict: parameter start description: took 'the position to start from', "
        "replaced 'the first pixel'" in change
        for entry in memory.history
        for change in entry.changes
    )
