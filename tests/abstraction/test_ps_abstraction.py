"""Program-synthesis abstraction: pseudocode, then typed concepts, repaired once or recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from arcmemo.abstraction import ABSTRACTORS
from arcmemo.abstraction.ps import normalize_item, parse_concepts
from arcmemo.core.registry import RegistryError
from arcmemo.memory.schema import Memory
from arcmemo.models.structured import OutputError
from tests.support.abstraction import (
    ACTOR,
    ITEM,
    PSEUDOCODE,
    Recorder,
    abstract,
    fenced,
    small_memory,
)

GOOD = fenced(
    """
- name: flip rows
  kind: routine
  routine_subtype: grid manipulation
  description: Reverse the order of the rows.
  parameters:
    - name: grid
      type: grid
    - name: keep
      type: "row criteria := Callable[[list[color]], bool]"
  output_type: grid
  cues: [the output is the input upside down]
  implementation: ["grid[::-1]"]
- name: Recolor Objects
  cues: [a flipped object keeps its color]
"""
)


def test_writes_new_concepts_and_extends_existing_ones_by_name(tmp_path: Path) -> None:
    memory = small_memory()
    recorder = Recorder(PSEUDOCODE, GOOD)
    outcome = abstract(memory, recorder)
    assert outcome.failures == [] and outcome.conflicts == []
    assert outcome.written == ["flip-row", "recolor-object"]
    flip = memory.find("flip rows")
    assert flip is not None
    assert flip.provenance.sources == ["task-7"] and flip.provenance.authors == [ACTOR]
    assert [(p.name, p.type) for p in flip.parameters] == [
        ("grid", "grid"),
        ("keep", "row criteria"),
    ]
    assert "row criteria" in memory.type_names()  # the inline typedef was harvested
    assert memory.integrity_issues() == []  # so the saved file loads again
    recolor = memory.find("recolor object")
    assert recolor is not None
    assert recolor.cues == [
        "objects change color but not shape",
        "a flipped object keeps its color",
    ]
    assert recolor.provenance.sources == ["older-task", "task-7"]
    solution = memory.solutions["task-7"]
    assert solution.summary == "flip the grid upside down"
    assert "reversed(grid.rows)" in solution.pseudocode
    assert solution.program == ITEM.solution
    new_history = [(h.op, h.target, h.task_id, h.actor) for h in memory.history[1:]]
    assert new_history == [
        ("add", "flip-row", "task-7", ACTOR),
        ("merge", "recolor-object", "task-7", ACTOR),
    ]
    assert outcome.usage.completion_tokens > 0
    memory.save(tmp_path / "memory.json")
    assert Memory.load(tmp_path / "memory.json") == memory


def test_prompts_show_the_solution_then_the_memory_and_the_pseudocode() -> None:
    recorder = Recorder(PSEUDOCODE, GOOD)
    abstract(small_memory(), recorder)
    first = recorder.prompt(0)
    for text in (ITEM.problem.strip(), ITEM.solution.strip(), "the rows are flipped"):
        assert text in first
    second = recorder.prompt(1)
    assert "recolor object" in second  # the memory's compressed view
    assert "grid := list[list[color]]" in second
    assert "Summary: flip the grid upside down" in second
    assert "rows = reversed(grid.rows)" in second


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ("```yaml\n- name: [unclosed\n```", "the YAML block does not parse at line 2"),
        (
            fenced("- name: flip rows\n  kind: routine\n  parameters: 3"),
            "item 1: parameters: expected a list of {name, type, description} items, got int",
        ),
        (
            fenced("- name: flip rows\n  kind: gadget"),
            "item 1 ('flip rows'): kind: Input should be 'structure' or 'routine'",
        ),
        (
            fenced("- name: flip rows\n  kind: routine\n  output_type: widget"),
            "item 1 ('flip rows'): unknown type(s) widget; use a type of the memory",
        ),
        (
            fenced("- name: flip rows\n  kind: routine\n  parameters: [{name: g, type: [1]}]"),
            "item 1 ('flip rows'): parameters.0.type: Input should be a valid string",
        ),
        (
            fenced("- name: flip rows\n  description: no kind given"),
            "item 1 ('flip rows'): a new concept needs 'kind' (structure or routine)",
        ),
        ("```yaml\nconcepts: 5\n```", "expected a YAML list of concepts, got dict"),
        ("```yaml\n[]\n```", "the list holds no concepts"),
    ],
    ids=[
        "bad-yaml",
        "parameters-int",
        "unknown-kind",
        "unknown-type",
        "type-not-string",
        "missing-kind",
        "not-a-list",
        "empty",
    ],
)
def test_malformed_concepts_are_repaired_once_with_the_exact_error(bad: str, error: str) -> None:
    memory = small_memory()
    recorder = Recorder(PSEUDOCODE, bad, GOOD)
    outcome = abstract(memory, recorder)
    repair = recorder.last(2)
    assert repair.startswith("Your answer could not be used: ")
    assert error in repair
    assert recorder.received[2][-2].content == bad  # the model sees its own answer
    assert outcome.failures == []
    assert memory.find("flip rows") is not None
    assert outcome.written == ["flip-row", "recolor-object"]


def test_a_still_broken_answer_is_recorded_and_its_valid_items_written() -> None:
    memory = small_memory()
    first = fenced("- name: flip rows\n  kind: gadget")
    second = fenced(
        """
- name: flip rows
  kind: routine
  parameters: 3
- name: mirror columns
  kind: routine
  routine_subtype: grid manipulation
  parameters: ['grid (grid): the input']
  output_type: grid
- name: upside-down pattern
  kind: structure
  output_type: nonsense type
"""
    )
    recorder = Recorder(PSEUDOCODE, first, second)
    outcome = abstract(memory, recorder)
    (failure,) = outcome.failures
    assert failure.stage == "concepts"
    assert failure.raw == [first, second]
    assert "item 1: parameters: expected a list" in failure.error
    assert "item 3 ('upside-down pattern'): unknown type(s) nonsense type" in failure.error
    assert outcome.written == ["mirror-column"]
    mirror = memory.find("mirror columns")
    assert mirror is not None
    assert [(p.name, p.type, p.description) for p in mirror.parameters] == [
        ("grid", "grid", "the input")
    ]
    assert memory.find("flip rows") is None and memory.find("upside-down pattern") is None
    assert "task-7" in memory.solutions  # the solution is kept; the failure is on record


def test_a_wholly_broken_answer_writes_nothing_and_keeps_the_raw_text() -> None:
    memory = small_memory()
    before = memory.model_copy(deep=True)
    recorder = Recorder(PSEUDOCODE, "- [", "still - [")
    outcome = abstract(memory, recorder)
    (failure,) = outcome.failures
    assert failure.raw == ["- [", "still - ["]
    assert outcome.written == []
    assert memory.concepts == before.concepts


def test_pseudocode_without_tags_is_repaired_then_recorded() -> None:
    memory = small_memory()
    recorder = Recorder("the rule: flip it", "still no tags")
    outcome = abstract(memory, recorder)
    (failure,) = outcome.failures
    assert failure.stage == "pseudocode"
    assert failure.raw == ["the rule: flip it", "still no tags"]
    assert "expected <pseudocode>...</pseudocode> and <summary>...</summary>" in recorder.last(1)
    assert len(recorder.received) == 2  # the concept step is never reached
    assert "task-7" not in memory.solutions
    assert outcome.written == []


def test_a_conflicting_rewrite_is_reported_not_applied() -> None:
    memory = small_memory()
    answer = fenced("- name: recolor object\n  kind: structure\n  description: Something else.")
    outcome = abstract(memory, Recorder(PSEUDOCODE, answer))
    recolor = memory.find("recolor object")
    assert recolor is not None and recolor.kind == "routine"
    assert recolor.description == "Paint an object with a new color."
    assert any("kind: kept 'routine'" in c for c in outcome.conflicts)
    assert any("description: kept" in c for c in outcome.conflicts)


def test_normalize_item_maps_model_spellings_onto_the_ontology() -> None:
    item = normalize_item(
        {
            "Title": "count cells",
            "kind": "routine",
            "subtype": "intermediate",
            "relevance_cues": "many small cells",
            "notes": [{"use": "np.count_nonzero"}, None],
            "parameters": {"grid": "grid", "color": "color"},
            "output": "int",
        }
    )
    assert item == {
        "name": "count cells",
        "kind": "routine",
        "routine_subtype": "intermediate",
        "cues": ["many small cells"],
        "implementation": ["use: np.count_nonzero"],
        "parameters": [{"name": "grid", "type": "grid"}, {"name": "color", "type": "color"}],
        "output_type": "int",
    }
    assert normalize_item("recolor object") == {"name": "recolor object"}
    assert normalize_item({"name": "x", "parameters": "grid (grid): input"})["parameters"] == [
        {"name": "grid", "type": "grid", "description": "input"}
    ]
    with pytest.raises(OutputError, match="expected a mapping or a name, got list"):
        normalize_item([1, 2])


def test_parse_concepts_accepts_json_and_a_concepts_key() -> None:
    memory = small_memory()
    text = (
        '```json\n{"concepts": [{"name": "recolor objects"}, '
        '{"name": "blob", "kind": "structure"}]}\n```'
    )
    concepts, errors = parse_concepts(text, memory)
    assert errors == []
    assert [(c.name, c.kind) for c in concepts] == [
        ("recolor object", "routine"),
        ("blob", "structure"),
    ]
    # parsing never changes the memory (typedefs are harvested into a scratch copy)
    inline = fenced("- name: keep\n  kind: routine\n  output_type: 'mask := list[list[bool]]'")
    parse_concepts(inline, memory)
    assert "mask" not in memory.type_names()


def test_unknown_format_is_a_clear_error() -> None:
    with pytest.raises(
        RegistryError, match=r"unknown memory format 'yaml'.*known: cheatsheet, oe, ps"
    ):
        ABSTRACTORS.create("yaml")
