"""Memory files: precise load errors, read-only loading, atomic locked saves, migrations."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path

import pytest

from arcmemo import Concept, Memory, MemoryFileError
from arcmemo.memory import MemorySaveError, TypeDef
from arcmemo.memory.schema import SCHEMA_VERSION
from arcmemo.memory.store import dump_memory, editing

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "memory"


def _copy_fixture(name: str, folder: Path) -> Path:
    target = folder / name
    shutil.copyfile(FIXTURES / name, target)
    return target


@pytest.mark.parametrize(
    ("fixture", "place", "expected"),
    [
        ("bad_truncated.json", "at line 9 column 51", "not valid JSON"),
        ("bad_truncated.json", "at line 9", "looks truncated"),
        ("bad_wrong_type.json", "at $.concepts[0].cues", "Input should be a valid list"),
        ("bad_unknown_kind.json", "at $.concepts[0].kind", "'structure' or 'routine'"),
        ("bad_unknown_kind.json", "at $.concepts[0].kind", 'got "procedure"'),
        (
            "bad_dangling_type.json",
            "at $.concepts[0].parameters[1].type",
            "type 'color scheme' (in 'recolor object') is not defined in 'types'",
        ),
        (
            "bad_duplicate_ids.json",
            "at $.concepts[1].name",
            "duplicate concept id 'recolor-object'",
        ),
        ("bad_not_object.json", "at $", "expected a JSON object, got list"),
        ("bad_future_version.json", "at $.schema_version", "schema_version 99 is not supported"),
    ],
)
def test_bad_files_are_reported_with_file_and_place(
    tmp_path: Path, fixture: str, place: str, expected: str
) -> None:
    path = _copy_fixture(fixture, tmp_path)
    before = path.read_bytes()
    with pytest.raises(MemoryFileError) as caught:
        Memory.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: invalid memory file")
    assert place in message
    assert expected in message
    # A failed load never modifies (or creates) anything.
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [fixture]


def test_error_lists_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    path.write_text('{"schema_version": 1, "concepts": [{"name": "a", "kind": "x"}, 3]}')
    with pytest.raises(MemoryFileError) as caught:
        Memory.load(path)
    places = [where for where, _ in caught.value.problems]
    assert "$.concepts[0].kind" in places
    assert "$.concepts[1]" in places


def test_missing_file_and_directory_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(MemoryFileError, match="does not exist"):
        Memory.load(tmp_path / "absent.json")
    with pytest.raises(MemoryFileError, match="cannot be read"):
        Memory.load(tmp_path)


def test_non_utf8_file_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin.json"
    path.write_bytes(b'{"domain": "caf\xe9"}')
    with pytest.raises(MemoryFileError, match="byte 15: not UTF-8 text"):
        Memory.load(path)


def test_valid_fixture_loads() -> None:
    memory = Memory.load(FIXTURES / "valid_small.json")
    assert [c.id for c in memory.concepts] == ["recolor-object"]


def test_save_load_round_trip_is_byte_stable(small_memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    small_memory.save(path)
    loaded = Memory.load(path)
    assert loaded == small_memory
    loaded.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_backup_holds_the_previous_version(small_memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    small_memory.save(path)
    first = path.read_bytes()
    assert not (tmp_path / "m.json.bak").exists()
    small_memory.add(Concept(name="rotate grid", kind="routine"))
    small_memory.save(path)
    assert (tmp_path / "m.json.bak").read_bytes() == first
    assert Memory.load(path).find("rotate grid") is not None


def test_crash_between_write_and_rename_keeps_old_file(
    small_memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.json"
    small_memory.save(path)
    before = path.read_bytes()
    small_memory.add(Concept(name="rotate grid", kind="routine"))

    def crash(source: str, target: str) -> None:
        assert Path(source).read_text() == dump_memory(small_memory)  # new bytes were written
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        small_memory.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert Memory.load(path).find("rotate grid") is None
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _add_concepts(path: str, worker: int, count: int) -> None:
    for index in range(count):
        with editing(Path(path)) as memory:
            memory.add(Concept(name=f"concept {worker} {index}", kind="routine"))


def _save_repeatedly(path: str, worker: int, count: int) -> None:
    memory = Memory(domain=f"worker {worker}")
    for index in range(count):
        memory.add(Concept(name=f"item {worker} {index}", kind="structure"))
        memory.save(Path(path))


def _run_workers(target, path: Path, workers: int, count: int) -> None:
    context = multiprocessing.get_context("fork")
    processes = [
        context.Process(target=target, args=(str(path), worker, count)) for worker in range(workers)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0


@pytest.mark.slow  # four processes
def test_concurrent_read_modify_write_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    Memory().save(path)
    _run_workers(_add_concepts, path, workers=4, count=5)
    memory = Memory.load(path)
    assert len(memory.concepts) == 20
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow  # four processes
def test_concurrent_saves_leave_a_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    _run_workers(_save_repeatedly, path, workers=4, count=10)
    memory = Memory.load(path)  # valid, and exactly one writer's complete final state
    worker = int(memory.domain.split()[1])
    assert [c.name for c in memory.concepts] == [f"item {worker} {i}" for i in range(10)]
    Memory.load(tmp_path / "shared.json.bak")


def test_published_v0_memory_is_migrated(tmp_path: Path) -> None:
    path = _copy_fixture("published_v0.json", tmp_path)
    before = path.read_bytes()
    memory = Memory.load(path)
    assert path.read_bytes() == before  # migration happens in memory only
    assert memory.schema_version == SCHEMA_VERSION and memory.conventions == "arcmemo"
    assert [c.name for c in memory.concepts] == ["recolor object", "slide object", "region grid"]
    recolor = memory.find("recolor object")
    assert recolor is not None
    # "Recolor Objects" was folded in: sources accumulate, cues de-duplicated
    assert recolor.provenance.sources == ["4093f84a", "prelim", "228f6490"]
    assert recolor.cues == ["objects change color but keep their shape", "color depends on size"]
    # inline multi-word typedefs are harvested; undefined published types become opaque
    types = {t.name: t.definition for t in memory.types}
    assert types["stopping criteria"] == "Callable[[object, grid], bool]"
    assert types["color scheme"] == "color | Callable[[object], color]"
    assert types["grid"] == "Any"
    assert types["direction"] == "Literal['up', 'down', 'left', 'right']"
    slide = memory.find("slide object")
    assert slide is not None
    assert slide.parameters[0].name == "object | object - the object to move"
    assert slide.parameters[2].type == "stopping criteria"
    assert memory.solutions["4093f84a"].program.startswith("def main")
    memory.save(tmp_path / "v1.json")
    assert Memory.load(tmp_path / "v1.json") == memory


def test_file_without_version_that_is_not_published_format(tmp_path: Path) -> None:
    path = tmp_path / "noversion.json"
    path.write_text('{"concepts": [{"name": "a", "kind": "routine"}]}')
    with pytest.raises(MemoryFileError, match='add "schema_version": 1'):
        Memory.load(path)


@pytest.mark.parametrize("version", [-1, "1", True])
def test_nonsense_versions_are_rejected(tmp_path: Path, version: object) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"schema_version": version}))
    with pytest.raises(MemoryFileError, match=r"at \$\.schema_version: schema_version"):
        Memory.load(path)


def test_save_refuses_a_memory_that_would_not_load(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    memory = Memory()
    memory.add(Concept(name="recolor object", kind="routine"))
    memory.save(path)
    before = path.read_bytes()
    # Bypass the write rules: a second entry with the same id.
    memory.concepts.append(Concept(name="Recolor Objects", kind="routine"))
    with pytest.raises(MemorySaveError) as caught:
        memory.save(path)
    assert "not saved: the memory would not load again" in str(caught.value)
    assert "duplicate concept id 'recolor-object'" in str(caught.value)
    assert path.read_bytes() == before
    with pytest.raises(MemorySaveError), editing(path) as edited:
        edited.types.append(TypeDef(name="scheme", definition="dict[color, color]"))
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{}", "no schema_version and no 'concepts'"),
        (
            '{"train": [{"input": [[1]], "output": [[2]]}], "test": [{"input": [[1]]}]}',
            "top-level keys: test, train",
        ),
        ('{"concepts": {}, "lessons": []}', "published (version 0) format, which has no key "),
    ],
)
def test_file_without_version_must_look_like_a_published_memory(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "not-a-memory.json"
    path.write_text(text)
    with pytest.raises(MemoryFileError) as caught:
        Memory.load(path)
    assert str(caught.value).startswith(f"{path}: invalid memory file")
    assert expected in str(caught.value)


def test_unknown_top_level_key_of_a_versioned_memory_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"schema_version": 1, "concept": []}')
    with pytest.raises(MemoryFileError, match=r"m\.json: invalid memory file\n  at \$\.concept"):
        Memory.load(path)


def test_version_1_memory_gets_arcmemo_s_conventions(tmp_path: Path) -> None:
    path = tmp_path / "v1.json"
    path.write_text(
        '{"schema_version": 1, "concepts": [{"name": "draw objects", "kind": "routine"}]}'
    )
    memory = Memory.load(path)
    assert (memory.schema_version, memory.conventions) == (SCHEMA_VERSION, "arcmemo")
    assert memory.find("draw object") is memory.concepts[0]  # plural-insensitive, as before


def test_schema_2_memory_loads_with_no_functions_and_saves_as_3(tmp_path: Path) -> None:
    path = tmp_path / "v2.json"
    path.write_text(
        json.dumps(
            {
                "schema_version": 2,
                "conventions": "arcmemo",
                "concepts": [{"name": "crop to object", "kind": "routine"}],
            }
        )
    )
    memory = Memory.load(path)
    assert memory.schema_version == SCHEMA_VERSION and memory.concepts[0].functions == []
    memory.save(tmp_path / "v4.json")
    assert json.loads((tmp_path / "v4.json").read_text())["schema_version"] == SCHEMA_VERSION


def test_a_version_3_memory_loads_with_no_citations_counted(tmp_path: Path) -> None:
    path = tmp_path / "v3.json"
    stats = {"selected": 2, "selected_solved": 1}
    concept = {"name": "zigzag marker", "kind": "routine", "stats": stats}
    path.write_text(json.dumps({"schema_version": 3, "concepts": [concept]}))
    memory = Memory.load(path)
    assert memory.schema_version == SCHEMA_VERSION == 4
    assert (memory.concepts[0].stats.selected, memory.concepts[0].stats.cited) == (2, 0)
    assert memory.concepts[0].stats.cited_solved == 0


def test_two_library_functions_with_one_import_name_are_refused(tmp_path: Path) -> None:
    function = {"name": "crop", "source": "def crop(grid):\n    return grid\n"}
    path = tmp_path / "clash.json"
    path.write_text(
        json.dumps(
            {
                "schema_version": 3,
                "concepts": [
                    {"name": "crop to object", "kind": "routine", "functions": [function]},
                    {"name": "crop to box", "kind": "routine", "functions": [function]},
                ],
            }
        )
    )
    with pytest.raises(
        MemoryFileError,
        match=r"concepts\[1\]\.functions\[0\]\.name.*'crop' is already defined by 'crop to object'",
    ):
        Memory.load(path)
