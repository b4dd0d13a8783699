"""Integrations are optional: importing arcmemo (its CLI and Python API included) never
imports the tools they integrate with."""

from __future__ import annotations

import subprocess
import sys


def test_importing_arcmemo_does_not_import_inspect_ai() -> None:
    code = (
        "import sys, arcmemo, arcmemo.cli.main, arcmemo.run.pipeline, arcmemo.integrations\n"
        "assert 'inspect_ai' not in sys.modules, 'inspect_ai was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
