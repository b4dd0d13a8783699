"""The scripts of ``experiments/`` under test: loaded as modules, or run with a fake
``arcmemo`` on PATH that logs its calls and writes what the scripts read back (dry-run
estimates, memory files)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path
from types import ModuleType

from tests.support.paths import REPO

ALL = REPO / "experiments" / "all.sh"


def experiment_script(name: str) -> ModuleType:
    """``experiments/<name>.py`` as a module (a fresh one on every call)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "experiments" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Logs each call; a dry run writes an estimate (1-3 calls, $1-$2) into its --out folder; a
# memory command creates its --out file (the scripts copy bootstrapped memories).
FAKE_ARCMEMO = r"""#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
out=""; prev=""
for arg in "$@"; do [ "$prev" = --out ] && out="$arg"; prev="$arg"; done
case " $* " in
  *" --dry-run "*)
    mkdir -p "$out"
    span() { echo "{\"low\": $1, \"high\": $2}"; }
    echo "{\"total\": {\"calls\": $(span 1 3), \"input_tokens\": $(span 1000 2000),"\
      "\"output_tokens\": $(span 10 30), \"cost_usd\": $(span 1 2)}}" > "$out/estimate.json"
    echo "$out/estimate.json" ;;
  "memory "*) [ -n "$out" ] && echo '{"schema_version": 1}' > "$out" ;;
esac
exit 0
"""


def run_all(
    tmp: Path, *args: str, answer: str = "", **env: str
) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "arcmemo"
    fake.write_text(FAKE_ARCMEMO)
    fake.chmod(0o755)
    environment = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": str(tmp),
        "FAKE_LOG": str(tmp / "calls.log"),
        "RUNS": str(tmp / "runs"),
        "BOOTSTRAP": "training",
        **env,
    }
    return subprocess.run(
        ["bash", str(ALL), *args],
        input=answer,
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
