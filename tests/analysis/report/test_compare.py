"""Per-task wins and losses between two runs."""

from __future__ import annotations

from pathlib import Path

from arcmemo.analysis.report.compare import compare
from arcmemo.analysis.report.load import load_run


def test_compare_on_shared_tasks(arc_memory_run: Path, arc_baseline_run: Path) -> None:
    main, other = load_run(arc_memory_run), load_run(arc_baseline_run)
    other.results = [r for r in other.results if r.task_id != "ca8de6ea"]
    result = compare(main, other)
    assert sorted(result.wins) == ["00576224", "66e6c45b", "e345f17b"]
    assert result.losses == ["bbb1b8b6"]
    assert result.only_here == ["ca8de6ea"] and result.only_there == []
