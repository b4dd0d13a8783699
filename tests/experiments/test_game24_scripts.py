"""experiments/game24/: each script (baseline, cheatsheet, concepts) runs its setting with a
scripted solver on a sample of six puzzles, scores as the solver was scripted, grows its
memory and ends with the table of the runs so far."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("script", ["baseline", "cheatsheet", "concepts"])
def test_each_experiment_script_runs_its_setting(tmp_path: Path, script: str) -> None:
    solver = ROOT / "tests" / "fixtures" / "scripts" / "game24_solver.py"
    done = subprocess.run(
        ["bash", str(ROOT / "experiments" / "game24" / f"{script}.sh")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}:"
             f"{os.environ['PATH']}", "SOLVER": f"scripted:{solver}", "RUNS": str(tmp_path),
             "GAME24_SAMPLE": "6"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = tmp_path / f"game24-{script}"
    summary = json.loads((run / "summary.json").read_text())
    results = [json.loads(line) for line in (run / "results.jsonl").open()]
    even = [r["task_id"] for r in results if sum(map(int, r["task_id"].split("-"))) % 2 == 0]
    assert summary["n_tasks"] == 6 and summary["pass@1"] == pytest.approx(len(even) / 6)
    assert script.replace("baseline", "no memory").split()[0] in done.stdout
    if script != "baseline":
        memory = json.loads((tmp_path / f"memory-game24-{script}.json").read_text())
        grown = memory.get("cheatsheet") or [c["name"] for c in memory.get("concepts", [])]
        assert even and grown  # written from the solved puzzles
