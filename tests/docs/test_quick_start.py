"""Every command of README's quick start and docs/getting-started.md that needs no key, no
network and no optional extra runs as written (in a scratch folder)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```bash\n(.*?)```", re.S)
# What the environment provides already or what needs a key, the network or an extra.
SKIPPED = (
    re.compile(r"^(python -m venv|\. \.venv|pip install|python -m pytest)"),
    re.compile(r"local:smollm2|data fetch|aime"),
)


def quick_start_text() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Quick start")
    quick = readme[start : readme.index("Install the development tools", start)]
    return quick + (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")


def commands() -> list[str]:
    found = []
    for block in BLOCK.findall(quick_start_text()):
        for line in block.strip().splitlines():
            for part in line.split(" && "):
                part = part.strip()
                if part and not any(rule.search(part) for rule in SKIPPED):
                    found.append(part)
    return found


def test_the_quick_start_names_the_demo_first_then_the_methods_dry_run() -> None:
    found = commands()
    assert found[0].startswith("arcmemo demo")
    method = next(c for c in found if "--dry-run" in c)
    assert "--select llm" in method and "--update online" in method


@pytest.mark.slow
def test_every_command_that_needs_no_key_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    for command in dict.fromkeys(commands()):
        args = shlex.split(command)
        assert args[0] == "arcmemo", command
        done = subprocess.run(
            [sys.executable, "-m", "arcmemo", *args[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
    assert (tmp_path / "runs" / "demo" / "run" / "report.html").is_file()
    assert (tmp_path / "runs" / "method" / "estimate.json").is_file() or list(
        (tmp_path / "runs" / "method").rglob("estimate*.json")
    )
