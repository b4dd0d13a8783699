"""Memory snapshots as deltas: every batch's memory rebuilt exactly, whatever a batch did to
it; chains that start at a full snapshot of an older run; the report's cheap count."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pytest

from arcmemo.memory.schema import Concept, HistoryEntry, Lesson, Memory, Solution
from arcmemo.memory.seeds import load_seed
from arcmemo.memory.store import dump_memory
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.records import BatchCommit, RunDirError
from arcmemo.run.directory.snapshots import Kept, MemoryParts, Written, apply_delta, make_delta
from arcmemo.run.directory.writer import RunWriter
from tests.support.paths import FIXTURES

V1_ONLINE = FIXTURES / "rundir" / "v1" / "arc-online"


def _batch_edit(memory: Memory, rng: random.Random, batch: int) -> None:
    """What batches do to a memory: new concepts, counts, a deletion, lessons, solutions,
    history, the cheatsheet."""
    for n in range(rng.randint(0, 3)):
        memory.concepts.append(
            Concept(name=f"batch {batch} concept {n}", kind="routine", description=f"d{n}")
        )
    for concept in rng.sample(memory.concepts, k=min(3, len(memory.concepts))):
        concept.stats.selected += 1
    if batch % 3 == 2 and memory.concepts:
        del memory.concepts[rng.randrange(len(memory.concepts))]
    if batch % 2:
        memory.lessons.append(Lesson(situation=f"s{batch}", suggestion=f"t{batch}"))
    memory.solutions[f"task-{batch}"] = Solution(summary=f"rule {batch}")
    if batch == 4:
        memory.solutions.pop("task-1", None)
    memory.history.append(HistoryEntry(op="add", target=f"b{batch}", actor="test"))
    if batch == 5:
        memory.cheatsheet = "a new cheatsheet"


def _grow(writer: RunWriter, memory: Memory, batches: int, first: int = 0) -> list[str]:
    """Run ``batches`` batches as an online run records them; the text of each."""
    rng = random.Random(first)
    texts = []
    for batch in range(first, first + batches):
        _batch_edit(memory, rng, batch)
        text = dump_memory(memory)
        path = writer.write_snapshot(text, batch)
        writer.write_commit(BatchCommit(batch=batch, snapshot=path.name))
        texts.append(text)
    return texts


def test_deltas_rebuild_the_exact_memory_of_every_batch(tmp_path: Path) -> None:
    memory = load_seed("arc")
    writer = RunWriter(tmp_path / "run")
    writer.write_initial_memory(memory)
    texts = _grow(writer, memory, 8)
    snapshots = writer.snapshots()
    assert [p.name for p in snapshots] == [f"batch-{i:04d}.delta.json" for i in range(8)]
    reader = RunWriter(tmp_path / "run")  # nothing cached
    for path, text in zip(snapshots, texts, strict=True):
        rebuilt = reader.snapshot_memory(path)
        assert dump_memory(rebuilt) == text
        assert reader.snapshot_entries(path) == len(rebuilt.concepts) + len(rebuilt.lessons)
        assert reader.snapshot_sha256(path) == hashlib.sha256(text.encode()).hexdigest()
    # a batch writes what it changed, not the memory
    full = len(texts[-1].encode())
    assert all(path.stat().st_size < full / 5 for path in snapshots)


def test_a_resumed_writer_and_a_redone_batch_continue_the_chain(tmp_path: Path) -> None:
    memory = load_seed("arc")
    writer = RunWriter(tmp_path / "run")
    writer.write_initial_memory(memory)
    _grow(writer, memory, 3)
    # batch 3 written but killed before its commit: the resume redoes it from batch 2
    crashed = memory.model_copy(deep=True)
    crashed.concepts.append(Concept(name="lost in the crash", kind="structure"))
    writer.write_snapshot(dump_memory(crashed), 3)
    resumed = RunWriter(tmp_path / "run")
    assert resumed.resume_memory(
        RunConfig(benchmark="aime", model="openai:m", out=resumed.path, memory=tmp_path / "m.json")
    ) == Memory.model_validate_json(dump_memory(memory))
    texts = _grow(resumed, memory, 2, first=3)
    assert json.loads(resumed.delta_path(3).read_text())["base"] == "batch-0002.delta.json"
    for batch, text in zip((3, 4), texts, strict=True):
        assert dump_memory(resumed.snapshot_memory(resumed.delta_path(batch))) == text


def test_an_older_run_resumed_starts_its_chain_at_its_last_full_snapshot(tmp_path: Path) -> None:
    run = Path(shutil.copytree(V1_ONLINE, tmp_path / "run"))
    writer = RunWriter(run)
    commit = writer.read_commit()
    assert commit is not None and commit.snapshot == "batch-0002.json"
    memory = Memory.load(run / "memory" / "batch-0002.json")
    # a format-1 crash left batch 3 whole: the redone batch replaces it with its delta
    (run / "memory" / "batch-0003.json").write_text(dump_memory(memory))
    (text,) = _grow(writer, memory, 1, first=3)
    assert not (run / "memory" / "batch-0003.json").exists()
    names = [p.name for p in writer.snapshots()]
    assert names == [
        "batch-0000.json",
        "batch-0001.json",
        "batch-0002.json",
        "batch-0003.delta.json",
    ]
    assert dump_memory(writer.snapshot_memory(writer.delta_path(3))) == text


@pytest.mark.parametrize("indent", [2, None], ids=["canonical", "parsed whole"])
def test_a_delta_holds_runs_of_kept_items_and_only_the_changed_ones(indent: int | None) -> None:
    base_raw = {
        "concepts": [{"n": i} for i in range(100)],
        "solutions": {"a": {"s": 1}, "b": {"s": 2}},
        "cheatsheet": "",
        "x": 1,
    }
    new_raw = {
        "concepts": [{"n": i} for i in range(100) if i != 40] + [{"n": 100}],
        "solutions": {"a": {"s": 1}, "b": {"s": 3}, "c": {"s": 4}},
        "cheatsheet": "c",
    }
    new_raw["concepts"][10] = {"n": 10, "stats": 1}  # type: ignore[index]

    def parts(raw: dict[str, object]) -> MemoryParts:
        return MemoryParts.of_text(json.dumps(raw, indent=indent) + "\n")

    delta = make_delta("initial.json", parts(base_raw), parts(new_raw), "text")
    assert delta.lists["concepts"] == [
        Kept(start=0, end=10),
        Written(items=[{"n": 10, "stats": 1}]),
        Kept(start=11, end=40),
        Kept(start=41, end=100),
        Written(items=[{"n": 100}]),
    ]
    assert delta.mappings["solutions"] == [
        Kept(start=0, end=1),
        Written(items=[["b", {"s": 3}], ["c", {"s": 4}]]),
    ]
    assert delta.fields == {"cheatsheet": "c"} and delta.removed == ["x"]
    assert delta.entries == 100
    assert apply_delta(base_raw, delta) == new_raw


def test_a_broken_chain_is_named(tmp_path: Path) -> None:
    memory = load_seed("arc")
    writer = RunWriter(tmp_path / "run")
    writer.write_initial_memory(memory)
    _grow(writer, memory, 2)
    writer.initial_memory_path.unlink()
    with pytest.raises(RunDirError, match=r"batch-0000\.delta\.json: its base initial\.json"):
        writer.snapshot_memory(writer.delta_path(1))
