"""Every `$ arcmemo ...` line of the documentation's ```` ```console ```` blocks runs as
written, page by page in an empty folder, with no key: each needs none (`--dry-run`, a
`scripted:` model, `--help`, or a command that calls no model)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docs_blocks import REPO, pages, runnable, shell_words

# Subcommands that call no model, so they may appear in a console block as they are.
NO_MODEL = ("memory", "models", "table", "report", "export", "merge", "select --help", "--help")


def runnable_pages() -> list[Path]:
    return [page for page in pages() if runnable(page)]


def needs_no_key(command: str) -> bool:
    words = command.split()
    rest = " ".join(words[1:])
    return (
        "--dry-run" in words
        or "--help" in words
        or any(w.startswith("scripted:") for w in words)
        or words[1] == "demo"
        or rest.startswith(NO_MODEL)
    )


def test_console_blocks_hold_only_commands_that_need_no_key() -> None:
    assert len(runnable_pages()) >= 2
    for page in runnable_pages():
        for command in runnable(page):
            assert command.startswith("arcmemo "), f"{page.name}: {command}"
            assert needs_no_key(command), f"{page.name}: {command} needs a key or a network"


@pytest.mark.slow
@pytest.mark.parametrize("page", runnable_pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_console_command_runs(page: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    for command in runnable(page):
        done = subprocess.run(
            [sys.executable, "-m", "arcmemo", *shell_words(command)[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{page.name}: {command}\n{done.stderr[-2000:]}"
