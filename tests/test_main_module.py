"""``python -m arcmemo`` is the ``arcmemo`` command."""

from __future__ import annotations

import subprocess
import sys


def test_python_dash_m_arcmemo_runs_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arcmemo", "memory", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: arcmemo memory")
