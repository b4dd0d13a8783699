"""SQLite response cache: one entry per (provider identity, messages, params, sample index).

Keying by sample index makes ``n`` samples ``n`` entries, so a rerun with a larger ``n``
pays only for the new samples, and an identical rerun makes no provider calls at all.
The database runs in WAL mode with a busy timeout, so several processes can share it (and
open it at the same moment: the set-up is retried while another opener holds the lock).
Only completions are stored; provider identities never include credentials.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import os
import random
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from arcmemo.models.base import Completion, GenerateParams, Message
from arcmemo.sandbox.text import clean_json, clean_text

CACHE_DIR_ENV = "ARCMEMO_CACHE_DIR"
CACHE_FILE_NAME = "responses.sqlite3"
_BUSY_TIMEOUT_MS = 30_000
_SCHEMA_VERSION = 1


def default_cache_dir() -> Path:
    """``$ARCMEMO_CACHE_DIR``, else ``$XDG_CACHE_HOME/arcmemo``, else ``~/.cache/arcmemo``."""
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "arcmemo"


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _message_key(message: Message) -> dict[str, Any]:
    # Only fields that change the answer; a cache breakpoint changes billing, not text.
    return {"role": message.role, "content": message.content}


def cache_key(
    identity: dict[str, Any],
    messages: Sequence[Message],
    params: GenerateParams,
    sample_index: int,
) -> str:
    """sha256 of the canonical JSON of everything that determines sample ``sample_index``:
    ``{"identity", "messages", "params" (without n), "sample", "v"}``."""
    return cache_keys(identity, messages, params, [sample_index])[0]


def cache_keys(
    identity: dict[str, Any],
    messages: Sequence[Message],
    params: GenerateParams,
    sample_indices: Iterable[int],
) -> list[str]:
    """:func:`cache_key` of each sample index, the request serialised and hashed once.

    Sorted keys put ``sample`` after everything the samples share, so the hash of that
    shared prefix is computed once and copied per sample: the keys are byte for byte those
    of hashing each sample's whole canonical JSON, but a long prompt costs one pass, not n.
    """
    sampling = params.model_dump(mode="json", exclude={"n"})
    shared = (
        '{"identity":'
        + canonical_json(identity)
        + ',"messages":'
        + canonical_json([_message_key(message) for message in messages])
        + ',"params":'
        + canonical_json(sampling)
        + ',"sample":'
    )
    # surrogatepass: text that is not valid Unicode still gets its own, distinct key.
    prefix = hashlib.sha256(shared.encode("utf-8", "surrogatepass"))
    keys = []
    for index in sample_indices:
        digest = prefix.copy()
        digest.update(f'{canonical_json(int(index))},"v":{_SCHEMA_VERSION}}}'.encode())
        keys.append(digest.hexdigest())
    return keys


def _set_up(connection: sqlite3.Connection) -> None:
    """WAL mode and the table, retried while another opener holds the lock.

    The busy handler does not cover a set-up that meets another one: a connection that
    reads the fresh file's header and then needs its write lock (the WAL switch, the table)
    while another opener holds that lock gets "database is locked" at once, since waiting
    could deadlock. Each step is idempotent, so the whole set-up is tried again until the
    busy timeout is spent. The WAL switch is made once per file (the mode is stored in it):
    an opener that finds WAL already set writes nothing.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY,"
                " spec TEXT NOT NULL,"
                " completion TEXT NOT NULL,"
                " created REAL NOT NULL)"
            )
            return
        except sqlite3.OperationalError as error:
            busy = "locked" in str(error) or "busy" in str(error)
            if not busy or time.monotonic() + delay > deadline:
                raise
        # Jittered, so openers that collided do not collide again in step.
        time.sleep(delay * random.uniform(0.5, 1.5))
        delay = min(delay * 2, 0.25)


class ResponseCache:
    """Completions stored by :func:`cache_key`.

    ``read=False`` (``--no-cache``) never serves entries but still stores new ones, so a
    forced rerun refreshes the cache. ``write=False`` stores nothing.
    """

    def __init__(
        self, directory: Path | None = None, *, read: bool = True, write: bool = True
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / CACHE_FILE_NAME
        self.read = read
        self.write = write
        self._lock = threading.Lock()
        # The cache's own writer thread: asyncio's default executor also runs sandbox
        # checks, and a write must not queue behind programs that take seconds.
        self._io = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="arcmemo-cache")
        # The timeout is the busy handler, set by connect before any statement runs.
        self._connection = sqlite3.connect(
            self.path,
            timeout=_BUSY_TIMEOUT_MS / 1000,
            check_same_thread=False,
            isolation_level=None,
        )
        _set_up(self._connection)

    def get(self, key: str) -> Completion | None:
        """The stored completion (marked ``cache_hit``), or ``None`` (always when not reading)."""
        if not self.read:
            return None
        with self._lock:
            row = self._connection.execute(
                "SELECT completion FROM responses WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        completion = Completion.model_validate_json(row[0])
        completion.cache_hit = True
        return completion

    def put(self, key: str, spec: str, completion: Completion) -> None:
        """Store ``completion`` under ``key`` (replacing an older entry), unless not writing."""
        self.put_many(spec, [(key, completion)])

    def get_many(self, keys: Sequence[str]) -> list[Completion | None]:
        """:meth:`get` of each key."""
        return [self.get(key) for key in keys]

    def put_many(self, spec: str, entries: Sequence[tuple[str, Completion]]) -> None:
        """:meth:`put` of each ``(key, completion)``, in one transaction."""
        if not self.write or not entries:
            return
        rows = []
        for key, completion in entries:
            stored = completion.model_copy(update={"cache_hit": False})
            # Stored byte-faithful (control characters kept): a replay must equal the live answer.
            dump = clean_json(stored.model_dump(mode="json"), controls=True)
            data = Completion.model_validate(dump)
            rows.append((key, clean_text(spec, controls=True), data.model_dump_json(), time.time()))
        with self._lock:
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                self._connection.executemany(
                    "INSERT OR REPLACE INTO responses (key, spec, completion, created)"
                    " VALUES (?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")

    def submit_many(
        self, spec: str, entries: Sequence[tuple[str, Completion]]
    ) -> concurrent.futures.Future[None]:
        """Start :meth:`put_many` on the cache's thread now; the future ends when committed."""
        return self._io.submit(self.put_many, spec, entries)

    async def aput_many(self, spec: str, entries: Sequence[tuple[str, Completion]]) -> None:
        """:meth:`put_many` on the cache's thread; returns once the entries are committed.

        Shielded: a caller cancelled while the write waits its turn (another task of the run
        failed) still gets its paid answers stored, as a write on the event loop always did.
        """
        await asyncio.shield(asyncio.wrap_future(self.submit_many(spec, entries)))

    def __len__(self) -> int:
        with self._lock:
            return self._connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the database connection (after the reads and writes under way)."""
        self._io.shutdown(wait=True)
        with self._lock:
            self._connection.close()
