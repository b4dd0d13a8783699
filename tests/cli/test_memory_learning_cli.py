"""``arcmemo memory attribute / prune / consolidate`` and the attribution in ``memory stats``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arcmemo.cli.main import cli
from arcmemo.core.records import Attempt, Selection, Step, TaskResult
from arcmemo.memory.schema import (
    Concept,
    ConceptStats,
    LibraryFunction,
    Memory,
    Parameter,
    Provenance,
)
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.writer import RunWriter
from arcmemo.signals.base import WRITE_SIGNALS

SPLIT_PROGRAM = "def transform(grid):\n    return split_grid(grid, divider_color=5)[0]\n"
FLIP_PROGRAM = "def transform(grid):\n    return np.fliplr(grid)  # reflect the grid\n"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["memory", *args])


def routine(name: str, description: str, *params: str, **stats: list[str]) -> Concept:
    return Concept(
        name=name,
        kind="routine",
        description=description,
        parameters=[Parameter(name=p) for p in params],
        provenance=Provenance(sources=["seed-task"]),
        stats=ConceptStats(**stats),
    )


def memory_file(tmp_path: Path) -> Path:
    memory = Memory(
        concepts=[
            routine(
                "split grid", "cut the grid into regions at the divider lines", "divider color"
            ),
            routine("split regions", "cut the grid into regions along the divider lines"),
            routine("reflect grid", "mirror the grid left to right"),
            # Its parameter shares the name of ARC's entry point, which every program
            # defines: no evidence, so it stays unused on the solved tasks below.
            routine("recolor object", "paint each object with a new color", "transform"),
        ]
    )
    path = tmp_path / "memory.json"
    memory.save(path)
    return path


def result(task_id: str, program: str, verified: bool, shown: list[str]) -> TaskResult:
    step = Step(round=0, completion=program, candidate=program, verified=verified, concepts=shown)
    return TaskResult(
        task_id=task_id,
        solved=verified,
        selection=Selection(selector="llm", selected=shown),
        attempts=[Attempt(index=0, steps=[step])],
    )


def fixed_run(
    tmp_path: Path, memory: Path, results: list[TaskResult] | None = None, **fields: object
) -> Path:
    out = tmp_path / "run"
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        model="scripted:solver",
        memory=memory,
        selector="llm",
        write_signal=WRITE_SIGNALS.spec("train"),
        out=out,
        **fields,
    )
    writer = RunWriter(out)
    writer.start(config)
    writer.append_results(
        results
        or [
            result("t1", SPLIT_PROGRAM, True, ["split grid", "recolor object"]),
            result("t2", FLIP_PROGRAM, False, ["reflect grid"]),
            result("t3", FLIP_PROGRAM, True, ["recolor object"]),
        ]
    )
    return out


def test_attribute_folds_a_fixed_run_once(tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    rundir = fixed_run(tmp_path, path)
    dry = run("attribute", str(rundir), "--memory", str(path), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "3 tasks, 2 confirmed" in dry.output
    assert "1 confirmed solves used a shown concept (50%)" in dry.output
    assert "t1: split grid: helpful (name words split, grid; parameter divider color)" in dry.output
    assert "t2: reflect grid: harmful" in dry.output
    assert Memory.load(path).find("split grid").stats.helpful == []  # type: ignore[union-attr]
    done = run("attribute", str(rundir), "--memory", str(path))
    assert done.exit_code == 0, done.output
    memory = Memory.load(path)
    stats = {c.name: c.stats for c in memory.concepts}
    assert stats["split grid"].helpful == ["t1"] and stats["split grid"].selected == 1
    assert stats["recolor object"].unused == ["t1", "t3"]
    assert stats["recolor object"].selected_solved == 2
    assert stats["reflect grid"].harmful == ["t2"]
    again = run("attribute", str(rundir), "--memory", str(path))
    assert again.exit_code == 1 and "already folded" in again.output
    shown = run("stats", str(path))
    assert "attribution: 1 helpful, 2 unused, 1 harmful verdicts over 3 concepts" in shown.output
    assert re.search(r"^  split grid +1/0/0  t1$", shown.output, re.MULTILINE), shown.output


def test_attribute_refuses_an_online_run(tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    rundir = fixed_run(tmp_path, path, update="online")
    refused = run("attribute", str(rundir), "--memory", str(path))
    assert refused.exit_code == 1 and "already wrote" in refused.output
    assert "Traceback" not in refused.output


def test_prune_retires_and_diff_shows_it(tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    memory = Memory.load(path)
    memory.concepts[3].stats = ConceptStats(unused=["a", "b"], harmful=["c"])
    memory.save(path)
    dry = run("prune", str(path), "--min-evidence", "3", "--dry-run")
    assert dry.exit_code == 0 and "retire 'recolor object'" in dry.output
    assert Memory.load(path).concepts[3].retired is None
    out = tmp_path / "pruned.json"
    done = run("prune", str(path), "--min-evidence", "3", "--out", str(out))
    assert done.exit_code == 0 and "1 concepts retired" in done.output
    diff = run("diff", str(path), str(out))
    assert "~ recolor object (retired)" in diff.output
    assert "recolor object" not in Memory.load(out).render("selection")
    stats = run("stats", str(out))
    assert "retired concepts: 1 (recolor object)" in stats.output
    assert run("prune", str(path), "--min-evidence", "0").exit_code == 2


def test_consolidate_dry_run_then_apply_and_review(tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    dry = run("consolidate", str(path), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.output.startswith("merge 'split regions' into 'split grid' (name ")
    assert len(Memory.load(path).concepts) == 4
    out = tmp_path / "merged.json"
    done = run("consolidate", str(path), "--out", str(out))
    assert done.exit_code == 0 and "1 merges, 3 concepts" in done.output
    diff = run("diff", str(path), str(out))
    assert "- split regions (routine): merged into split grid" in diff.output
    assert run("consolidate", str(out), "--dry-run").output == "no near-duplicates found\n"
    bad = run("consolidate", str(path), "--embedder", "nope")
    assert bad.exit_code == 2 and "unknown embedder" in bad.output


def test_edits_refuse_a_memory_a_live_run_is_writing(tmp_path: Path) -> None:
    # One memory file, one writer: prune/consolidate/attribute would otherwise load, edit
    # and save over the updates of an online run writing the same file.
    from arcmemo.core.files import held_lock
    from arcmemo.run.session import writer_lock_path

    path = memory_file(tmp_path)
    memory = Memory.load(path)
    memory.concepts[3].stats = ConceptStats(unused=["a", "b"], harmful=["c"])
    memory.save(path)
    before = path.read_bytes()
    with held_lock(writer_lock_path(path), holder="pid 1, run directory runs/online"):
        for args in (["prune", str(path), "--min-evidence", "3"], ["consolidate", str(path)]):
            refused = run(*args)
            assert refused.exit_code == 1, refused.output
            assert "is being written by another live run (pid 1, run directory runs/online)" in (
                refused.output
            )
            assert len(refused.output.strip().splitlines()) == 1
        assert path.read_bytes() == before
        # A dry run reads only, but not a file that moves under it.
        assert run("prune", str(path), "--min-evidence", "3", "--dry-run").exit_code == 1
    assert run("prune", str(path), "--min-evidence", "3").exit_code == 0


CROP_PROGRAM = (
    "from arcmemo_library import crop_to_object\n\n"
    "def transform(grid):\n    return crop_to_object(grid)\n"
)


def test_credit_by_import_reaches_attribute_stats_and_prune(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    crop = LibraryFunction(
        name="crop_to_object", source="def crop_to_object(grid):\n    return grid\n"
    )
    # "bounding box" has no word in the program: only its import credits it. "crop object"
    # has every word in it, but its own code was not imported, so it gets no credit.
    Memory(
        concepts=[
            routine("bounding box", "the box around an object").model_copy(
                update={"functions": [crop]}
            ),
            routine("crop object", "cut an object out").model_copy(
                update={
                    "functions": [
                        LibraryFunction(
                            name="cut_cells", source="def cut_cells(g):\n    return g\n"
                        )
                    ]
                }
            ),
        ]
    ).save(path)
    shown = ["bounding box", "crop object"]
    results = [result(t, CROP_PROGRAM, t != "t3", shown) for t in ("t1", "t2", "t3")]
    out = fixed_run(tmp_path, path, results)
    done = run("attribute", str(out), "--memory", str(path))
    assert done.exit_code == 0, done.output
    assert "t1: bounding box: helpful (imports crop_to_object)" in done.output
    assert "t1: crop object: unused" in done.output
    memory = Memory.load(path)
    assert memory.concepts[0].functions[0].imported_by == ["t1", "t2"]
    stats = run("stats", str(path))
    assert "library: 2 functions in 2 concepts, 0 recorded tests; credit by import: 1 " in (
        stats.output
    )
    assert re.search(r"^  bounding box +2  t1, t2$", stats.output, re.MULTILINE), stats.output
    # With its verdicts replaced by three unused ones, only its imports keep "bounding box"
    # from pruning; "crop object" (three attributed selections, none helpful) is retired.
    memory.concepts[0].stats = ConceptStats(unused=["a", "b", "c"])
    memory.save(path)
    pruned = run("prune", str(path), "--min-evidence", "3", "--dry-run")
    assert pruned.exit_code == 0, pruned.output
    assert "retire 'crop object'" in pruned.output and "bounding box" not in pruned.output


def test_attribute_by_judge_takes_the_judge_models_opinion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))
    path = memory_file(tmp_path)
    rundir = fixed_run(tmp_path, path)
    judge = tmp_path / "judge.yaml"
    # The judge finds "recolor object" used wherever it was shown, and nothing else.
    judge.write_text('"Decide, for each concept": "```yaml\\n- recolor object\\n```"\n')
    missing = run("attribute", str(rundir), "--memory", str(path), "--by", "judge")
    assert missing.exit_code == 1 and "--judge-model" in missing.output
    done = run(
        "attribute", str(rundir), "--memory", str(path), "--by", "judge",
        "--judge-model", f"scripted:{judge}", "--dry-run",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "t1: split grid: unused" in done.output
    assert "t1: recolor object: helpful" in done.output and "aux model: used" in done.output
    assert "t3: recolor object: helpful" in done.output
