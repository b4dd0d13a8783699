"""The save check that validates only the concepts it has not validated before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from arcmemo.memory import MemorySaveError, store
from arcmemo.memory import checked as checked_module
from arcmemo.memory.checked import vouched_dump
from arcmemo.memory.edits import VERIFY_VARIABLE
from arcmemo.memory.schema import Concept, Lesson, Memory, Parameter, TypeDef
from arcmemo.memory.store import checked_dump, dump_memory
from arcmemo.memory.synthetic import synthetic_memory


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the concepts the check validates, in order (the suite's cross-check off:
    it parses every vouched text whole)."""
    monkeypatch.delenv(VERIFY_VARIABLE)
    monkeypatch.setattr(checked_module, "_vouched", frozenset())  # other tests' fragments
    names: list[str] = []
    real = checked_module._loads_as_is

    def counted(fragment: str, concept: Concept) -> bool:
        names.append(concept.name)
        return real(fragment, concept)

    monkeypatch.setattr(checked_module, "_loads_as_is", counted)
    return names


def _memories() -> list[Memory]:
    full = synthetic_memory(60)
    full.add_lesson(Lesson(situation="a grid with a frame", suggestion="crop the frame"))
    full.add(Concept(name="färbe Objekt \u2013 «neu»", kind="routine", cues=["tab\there"]))
    return [Memory(), Memory(domain="aime", cheatsheet='x\n"y"'), full]


@pytest.mark.parametrize("memory", _memories(), ids=["empty", "no concepts", "grown"])
def test_the_vouched_text_is_the_memory_s_dump(memory: Memory) -> None:
    assert vouched_dump(memory) == dump_memory(memory)
    assert vouched_dump(memory) == dump_memory(memory)  # from the kept fragments too


def test_a_second_check_validates_only_what_changed(validated: list[str]) -> None:
    memory = synthetic_memory(40)
    checked_dump(memory, Path("m.json"))
    assert len(validated) == 40
    validated.clear()
    checked_dump(memory, Path("m.json"))
    assert validated == []
    memory.concepts[3].cues.append("a new cue")
    memory.add(Concept(name="draw border", kind="routine"))
    text = checked_dump(memory, Path("m.json"))
    assert validated == [memory.concepts[3].name, "draw border"]
    assert text == dump_memory(memory)
    assert Memory.model_validate_json(text).concepts[3].cues[-1] == "a new cue"


def test_a_vouched_save_does_not_parse_the_file_again(
    validated: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    parsed: list[Path] = []
    real = store.parse_memory
    monkeypatch.setattr(store, "parse_memory", lambda t, p: parsed.append(p) or real(t, p))
    memory = synthetic_memory(20)
    memory.save(tmp_path / "m.json")
    memory.concepts[0].description = "changed"
    memory.save(tmp_path / "m.json")
    assert parsed == []
    assert Memory.load(tmp_path / "m.json").concepts[0].description == "changed"


def _bad_name(memory: Memory) -> None:
    memory.concepts[1].name = "---"  # an assignment is not validated


def _shared_id(memory: Memory) -> None:
    memory.concepts.append(memory.concepts[0].model_copy())


def _unknown_type(memory: Memory) -> None:
    memory.concepts[2].parameters = [Parameter(name="p", type="palette")]


def _duplicate_type(memory: Memory) -> None:
    memory.types.append(TypeDef(name=memory.types[0].name, definition="int"))


def _bad_lesson(memory: Memory) -> None:
    memory.lessons.append(Lesson.model_construct(situation="", suggestion="x"))


@pytest.mark.parametrize(
    ("breaks", "message"),
    [
        (_bad_name, "has no letters or digits"),
        (_shared_id, "duplicate concept id"),
        (_unknown_type, "type 'palette'"),
        (_duplicate_type, "duplicate type"),
        (_bad_lesson, "lessons"),
    ],
)
def test_what_would_not_load_is_refused_with_the_full_check_s_words(
    validated: list[str], breaks: Callable[[Memory], None], message: str
) -> None:
    memory = synthetic_memory(20)
    checked_dump(memory, Path("m.json"))  # every fragment is known now
    breaks(memory)
    with pytest.raises(MemorySaveError, match=message) as caught:
        checked_dump(memory, Path("m.json"))
    text = dump_memory(memory)
    with pytest.raises(store.MemoryFileError) as full:
        store.parse_memory(text, Path("m.json"))
    assert caught.value.problems == full.value.problems  # the same places and words


def test_a_name_load_would_clean_is_left_to_the_full_check(validated: list[str]) -> None:
    memory = synthetic_memory(10)
    memory.concepts[0].name = memory.concepts[0].name.replace(" ", "  ")  # loads cleaned
    assert vouched_dump(memory) is None
    assert checked_dump(memory, Path("m.json")) == dump_memory(memory)


def test_a_check_is_no_edit(validated: list[str]) -> None:
    # an edit would drop the relation index and rendered blocks after every save
    from arcmemo.memory import edits

    memory = synthetic_memory(30)
    before = edits.count()
    checked_dump(memory, Path("m.json"))
    checked_dump(memory, Path("m.json"))
    assert edits.count() == before


def test_what_is_not_a_concept_is_left_to_the_full_check(validated: list[str]) -> None:
    class Noted(Concept):
        note: str = "kept apart"

    memory = synthetic_memory(5)
    memory.concepts.append(Noted(name="noted routine", kind="routine"))
    assert vouched_dump(memory) is None
    assert checked_dump(memory, Path("m.json")) == dump_memory(memory)
