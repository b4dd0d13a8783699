"""Pieces of the report's views: grid diffs, comparisons, summary formatting, memory changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from arcmemo.benchmarks.base import TaskResult
from arcmemo.memory.ontology import Memory
from arcmemo.report.load import load_run
from arcmemo.report.views import (
    MemoryIndex,
    as_grid,
    compare,
    grid_view,
    memory_view,
    summary_rows,
    task_status,
)


def test_grid_view_marks_differing_cells() -> None:
    view = grid_view([[1, 2], [3, 4]], [[1, 0], [3, 4]])
    assert view is not None
    assert view.rows == [[(1, False), (2, True)], [(3, False), (4, False)]]
    assert view.n_diff == 1 and view.shape == "2×2" and view.note == ""


def test_grid_view_of_another_shape_marks_cells_outside_and_says_so() -> None:
    view = grid_view([[1, 1, 1]], [[1], [1]])
    assert view is not None
    assert [d for _, d in view.rows[0]] == [False, True, True]
    assert view.note == "shape 1×3, expected 2×1"


def test_non_grids_are_not_drawn() -> None:
    for value in (None, [], [[]], [[1], [1, 2]], [["a"]], [[True]], "12"):
        assert as_grid(value) is None
        assert grid_view(value) is None


def test_summary_rows_format_rates_and_k() -> None:
    rows = dict(
        summary_rows({"n_tasks": 3, "k": 4, "pass@k": 0.5, "maj@k": 1 / 3, "cost_usd": None})
    )
    assert rows["tasks"] == "3"
    assert rows["pass@4"] == "50.0%"
    assert rows["maj@4"] == "33.3%"
    assert rows["cost"] == "unknown"


def test_compare_on_shared_tasks(arc_memory_run: Path, arc_baseline_run: Path) -> None:
    main, other = load_run(arc_memory_run), load_run(arc_baseline_run)
    other.results = [r for r in other.results if r.task_id != "ca8de6ea"]
    result = compare(main, other)
    assert sorted(result.wins) == ["00576224", "66e6c45b", "e345f17b"]
    assert result.losses == ["bbb1b8b6"]
    assert result.only_here == ["ca8de6ea"] and result.only_there == []


def test_memory_changes_from_history_when_the_input_was_overwritten(
    arc_memory_run: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "copy"
    shutil.copytree(arc_memory_run, run_dir)
    raw = json.loads((run_dir / "config.json").read_text())
    raw["memory_out"] = None
    (run_dir / "config.json").write_text(json.dumps(raw))
    run = load_run(run_dir)
    view = memory_view(run, MemoryIndex(run.final_memory))
    assert view is not None and view.before is None
    assert "history" in view.basis
    assert [name for name, _, _ in view.added] == ["corner copy"]
    assert "tile grid" in [name for name, _, _ in view.changed]


def test_memory_index_links_lessons_and_concepts() -> None:
    memory = Memory.model_validate(
        {
            "concepts": [{"name": "Tile Grids", "kind": "routine"}],
            "lessons": [{"situation": "s", "suggestion": "t"}],
        }
    )
    index = MemoryIndex(memory)
    assert index.link("tile grid") == "#mem-tile-grid"
    assert index.link("Lesson 1") == "#mem-lesson-1"
    assert index.link("lesson 2") is None
    assert index.titled_links(["tile-grid"]) == [("Tile Grids", "#mem-tile-grid")]


def test_task_status() -> None:
    assert task_status(TaskResult(task_id="a", solved=True, score=1.0)) == "solved"
    assert task_status(TaskResult(task_id="a", score=0.5)) == "partial"
    assert task_status(TaskResult(task_id="a")) == "unsolved"
    assert task_status(TaskResult(task_id="a", solved=True, error="rate limited")) == "error"
