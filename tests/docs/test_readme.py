"""The README stays one screen that points into the site: small, and free of history."""

from __future__ import annotations

import re
import subprocess

from tests.support.paths import REPO

README = REPO / "README.md"


def test_the_readme_is_about_one_screen() -> None:
    assert len(README.read_bytes()) <= 12_000


def test_no_word_of_the_readme_names_a_commit() -> None:
    """Commit names date a README; history belongs in the changelog and in git. (ARC task
    ids are 8 hex digits too, so a word counts only when git knows it as a commit.)"""
    words = set(re.findall(r"\b[0-9a-f]{7,40}\b", README.read_text(encoding="utf-8")))
    commits = [
        word
        for word in sorted(words)
        if subprocess.run(
            ["git", "-C", str(REPO), "cat-file", "-e", f"{word}^{{commit}}"],
            capture_output=True,
        ).returncode
        == 0
    ]
    assert commits == []
