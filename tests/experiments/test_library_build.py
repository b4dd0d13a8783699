"""``experiments/library_build.py`` on the library fixture programs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.library_programs import PROGRAMS, TASKS

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "experiments" / "library_build.py"


def test_the_table_measures_the_fixture_library(tmp_path: Path) -> None:
    numbers = tmp_path / "numbers.json"
    command = [
        sys.executable,
        str(SCRIPT),
        str(PROGRAMS),
        "--data",
        str(TASKS),
        "--json",
        str(numbers),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if "unavailable" in done.stderr:
        import pytest

        pytest.skip(done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, done.stderr
    measured = json.loads(numbers.read_text(encoding="utf-8"))
    assert measured["functions"] == 6 and measured["tests_passed"] == measured["tests"] > 0
    assert measured["passing"] == 3 and measured["tokens_after"] < measured["tokens_before"]
    assert "| programs passing after the refactor | 3/3 |" in done.stdout
