"""Memory snapshots of a run in task batches as deltas: each batch's memory as its changes to the
memory before it.

An online run keeps the memory after every batch (:mod:`arcmemo.run.directory`), and a batch
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

import hashlib
import json
import re
from typing import Any

from pydantic import BaseModel, Field

# A sequence is compared item by item through each item's text (equal texts, equal items).
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


# In a memory's canonical text (two-space indent, one JSON token per line start, strings
# never spanning lines) a top-level member starts on a line indented by two spaces, and an
# item of a top-level list or mapping on a line indented by four that does not close one.
_MEMBER = re.compile(r'\n  ("(?:[^"\\\n]|\\.)*"): ')
_ITEM = re.compile(r"\n    (?=[^ \]}])")


class MemoryParts:
    """A memory's JSON text, member by member: each list's items and each mapping's
    entries as their text (equal texts, equal items), every other value parsed.

    Read from the text of the canonical dump without parsing it whole (at 30,000 concepts
    a parse costs half a second and the texts of its items again as much); a text not laid
    out that way is parsed whole, and its items compared through their compact JSON.
    """

    def __init__(self) -> None:
        self.sequences: dict[str, Keys] = {}  # member -> its items' texts
        self.mappings: set[str] = set()  # the members of sequences that are mappings
        self.values: dict[str, Any] = {}  # every other member
        self._pairs_as_text = False  # a mapping's item is '"key": value', not [key, value]

    @classmethod
    def of_text(cls, text: str) -> MemoryParts:
        try:
            return cls._scanned(text)
        except ValueError:
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise ValueError("a memory is a JSON object") from None
            return cls._parsed(raw)

    @classmethod
    def _parsed(cls, raw: dict[str, Any]) -> MemoryParts:
        parts = cls()
        for name, value in raw.items():
            if isinstance(value, list | dict):
                items = [[k, v] for k, v in value.items()] if isinstance(value, dict) else value
                parts.sequences[name] = [_compact(item) for item in items]
                if isinstance(value, dict):
                    parts.mappings.add(name)
            else:
                parts.values[name] = value
        return parts

    @classmethod
    def _scanned(cls, text: str) -> MemoryParts:
        if not (text.startswith("{\n") and text.endswith("\n}\n")):
            raise ValueError("not a canonical dump")
        members = list(_MEMBER.finditer(text))
        if not members:
            raise ValueError("no members")
        parts = cls()
        parts._pairs_as_text = True
        ends = [m.start() for m in members[1:]] + [len(text) - 2]
        for member, end in zip(members, ends, strict=True):
            name = json.loads(member.group(1))
            value = text[member.end() : end].rstrip().removesuffix(",")
            if value in ("[]", "{}"):
                parts.sequences[name] = []
            elif value[:2] in ("[\n", "{\n"):
                if not value.endswith("\n  " + ("]" if value[0] == "[" else "}")):
                    raise ValueError(f"{name}: not laid out as a canonical dump")
                starts = [m.start() + 1 for m in _ITEM.finditer(value)]
                stops = [*starts[1:], len(value) - 4]
                parts.sequences[name] = [
                    value[a:b].rstrip().removesuffix(",")
                    for a, b in zip(starts, stops, strict=True)
                ]
            else:
                parts.values[name] = json.loads(value)
                continue
            if value[0] == "{":
                parts.mappings.add(name)
        return parts

    def items(self, name: str, start: int, end: int) -> list[Any]:
        """Items ``start`` to ``end`` of the sequence ``name``, parsed (a mapping's as
        [key, value] pairs)."""
        texts = self.sequences[name][start:end]
        if name in self.mappings and self._pairs_as_text:
            return [list(next(iter(json.loads("{" + t + "}").items()))) for t in texts]
        return [json.loads(t) for t in texts]

    def entries(self) -> int:
        return len(self.sequences.get("concepts", [])) + len(self.sequences.get("lessons", []))

    def kind(self, name: str) -> str | None:
        if name in self.values:
            return "value"
        if name in self.sequences:
            return "mapping" if name in self.mappings else "list"
        return None


def _compact(item: Any) -> str:
    return json.dumps(item, separators=(",", ":"), ensure_ascii=False)


def _runs(before: Keys, after: Keys, new: MemoryParts, name: str) -> list[Kept | Written]:
    """``after`` as runs of ``before``'s items kept and items written out: each item
    continues the run before it where it can, else is looked up (a memory's items mostly
    stay in place, so this is one pass, where a longest-match diff costs seconds at
    30,000 items)."""
    where: dict[str, int] = {}
    for index, key in enumerate(before):
        where.setdefault(key, index)
    runs: list[Kept | Written] = []
    written_from: int | None = None  # first item of the run being written
    for index, key in enumerate(after):
        last = runs[-1] if runs else None
        continues = isinstance(last, Kept) and last.end < len(before) and written_from is None
        if continues and isinstance(last, Kept) and before[last.end] == key:
            last.end += 1
            continue
        kept = where.get(key)
        if kept is None:
            written_from = index if written_from is None else written_from
            continue
        if written_from is not None:
            runs.append(Written(items=new.items(name, written_from, index)))
            written_from = None
        runs.append(Kept(start=kept, end=kept + 1))
    if written_from is not None:
        runs.append(Written(items=new.items(name, written_from, len(after))))
    return runs


def make_delta(base_name: str, base: MemoryParts, new: MemoryParts, text: str) -> SnapshotDelta:
    """The delta that turns ``base`` into ``new`` (whose text is ``text``)."""
    names = [*new.values, *new.sequences]
    delta = SnapshotDelta(
        base=base_name,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        entries=new.entries(),
        removed=[n for n in [*base.values, *base.sequences] if new.kind(n) is None],
    )
    for name in names:
        kind = new.kind(name)
        if kind == "value":
            if base.kind(name) != "value" or base.values[name] != new.values[name]:
                delta.fields[name] = new.values[name]
            continue
        size = len(new.sequences[name])
        if base.kind(name) != kind:
            items = new.items(name, 0, size)
            delta.fields[name] = dict(items) if kind == "mapping" else items
        elif base.sequences[name] != new.sequences[name]:
            changed = delta.mappings if kind == "mapping" else delta.lists
            changed[name] = _runs(base.sequences[name], new.sequences[name], new, name)
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
        pairs = [[key, value] for key, value in base[name].items()]
        raw[name] = dict(_apply_runs(pairs, runs))
    raw.update(delta.fields)
    return raw
