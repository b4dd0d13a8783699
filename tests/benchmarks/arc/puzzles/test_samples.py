"""The committed sample puzzles (puzzles/samples) are verified ARC tasks of seed concepts."""

from __future__ import annotations

from pathlib import Path

from arcmemo.benchmarks.arc import load_path
from arcmemo.benchmarks.arc.puzzles.generate import concept_version
from arcmemo.benchmarks.arc.puzzles.recheck import recheck_folder
from arcmemo.benchmarks.arc.puzzles.store import read_meta, task_paths
from arcmemo.memory.schema import Memory
from arcmemo.sandbox import Sandbox
from tests.support.paths import HANDWRITTEN, SAMPLES


def test_every_committed_sample_passes_every_check(sandbox: Sandbox) -> None:
    results = recheck_folder(sandbox, task_paths(SAMPLES))
    assert len(results) >= 8
    failures = {r.puzzle_id: (r.problems, r.report) for r in results if not r.passed}
    assert failures == {}


def test_the_samples_load_as_arc_tasks_and_cover_every_handwritten_concept() -> None:
    tasks = load_path(SAMPLES)
    assert len(tasks) == len(task_paths(SAMPLES))
    concepts = {read_meta(path).concept_id for path in task_paths(SAMPLES)}
    assert concepts == {
        "reflect-grid",
        "rotate-grid",
        "scale-grid",
        "recolor-object",
        "fill-enclosed-region",
        "draw-line",
    }
    assert concepts == {path.stem for path in HANDWRITTEN.glob("*-*.py")}


def test_the_samples_record_their_concept_checks() -> None:
    for path in task_paths(SAMPLES):
        meta = read_meta(path)
        implements = meta.report.check("implements_concept")
        crux = meta.report.check("concept_is_crux")
        assert implements is not None and implements.status == "passed", path
        assert implements.note.startswith("property tests "), path
        assert crux is not None and crux.status == "passed", path
        assert {r.concept_id for r in meta.references} == (
            {p.stem for p in HANDWRITTEN.glob("*-*.py")} - {meta.concept_id}
        ), path


def test_samples_match_the_seed_concepts_and_the_handwritten_modules(arc_memory: Memory) -> None:
    for path in task_paths(SAMPLES):
        meta = read_meta(path)
        concept = arc_memory.find(meta.concept_id)
        assert concept is not None and meta.concept_version == concept_version(concept), path
        handwritten = HANDWRITTEN / f"{meta.concept_id}.py"
        assert meta.generator_source == handwritten.read_text(), path
        program = SAMPLES / "programs" / f"{path.stem}.py"
        assert program.read_text() == meta.generator_source


def test_the_programs_folder_holds_valid_arc_solutions(sandbox: Sandbox) -> None:
    # `arcmemo abstract --from-programs puzzles/samples/programs --data puzzles/samples`
    # accepts only programs whose transform solves their task's train pairs.
    from arcmemo.benchmarks.arc import ArcBenchmark
    from arcmemo.run.bootstrap import items_from_programs

    benchmark = ArcBenchmark()
    try:
        items, rejected = items_from_programs(
            Path(SAMPLES / "programs"), benchmark, split=None, data=str(SAMPLES)
        )
    finally:
        benchmark.close()
    assert rejected == [] and len(items) == len(task_paths(SAMPLES))
