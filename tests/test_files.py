"""Atomic writes keep the permissions a collaborator expects."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from arcmemo import Memory
from arcmemo.files import atomic_write_text, current_umask


@pytest.fixture
def umask() -> Iterator[None]:
    previous = os.umask(0o022)
    os.umask(previous)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_follow_the_umask(tmp_path: Path, umask: None, mask: int, expected: int) -> None:
    os.umask(mask)
    assert current_umask() == mask
    atomic_write_text(tmp_path / "a.txt", "x")
    Memory().save(tmp_path / "memory.json")
    assert _mode(tmp_path / "a.txt") == expected
    assert _mode(tmp_path / "memory.json") == expected


def test_replacing_a_file_keeps_its_mode(tmp_path: Path, umask: None) -> None:
    os.umask(0o077)
    path = tmp_path / "shared.json"
    path.write_text("old")
    path.chmod(0o664)
    atomic_write_text(path, "new", backup=True)
    assert path.read_text() == "new"
    assert _mode(path) == 0o664


def test_atomic_write_takes_text_in_pieces_and_leaves_nothing_if_they_fail(
    tmp_path: Path,
) -> None:
    path = tmp_path / "page.html"
    atomic_write_text(path, (f"<p>{n}</p>" for n in range(3)))
    assert path.read_text() == "<p>0</p><p>1</p><p>2</p>"

    def broken() -> Iterator[str]:
        yield "half a page"
        raise RuntimeError("render failed")

    with pytest.raises(RuntimeError):
        atomic_write_text(path, broken())
    assert path.read_text() == "<p>0</p><p>1</p><p>2</p>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]
