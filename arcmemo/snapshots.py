"""Memory snapshots of a batched run as deltas: each batch's memory as its changes to the
memory before it.

An online run keeps the memory after every batch (:mod:`arcmemo.rundir`), and a batch
changes a few entries of a memory that may hold tens of thousands: written whole, the
snapshots grow the run directory by the memory's size per batch (35 MB a batch at 30,000
concepts). A :class:`SnapshotDelta` holds, for each top-level field of the memory's JSON
that changed, its new value, and for each list (concepts, lessons, types, history) and
mapping (solutions) the new sequence as runs of the base's items kept and items written out.
Applying the deltas of a chain in order to the full memory it starts from (the copy taken
before the first batch, or a full snapshot of an older arcmemo) rebuilds each batch's
memory exactly; the delta records the SHA-256 of the memory's text and its number of
entries, so that neither a resume's identity check nor the report's growth chart rebuilds
anything.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field

# A list is compared item by item through this text of each item (hashable, and equal
# exactly when the items are).
Keys = list[str]


class Kept(BaseModel):
    """Items ``start`` up to (not including) ``end`` of the base's sequence, unchanged."""

    start: int
    end: int


class Written(BaseModel):
    """Items that are new or changed, written out."""

    items: list[Any]


class SnapshotDelta(BaseModel):
    """``memory/batch-NNNN.delta.json``: the memory after a batch, as changes to ``base``."""

    base: str = Field(description="The file under memory/ holding the memory it changes.")
    sha256: str = Field(description="SHA-256 of the full memory's text (its checked dump).")
    entries: int = Field(description="Concepts and lessons of the full memory.")
    fields: dict[str, Any] = Field(
        default_factory=dict, description="Top-level values (not lists or mappings) that changed."
    )
    removed: list[str] = Field(default_factory=list, description="Top-level keys now absent.")
    lists: dict[str, list[Kept | Written]] = Field(
        default_factory=dict, description="Each top-level list that changed, as runs."
    )
    mappings: dict[str, list[Kept | Written]] = Field(
        default_factory=dict,
        description="Each top-level mapping that changed, as runs of its [key, value] pairs.",
    )


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class MemoryParts:
    """A memory's JSON object, with the comparison text of each item of its sequences."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.keys: dict[str, Keys] = {
            name: [_key(item) for item in _sequence(value)]
            for name, value in raw.items()
            if isinstance(value, list | dict)
        }

    @classmethod
    def of_text(cls, text: str) -> MemoryParts:
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("a memory is a JSON object")
        return cls(raw)

    def entries(self) -> int:
        return len(self.raw.get("concepts", [])) + len(self.raw.get("lessons", []))


def _sequence(value: list[Any] | dict[str, Any]) -> list[Any]:
    """A list as is; a mapping as its [key, value] pairs (their order kept)."""
    return [[k, v] for k, v in value.items()] if isinstance(value, dict) else value


def _runs(before: Keys, after: Keys, items: list[Any]) -> list[Kept | Written]:
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    runs: list[Kept | Written] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            runs.append(Kept(start=i1, end=i2))
        elif j2 > j1:  # replace or insert; a deletion writes nothing
            runs.append(Written(items=items[j1:j2]))
    return runs


def make_delta(base_name: str, base: MemoryParts, new: MemoryParts, text: str) -> SnapshotDelta:
    """The delta that turns ``base`` into ``new`` (whose text is ``text``)."""
    delta = SnapshotDelta(
        base=base_name,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        entries=new.entries(),
        removed=[name for name in base.raw if name not in new.raw],
    )
    for name, value in new.raw.items():
        before = base.raw.get(name)
        same_kind = type(before) is type(value)
        if isinstance(value, list | dict) and same_kind:
            if base.keys[name] != new.keys[name]:
                changed = delta.lists if isinstance(value, list) else delta.mappings
                changed[name] = _runs(base.keys[name], new.keys[name], _sequence(value))
        elif name not in base.raw or before != value:
            delta.fields[name] = value
    return delta


def _apply_runs(base: list[Any], runs: list[Kept | Written]) -> list[Any]:
    out: list[Any] = []
    for run in runs:
        out += base[run.start : run.end] if isinstance(run, Kept) else run.items
    return out


def apply_delta(base: dict[str, Any], delta: SnapshotDelta) -> dict[str, Any]:
    """The memory's JSON object after ``delta`` (``base`` is left as it was)."""
    raw = {name: value for name, value in base.items() if name not in delta.removed}
    for name, runs in delta.lists.items():
        raw[name] = _apply_runs(base[name], runs)
    for name, runs in delta.mappings.items():
        raw[name] = dict(_apply_runs(_sequence(base[name]), runs))
    raw.update(delta.fields)
    return raw
