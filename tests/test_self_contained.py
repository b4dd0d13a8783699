"""The project names nothing outside itself: no file of it cites notes or data that live
beside a checkout, or a path of one machine. Users get what they need from docs/."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("arcmemo", "tests", "experiments", "docs", "README.md", "pyproject.toml")
# Pieces are joined at run time so this file does not name them itself.
FORBIDDEN = re.compile(
    "|".join(
        (
            re.escape("shared" + "/reference"),
            re.escape("shared" + "/data"),
            re.escape("../" + "shared"),
            re.escape("arcmemo" + "-method.md"),
            re.escape("jetspec" + "-api.md"),
            "/" + "work/",
            "/" + "home/[a-z]",
            "/" + "Users/[A-Za-z]",
        )
    )
)


def tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *FOLDERS],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    # Recorded fixtures hold paths of the runs they were recorded from: data, not citations.
    return [
        REPO / name.decode()
        for name in listed
        if name and not name.decode().startswith("tests/fixtures/")
    ]


def test_no_file_cites_notes_or_data_outside_the_repository() -> None:
    found = []
    for path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if FORBIDDEN.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not found, "\n".join(found)


def test_the_pattern_finds_what_it_forbids() -> None:
    for cited in ("see ../" + "shared/x", "/" + "work/main/a.py", "arcmemo" + "-method.md 5.5"):
        assert FORBIDDEN.search(cited)
    assert not FORBIDDEN.search("docs/method.md, section 2")
