"""Atomic writes keep the permissions a collaborator expects."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from arcmemo import Memory
from arcmemo.core.files import atomic_write_text, current_umask, file_lock, held_lock


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


# -- locks leave no files behind -------------------------------------------------------------


def test_a_released_lock_removes_its_file_and_a_shared_one_waits_for_the_last_holder(
    tmp_path: Path,
) -> None:
    lock = tmp_path / "memory.json.writer.lock"
    with held_lock(lock, holder="pid 1"):
        assert lock.read_text() == "pid 1\n"
    assert not lock.exists()
    with held_lock(lock, holder="r1", shared=True):
        with held_lock(lock, holder="r2", shared=True):
            pass
        assert lock.exists()  # r1 still holds it
    assert not lock.exists()
    target = tmp_path / "results.jsonl"
    with file_lock(target):
        assert target.with_name("results.jsonl.lock").exists()
    assert list(tmp_path.iterdir()) == []


def test_file_lock_excludes_while_holders_remove_the_file(tmp_path: Path) -> None:
    # Each holder removes the lock file on release while others wait on it: a waiter that
    # got the lock of a removed file must not run alongside the next holder of a new one.
    counter = tmp_path / "counter"
    counter.write_text("0")
    inside: list[int] = []
    overlaps: list[int] = []

    def work() -> None:
        for _ in range(40):
            with file_lock(counter):
                inside.append(1)
                if len(inside) > 1:
                    overlaps.append(len(inside))
                value = int(counter.read_text())
                counter.write_text(str(value + 1))
                inside.pop()

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.read_text() == "240" and overlaps == []
    assert not counter.with_name("counter.lock").exists()
