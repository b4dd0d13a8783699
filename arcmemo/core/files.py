"""Durable file writes shared by every writer of memories, run files and puzzles, and the
JSON-lines files they append to (run files, the call log, the batch log)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TypeVar

from pydantic import BaseModel, ValidationError

RecordT = TypeVar("RecordT", bound=BaseModel)


@contextlib.contextmanager
def _locked_file(path: Path, operation: int) -> Iterator[IO[str]]:
    """``path`` opened and locked with ``operation`` (``fcntl.flock``), then, on release,
    removed when no other process holds or waits on it, so no lock file outlives its use.

    A process that opened the file before its holder removed it gets its lock on the
    removed file: it sees that the path no longer names what it locked and opens it again.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (closed below)
        try:
            fcntl.flock(handle, operation)
        except BaseException:
            handle.close()
            raise
        try:
            current = os.stat(path)
        except FileNotFoundError:
            current = None
        opened = os.fstat(handle.fileno())
        if current is not None and (current.st_dev, current.st_ino) == (
            opened.st_dev,
            opened.st_ino,
        ):
            break
        handle.close()  # the holder removed it meanwhile: lock the path as it is now
    try:
        yield handle
    finally:
        try:
            # Only with no other holder (a shared holder tries for exclusive access; a
            # waiter would take the lock of a removed file and open the path again).
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        except BlockingIOError:
            pass
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock tied to ``path`` (on ``path`` + ``.lock``, which is
    removed again when released)."""
    with _locked_file(path.with_name(path.name + ".lock"), fcntl.LOCK_EX):
        yield


class LockHeldError(RuntimeError):
    """Another process holds a lock that :func:`held_lock` asked for."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is held by {holder}")
        self.path = path
        self.holder = holder


@contextlib.contextmanager
def held_lock(path: Path, *, holder: str, shared: bool = False) -> Iterator[None]:
    """Hold an advisory lock on the lock file ``path`` while the block runs, or fail at once.

    Exclusive (one holder) unless ``shared`` (any number of shared holders, no exclusive
    one). An exclusive holder writes ``holder`` (who it is) into the file, so a process that
    is refused can say who holds the lock. The lock ends with the process, however it ends;
    the last holder to release it removes the file. Unlike :func:`file_lock` it never waits:
    a second holder gets :class:`LockHeldError`.
    """
    operation = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
    with contextlib.ExitStack() as stack:
        try:
            handle = stack.enter_context(_locked_file(path, operation))
        except BlockingIOError:
            try:
                named = path.read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                named = ""
            raise LockHeldError(path, named or "another process") from None
        if not shared:
            handle.truncate(0)
            handle.write(holder + "\n")
            handle.flush()
        yield


def atomic_write_text(path: Path, text: str | Iterable[str], *, backup: bool = False) -> None:
    """Write ``text`` to ``path`` so that readers see the old or the new file, never a mix.

    ``text`` may come in pieces (an iterable of strings, e.g. a page as it is rendered),
    written as they come. With ``backup``, the previous file is kept as ``path`` + ``.bak``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
    )
    try:
        # mkstemp makes the file 0600; the file gets the mode a plain open() would give
        # (collaborators on a shared cluster can read a saved memory) or keeps its own.
        os.fchmod(descriptor, _mode_for(path))
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            if isinstance(text, str):
                handle.write(text)
            else:
                handle.writelines(text)
            handle.flush()
            os.fsync(handle.fileno())
        if backup and path.exists():
            backup_path = path.with_name(path.name + ".bak")
            _copy_backup(path, backup_path)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _mode_for(path: Path) -> int:
    """The permission bits ``path`` keeps when replaced: its own, or those of a new file
    under the current umask."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~current_umask()


def current_umask() -> int:
    """The process umask, read without changing it where Linux reports it (setting it to
    read it back would briefly affect files other threads create)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _copy_backup(path: Path, backup_path: Path) -> None:
    # A hard link keeps the old bytes without copying and without a moment where
    # ``path`` is missing; the rename that follows replaces only the directory entry.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(backup_path)
    try:
        os.link(path, backup_path)
    except OSError:
        backup_path.write_bytes(path.read_bytes())


def cut_torn_tail(path: Path, chunk: int = 1 << 16) -> None:
    """Cut ``path`` back to the end of its last complete line (a crash can tear the last)."""
    if not path.exists():
        return
    with open(path, "rb") as handle:
        end = handle.seek(0, os.SEEK_END)
        position = end
        while position > 0:
            start = max(position - chunk, 0)
            handle.seek(start)
            newline = handle.read(position - start).rfind(b"\n")
            if newline >= 0:
                position = start + newline + 1
                break
            position = start
    if position != end:
        os.truncate(path, position)


def append_lines(path: Path, lines: list[str], *, durable: bool = True) -> None:
    """Append whole lines (each ending in a line break) to a JSON-lines file, flushed, and
    with ``durable`` on disk (fsync) before this returns.

    The file lock keeps the lines of processes that share the file whole (a long line may
    take several writes); since every append holds it, a line left unfinished was torn by a
    process that died writing it, and it is cut first, or the next line would be glued on.
    """
    if not lines:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(path):
        cut_torn_tail(path)
        with open(path, "a", encoding="utf-8") as handle:
            handle.writelines(lines)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())


def read_json_lines(
    path: Path, record: type[RecordT]
) -> Iterator[tuple[int, RecordT | None, str | None]]:
    """(line number, record, None) or (line number, None, why) for each complete line of a
    JSON-lines file (a last line torn by a crash ends the reading, even if it parses)."""
    if not path.exists():
        return
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.endswith(b"\n"):
                return  # torn by a crash, even if it parses
            try:
                yield number, record.model_validate_json(line), None
            except ValidationError as error:
                first = error.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                yield number, None, f"{where + ': ' if where else ''}{first['msg']}"
