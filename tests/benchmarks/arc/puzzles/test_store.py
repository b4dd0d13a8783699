"""Puzzle folders: layout, ARC loading, metadata, failure records, re-checking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arcmemo.benchmarks.arc import load_path
from arcmemo.benchmarks.arc.puzzles.generate import (
    Attempt,
    ConceptOutcome,
    concept_version,
    routine_hints,
)
from arcmemo.benchmarks.arc.puzzles.recheck import recheck_folder, recheck_puzzle
from arcmemo.benchmarks.arc.puzzles.store import (
    PuzzleStoreError,
    read_meta,
    resolve_puzzle,
    task_paths,
    write_outcome,
)
from arcmemo.benchmarks.arc.puzzles.verify import PuzzleConfig, verify_module
from arcmemo.memory.schema import Memory
from arcmemo.sandbox import Sandbox
from tests.support import puzzle_modules as modules


def write(
    folder: Path,
    memory: Memory,
    sandbox: Sandbox,
    sources: list[str],
    seeds: list[int],
    config: PuzzleConfig | None = None,
) -> list[Path]:
    config = config or PuzzleConfig()
    concept = memory.find("reflect grid")
    assert concept is not None
    hints = routine_hints(concept)
    outcome = ConceptOutcome(concept_id=concept.id, concept_name=concept.name)
    for round_, source in enumerate(sources):
        puzzles = verify_module(sandbox, source, seeds, config=config, hints=hints)
        outcome.attempts.append(
            Attempt(round=round_, answer=f"```python\n{source}```", source=source, puzzles=puzzles)
        )
    return write_outcome(
        folder,
        concept,
        outcome,
        model="scripted:test",
        memory="memory.json",
        config=config,
        hints=hints,
        wanted=len(seeds),
    )


@pytest.fixture
def folder(tmp_path: Path, arc_memory: Memory, sandbox: Sandbox) -> Path:
    out = tmp_path / "puzzles"
    write(out, arc_memory, sandbox, [modules.DISCARDS_RESULT, modules.GOOD], [0, 1])
    return out


def test_layout_task_files_at_top_metadata_and_programs_beside(folder: Path) -> None:
    assert sorted(p.name for p in folder.glob("*.json")) == [
        "reflect-grid-0.json",
        "reflect-grid-1.json",
    ]
    assert sorted(p.name for p in (folder / "meta").iterdir()) == [
        "reflect-grid-0.json",
        "reflect-grid-1.json",
    ]
    program = (folder / "programs" / "reflect-grid-0.py").read_text()
    assert program == modules.GOOD
    assert not (folder / "failures").exists()
    assert not list(folder.rglob("*.tmp"))  # atomic writes leave no temporaries


def test_the_arc_loader_reads_the_puzzles_and_nothing_else(folder: Path) -> None:
    tasks = load_path(folder)
    assert [t.id for t in tasks] == ["reflect-grid-0", "reflect-grid-1"]
    assert all(len(t.train) == 4 and len(t.test_inputs) == 1 for t in tasks)
    raw = json.loads((folder / "reflect-grid-0.json").read_text())
    assert set(raw) == {"train", "test"}


def test_metadata_traces_the_puzzle_to_its_concept(folder: Path, arc_memory: Memory) -> None:
    meta = read_meta(folder / "reflect-grid-1.json")
    concept = arc_memory.find("reflect grid")
    assert concept is not None
    assert (meta.puzzle_id, meta.concept_id, meta.seed, meta.attempt) == (
        "reflect-grid-1",
        "reflect-grid",
        1,
        1,
    )
    assert meta.concept_version == concept_version(concept)
    assert meta.concept_updated_at == concept.provenance.updated_at
    assert meta.generator_source == modules.GOOD and meta.model == "scripted:test"
    assert meta.report.passed and meta.hints.returns_grid is True


def test_concept_version_changes_with_content_not_with_usage(arc_memory: Memory) -> None:
    concept = arc_memory.find("reflect grid")
    assert concept is not None
    used = concept.model_copy(deep=True)
    used.stats.selected += 3
    edited = concept.model_copy(update={"description": "Mirror it."})
    assert concept_version(used) == concept_version(concept) != concept_version(edited)


def test_a_failed_concept_gets_a_failure_record_with_every_attempt(
    tmp_path: Path, arc_memory: Memory, sandbox: Sandbox
) -> None:
    out = tmp_path / "failed"
    sources = [modules.IGNORES_CONCEPT, modules.LOOPS]
    written = write(out, arc_memory, sandbox, sources, [0], PuzzleConfig(timeout_s=0.5))
    assert written == [] and not list(out.glob("*.json"))
    record = json.loads((out / "failures" / "reflect-grid.json").read_text())
    assert [a["round"] for a in record["attempts"]] == [0, 1]
    first, second = (a["reports"][0]["checks"] for a in record["attempts"])
    assert {c["name"]: c["status"] for c in first}["exercises_concept"] == "failed"
    assert {c["name"]: c["status"] for c in second}["runs"] == "failed"


def test_recheck_passes_untouched_puzzles(folder: Path, sandbox: Sandbox) -> None:
    results = recheck_folder(sandbox, task_paths(folder))
    assert [r.passed for r in results] == [True, True]


def test_recheck_fails_an_edited_task_file(folder: Path, sandbox: Sandbox) -> None:
    path = folder / "reflect-grid-0.json"
    raw = json.loads(path.read_text())
    raw["train"][0]["output"][0][0] = (raw["train"][0]["output"][0][0] + 1) % 10
    path.write_text(json.dumps(raw))
    result = recheck_puzzle(sandbox, path)
    assert result.report is not None and result.report.passed
    assert not result.passed and "differs from the file" in result.problems[0]


def test_recheck_fails_an_edited_generator(folder: Path, sandbox: Sandbox) -> None:
    path = folder / "meta" / "reflect-grid-0.json"
    meta = json.loads(path.read_text())
    meta["generator_source"] = modules.DISCARDS_RESULT
    path.write_text(json.dumps(meta))
    result = recheck_puzzle(sandbox, folder / "reflect-grid-0.json")
    assert not result.passed and result.report is not None
    assert result.report.summary() == "failed: exercises_concept"


def test_recheck_names_missing_or_bad_metadata(folder: Path, sandbox: Sandbox) -> None:
    (folder / "meta" / "reflect-grid-0.json").unlink()
    missing = recheck_puzzle(sandbox, folder / "reflect-grid-0.json")
    assert not missing.passed and "meta/reflect-grid-0.json: does not exist" in missing.problems[0]
    (folder / "meta" / "reflect-grid-1.json").write_text('{"seed": "x"}')
    bad = recheck_puzzle(sandbox, folder / "reflect-grid-1.json")
    assert "invalid puzzle metadata" in bad.problems[0] and "seed" in bad.problems[0]


def test_resolve_puzzle_and_task_paths_errors(folder: Path, tmp_path: Path) -> None:
    assert resolve_puzzle(folder / "reflect-grid-0") == folder / "reflect-grid-0.json"
    assert resolve_puzzle(folder / "reflect-grid-0.json") == folder / "reflect-grid-0.json"
    with pytest.raises(PuzzleStoreError, match="no such puzzle"):
        resolve_puzzle(folder / "nothing")
    with pytest.raises(PuzzleStoreError, match=r"no <id>\.json puzzle files"):
        task_paths(tmp_path / "puzzles" / "meta" / ".." / "programs")
    with pytest.raises(PuzzleStoreError, match="no such puzzle folder"):
        task_paths(tmp_path / "absent")
