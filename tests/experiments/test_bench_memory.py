"""``experiments/bench_memory.py``: each measurement made in several processes, the two
checkouts taking turns, the best reported with the worst beside it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.experiment_scripts import experiment_script

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "experiments" / "bench_memory.py"


def test_rounds_give_the_best_and_the_worst_and_a_failed_round_fails_the_measurement() -> None:
    bench = experiment_script("bench_memory")
    combined = bench._combined([{"seconds": 0.3, "tokens": 9}, {"seconds": 0.2, "tokens": 9}])
    assert combined == {"seconds": 0.2, "worst": 0.3, "tokens": 9}
    assert bench._seconds(combined) == "200.0 ms (300.0 ms)"
    assert bench._combined([{"seconds": 0.2}, {"timeout": 5.0}]) == {"timeout": 5.0}
    assert bench._combined([{"error": "boom"}, {"seconds": 0.2}]) == {"error": "boom"}
    assert bench._per_task({"seconds": 1.0}, {"seconds": 1.64}) == {"seconds": pytest.approx(0.02)}
    assert bench._per_task({"seconds": 1.0}, {"timeout": 5.0}) == {}


def test_both_checkouts_are_measured_in_every_round_taking_turns() -> None:
    old, new = ("old", Path("/old")), ("new", Path("/new"))
    jobs = experiment_script("bench_memory")._schedule(["load", "stats"], [new, old], 3)
    assert [(op, label) for op, label, _ in jobs] == [
        ("load", "new"), ("load", "old"), ("stats", "new"), ("stats", "old"),
        ("load", "old"), ("load", "new"), ("stats", "old"), ("stats", "new"),
        ("load", "new"), ("load", "old"), ("stats", "new"), ("stats", "old"),
    ]  # fmt: skip


def test_each_round_is_a_process_of_its_own(tmp_path: Path) -> None:
    # The "old" checkout is this one, behind a site hook that logs each process it starts.
    log = tmp_path / "order.log"
    sitecustomize = tmp_path / "old" / "sitecustomize.py"
    sitecustomize.parent.mkdir()
    sitecustomize.write_text(
        f"import sys\nsys.path.append({str(REPO)!r})\nopen({str(log)!r}, 'a').write('old\\n')\n",
        encoding="utf-8",
    )
    command = [sys.executable, str(SCRIPT), "--sizes", "20", "--only", "load"]
    command += ["--rounds", "3", "--repeat", "1", "--old", str(sitecustomize.parent)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=REPO)
    row = next(line for line in done.stdout.splitlines() if line.startswith("| 20 | load"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    timed = re.compile(r"^\d+\.\d ms \(\d+\.\d ms\)$")  # best (worst)
    assert timed.match(cells[2]) and timed.match(cells[3]), row
    assert log.read_text(encoding="utf-8").split() == ["old"] * 3  # one process per round
