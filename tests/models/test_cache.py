"""The SQLite response cache."""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import random
import sqlite3
import threading
from pathlib import Path

import pytest

from arcmemo.models import Completion, GenerateParams, Message, ResponseCache
from arcmemo.models.cache import (
    CACHE_FILE_NAME,
    cache_key,
    cache_keys,
    canonical_json,
    default_cache_dir,
)

IDENTITY = {"provider": "scripted", "model": "x"}
MESSAGES = [Message(role="user", content="hello")]


def test_key_depends_on_sample_index_and_sampling_but_not_n() -> None:
    base = cache_key(IDENTITY, MESSAGES, GenerateParams(n=1), 0)
    assert base == cache_key(IDENTITY, MESSAGES, GenerateParams(n=5), 0)
    assert base != cache_key(IDENTITY, MESSAGES, GenerateParams(n=1), 1)
    assert base != cache_key(IDENTITY, MESSAGES, GenerateParams(temperature=0.5), 0)
    assert base != cache_key({"provider": "scripted", "model": "y"}, MESSAGES, GenerateParams(), 0)
    other = [Message(role="user", content="hello!")]
    assert base != cache_key(IDENTITY, other, GenerateParams(), 0)


def test_round_trip_marks_hits_and_read_false_still_writes(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    cache.put("k", "scripted:x", Completion(text="stored"))
    hit = cache.get("k")
    assert hit is not None and hit.text == "stored" and hit.cache_hit
    assert cache.get("other") is None
    blind = ResponseCache(tmp_path, read=False)
    assert blind.get("k") is None
    blind.put("k2", "scripted:x", Completion(text="new"))
    assert cache.get("k2") is not None
    assert (tmp_path / CACHE_FILE_NAME).exists()


def test_directory_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    assert ResponseCache().path.parent == tmp_path / "c"


def _write_many(directory: str, worker: int) -> None:
    cache = ResponseCache(Path(directory))
    for index in range(50):
        cache.put(f"{worker}-{index}", "scripted:x", Completion(text=str(index)))
    cache.close()


@pytest.mark.slow  # four processes
def test_several_processes_share_one_database(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_many, args=(str(tmp_path), w)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert len(ResponseCache(tmp_path)) == 200


def test_an_opener_waits_for_another_openers_write_lock(tmp_path: Path) -> None:
    # A second process opening a fresh cache while the first holds the write lock (its WAL
    # switch or table creation) got "database is locked" at once: the busy timeout does not
    # cover a connection that has read the file and then needs the lock.
    other = sqlite3.connect(
        tmp_path / CACHE_FILE_NAME, isolation_level=None, check_same_thread=False
    )
    other.execute("CREATE TABLE scratch (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO scratch VALUES (1)")
    release = threading.Timer(0.3, other.execute, ("COMMIT",))
    release.start()
    try:
        cache = ResponseCache(tmp_path)
    finally:
        release.join()
    cache.put("k", "scripted:x", Completion(text="stored"))
    assert cache.get("k") is not None
    assert cache._connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_lone_surrogates_never_crash_the_key_or_the_store(tmp_path: Path) -> None:
    # A model's completion, or a program error quoted in a prompt, can hold a lone surrogate.
    messages = [Message(role="user", content="error: \udcff in line 1")]
    key = cache_key(IDENTITY, messages, GenerateParams(), 0)
    assert key != cache_key(
        IDENTITY, [Message(role="user", content="error: ? in line 1")], GenerateParams(), 0
    )
    cache = ResponseCache(tmp_path)
    cache.put(key, "scripted:x", Completion(text="answer \ud800 here", reasoning="\udfff"))
    hit = cache.get(key)
    assert hit is not None
    assert hit.text == "answer \\ud800 here" and hit.reasoning == "\\udfff"
    hit.text.encode("utf-8")  # stored text is valid UTF-8


def _whole_request_key(
    identity: dict, messages: list[Message], params: GenerateParams, i: int
) -> str:
    """The key as arcmemo has always computed it: sha256 of one sample's whole canonical JSON."""
    material = {
        "v": 1,
        "identity": identity,
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "params": params.model_dump(mode="json", exclude={"n"}),
        "sample": i,
    }
    return hashlib.sha256(canonical_json(material).encode("utf-8", "surrogatepass")).hexdigest()


def test_keys_hashed_once_per_request_equal_the_whole_request_keys() -> None:
    # Existing caches stay valid: a key fixed before the incremental hash still matches...
    messages = [
        Message(role="system", content="be brief"),
        Message(role="user", content="héllo \udcff"),
    ]
    params = GenerateParams(temperature=0.3, seed=4)
    pinned = "8e1880d5e7f4f96dbc900c58ce2c7973fc58cf8777f21ab36cfde816d1dbe9f5"
    assert cache_key(IDENTITY, messages, params, 3) == pinned
    # ...and so does every key of random requests.
    rng = random.Random(2)
    alphabet = ["a", "{", '"', "\\", "\n", "é", "\udcff", ",", ":", "0"]
    for _ in range(200):
        messages = [
            Message(
                role=rng.choice(["system", "user", "assistant"]),
                content="".join(rng.choices(alphabet, k=rng.randint(0, 30))),
            )
            for _ in range(rng.randint(1, 4))
        ]
        identity = {"provider": rng.choice(["a", "b"]), "namespace": rng.choice(["", "r1"])}
        params = GenerateParams(
            temperature=rng.choice([None, 0.0, 0.7]), seed=rng.choice([None, 5])
        )
        indices = range(rng.randint(0, 20), rng.randint(21, 40))
        expected = [_whole_request_key(identity, messages, params, i) for i in indices]
        assert cache_keys(identity, messages, params, indices) == expected


def test_put_many_commits_every_entry_at_once(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    cache.put_many("scripted:x", [("a", Completion(text="1")), ("b", Completion(text="2"))])
    other = ResponseCache(tmp_path)  # another connection sees both: committed
    assert [c.text if c else None for c in other.get_many(["a", "b", "c"])] == ["1", "2", None]
    ResponseCache(tmp_path, write=False).put_many("scripted:x", [("c", Completion(text="3"))])
    assert other.get("c") is None


def test_a_cancelled_writer_still_stores_its_entries(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    gate = threading.Event()
    cache._io.submit(gate.wait)  # the cache's thread is busy: the write has to queue

    async def cancel_while_queued() -> None:
        write = asyncio.ensure_future(cache.aput_many("x", [("k", Completion(text="paid"))]))
        await asyncio.sleep(0.01)
        write.cancel()
        with pytest.raises(asyncio.CancelledError):
            await write

    asyncio.run(cancel_while_queued())
    gate.set()
    cache.close()  # waits for the queued write
    hit = ResponseCache(tmp_path).get("k")
    assert hit is not None and hit.text == "paid"
