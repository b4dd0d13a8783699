"""The ARC experiment scripts with a fake ``arcmemo`` on PATH (tests/experiments/test_all.py's):
the cheatsheet bootstrap's token cap, oe.sh's Table 1 row, and the paper's whole PS route
(its starting memory and few-shot examples from an arc_memo checkout, written here as small
fixtures in its formats)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.experiments.test_all import FAKE_ARCMEMO

REPO = Path(__file__).resolve().parents[2]
ARC = REPO / "experiments" / "arc"


def run_script(
    tmp: Path, name: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run experiments/arc/NAME with the fake arcmemo; the arcmemo calls it made."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "arcmemo"
    fake.write_text(FAKE_ARCMEMO)
    fake.chmod(0o755)
    log = tmp / "calls.log"
    environment = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": str(tmp),
        "FAKE_LOG": str(log),
        "RUNS": str(tmp / "runs"),
        "BOOTSTRAP": "training",
        "PYTHONPATH": str(REPO),
        **env,
    }
    done = subprocess.run(
        ["bash", str(ARC / name)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    return done, log.read_text().splitlines() if log.exists() else []


def cap_of(call: str) -> str:
    return call.split("--max-tokens ")[1].split()[0]


def test_the_cheatsheet_bootstrap_may_write_4096_tokens(tmp_path: Path) -> None:
    done, calls = run_script(tmp_path, "cheatsheet.sh")
    assert done.returncode == 0, done.stderr
    (bootstrap,) = [c for c in calls if c.startswith("abstract ")]
    assert "--memory-format cheatsheet" in bootstrap and cap_of(bootstrap) == "4096"
    # The other bootstraps keep the aux model's 1,024.
    done, calls = run_script(tmp_path, "ps.sh")
    assert done.returncode == 0, done.stderr
    (bootstrap,) = [c for c in calls if c.startswith("abstract ") and "format ps" in c]
    assert cap_of(bootstrap) == "1024"


def test_the_oe_row_keeps_its_first_selection_and_continual_reselects(tmp_path: Path) -> None:
    done, calls = run_script(tmp_path, "continual.sh")
    assert done.returncode == 0, done.stderr
    runs = {
        c.split("--out ")[1].split()[0].rsplit("/", 1)[1]: c for c in calls if c.startswith("run ")
    }
    assert "--no-reselect" in runs["arc-oe"].split()
    assert "--reselect" not in runs["arc-oe"].split()
    assert "--reselect" in runs["arc-continual"].split()
