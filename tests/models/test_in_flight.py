"""Markers of requests in flight, and the requests a dead process left cut off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from arcmemo.models.in_flight import CutOffCall, collect_cut_off, mark_in_flight


def dead_pid() -> int:
    """The pid of a process that has ended."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(child.stdout)


def test_markers_of_dead_processes_are_collected_and_live_ones_stay(tmp_path: Path) -> None:
    folder = tmp_path / "in_flight"
    mine = mark_in_flight(folder, stage="solve", task_id="t1", model="scripted:x")
    gone = mark_in_flight(folder, stage="select", task_id="t2", model="scripted:x")
    call = CutOffCall.model_validate_json(gone.read_text())
    gone.write_text(call.model_copy(update={"pid": dead_pid()}).model_dump_json())
    live = mark_in_flight(folder, stage="retry", task_id="t3", model="scripted:x")
    alive = CutOffCall.model_validate_json(live.read_text())
    live.write_text(alive.model_copy(update={"pid": os.getppid()}).model_dump_json())
    collected = collect_cut_off(folder)
    # This process's own markers are cut off too: a session collects before its requests.
    assert sorted(c.task_id or "" for c in collected) == ["t1", "t2"]
    assert not mine.exists() and not gone.exists() and live.exists()
    assert collect_cut_off(folder) == []
    assert collect_cut_off(tmp_path / "none") == []
