"""Reading run directories for reports: read-only, torn lines, bad files named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arcmemo.analysis.report.load import ReportError, load_run
from arcmemo.run.pipeline import interrupted
from tests.support.report_runs import ARC_TASKS


def _copy(run: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(run, target)
    return target


def test_loads_results_tasks_memory_and_abstraction(arc_memory_run: Path) -> None:
    run = load_run(arc_memory_run)
    assert run.config is not None and run.benchmark is not None
    assert run.benchmark.name == "arc-agi-1"
    assert [r.task_id for r in run.results] == ARC_TASKS
    assert set(run.tasks) == set(ARC_TASKS)
    assert len(run.tasks["e345f17b"].test_outputs) == 2
    assert len(run.snapshot_sizes) == 3  # six tasks, a snapshot every two
    assert run.input_memory is not None and run.input_memory_intact
    assert run.final_memory is run.last_snapshot is not None
    final = run.final_memory
    assert run.snapshot_sizes[-1] == len(final.concepts) + len(final.lessons)
    assert run.final_memory.find("corner copy") is not None
    assert run.input_memory.find("corner copy") is None
    assert {o.task_id for o in run.abstraction} <= set(ARC_TASKS)
    assert set(run.cost_by_task) == set(ARC_TASKS)
    assert run.notes == []


def test_torn_last_line_is_skipped_and_the_file_left_alone(
    arc_memory_run: Path, tmp_path: Path
) -> None:
    run_dir = _copy(arc_memory_run, tmp_path)
    results = run_dir / "results.jsonl"
    results.write_text(results.read_text() + '{"task_id": "half')
    size = results.stat().st_size
    assert len(load_run(run_dir).results) == len(ARC_TASKS)
    assert results.stat().st_size == size


def test_bad_result_line_names_file_and_line(arc_memory_run: Path, tmp_path: Path) -> None:
    run_dir = _copy(arc_memory_run, tmp_path)
    results = run_dir / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    lines[2] = '{"task_id": 5, "attempts": "no"}\n'
    results.write_text("".join(lines))
    with pytest.raises(ReportError, match=r"results\.jsonl, line 3: not a valid task result"):
        load_run(run_dir)


def test_bad_summary_and_config_are_named(arc_memory_run: Path, tmp_path: Path) -> None:
    run_dir = _copy(arc_memory_run, tmp_path)
    (run_dir / "summary.json").write_text("{not json")
    with pytest.raises(ReportError, match=r"summary\.json: not valid JSON"):
        load_run(run_dir)
    (run_dir / "summary.json").unlink()
    (run_dir / "config.json").write_text('{"benchmark": 3}')
    with pytest.raises(ReportError, match=r"config\.json: not a valid run config"):
        load_run(run_dir)


def test_unfinished_run_gets_computed_numbers(arc_memory_run: Path, tmp_path: Path) -> None:
    run_dir = _copy(arc_memory_run, tmp_path)
    (run_dir / "summary.json").unlink()
    run = load_run(run_dir)
    assert run.summary["n_tasks"] == len(ARC_TASKS)
    assert run.summary["score"] == pytest.approx(0.75)
    assert {"by_retry", "strict_by_retry", "oracle@1", "oracle@2"} <= set(run.summary)
    assert any("no summary.json" in note for note in run.notes)


def test_a_stopped_run_says_what_stopped_it(arc_memory_run: Path, tmp_path: Path) -> None:
    run_dir = _copy(arc_memory_run, tmp_path)
    summary = json.loads((run_dir / "summary.json").read_text())
    aborted = interrupted("SIGTERM")
    summary |= {"aborted": aborted, "complete": False}
    (run_dir / "summary.json").write_text(json.dumps(summary))
    assert load_run(run_dir).notes == [f"the run stopped before its end: {aborted}"]
    assert aborted.startswith("interrupted by SIGTERM;")


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="not a run directory"):
        load_run(tmp_path)
    with pytest.raises(ReportError, match="no such run directory"):
        load_run(tmp_path / "missing")


def test_input_memory_overwritten_by_an_online_run_is_not_trusted(
    arc_memory_run: Path, tmp_path: Path
) -> None:
    # an online run without --memory-out saves its memory over --memory
    run_dir = _copy(arc_memory_run, tmp_path)
    raw = json.loads((run_dir / "config.json").read_text())
    raw["memory_out"] = None
    (run_dir / "config.json").write_text(json.dumps(raw))
    run = load_run(run_dir)
    assert run.input_memory is not None
    assert not run.input_memory_intact


def test_only_the_last_snapshot_is_loaded_the_others_are_counted(
    arc_memory_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arcmemo.run.directory.reader import RunDirectory

    rebuilt: list[str] = []
    real = RunDirectory.snapshot_raw
    monkeypatch.setattr(
        RunDirectory,
        "snapshot_raw",
        lambda self, path: rebuilt.append(Path(path).name) or real(self, path),
    )
    run = load_run(arc_memory_run)
    snapshots = RunDirectory(arc_memory_run).snapshots()
    assert [path.name for path in snapshots] == [f"batch-{i:04d}.delta.json" for i in range(3)]
    assert rebuilt == [snapshots[-1].name]
    for path, size in zip(snapshots, run.snapshot_sizes, strict=True):
        memory = RunDirectory(arc_memory_run).snapshot_memory(path)
        assert size == len(memory.concepts) + len(memory.lessons)


def test_an_unreadable_earlier_snapshot_is_named(arc_memory_run: Path, tmp_path: Path) -> None:
    run = _copy(arc_memory_run, tmp_path)
    first = sorted((run / "memory").glob("batch-*.json"))[0]
    first.write_text('{"concepts": [', encoding="utf-8")
    with pytest.raises(ReportError, match=rf"{first}: not a memory snapshot"):
        load_run(run)
