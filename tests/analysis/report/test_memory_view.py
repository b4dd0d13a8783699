"""The memory section: changes of the run's memory and links from names to its entries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from arcmemo.analysis.report.links import MemoryIndex
from arcmemo.analysis.report.load import load_run
from arcmemo.analysis.report.memory_view import memory_view
from arcmemo.memory.schema import Memory


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


def test_the_memory_section_shows_attribution_counts(arc_memory_run: Path) -> None:
    from arcmemo.analysis.report import render_report

    run = load_run(arc_memory_run)
    final = run.final_memory
    assert final is not None
    view = memory_view(run, MemoryIndex(final))
    assert view is not None and view.attribution
    for name, href, helpful, unused, harmful, retired in view.attribution:
        concept = final.find(name)
        assert concept is not None and href == f"#mem-{concept.id}"
        stats = concept.stats
        assert (helpful, unused, harmful) == (
            len(stats.helpful),
            len(stats.unused),
            len(stats.harmful),
        )
        assert helpful + unused + harmful > 0 and not retired
    html = render_report(run)
    assert 'id="attribution-table"' in html
