"""Relations between concepts, indexed once per version of a memory's concept list.

A concept is related to the names in its written ``relations`` and to those its types
imply: a routine whose ``routine_subtype`` is a callable type (``selection criteria``) can
fill every parameter of that type, so it is related to each concept with such a parameter,
both ways. Growing memories make these lists long (a thousand criteria routines relate to
every filter), so the index answers per concept in time proportional to what is asked for:
type -> fillers and type -> users lists, each sorted most useful first, merged lazily, and
counted without being listed.

:func:`relation_index` keeps one index per memory and rebuilds it when the relation
signature of the concept list changes (a concept added, merged, deleted or edited in place),
so a render never sees a stale index.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import weakref
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache, partial
from typing import TYPE_CHECKING

from arcmemo.memory.evidence import usefulness_key
from arcmemo.memory.types import type_names

if TYPE_CHECKING:
    from arcmemo.memory.ontology import Concept, Memory

_Signature = tuple[object, ...]
_Ranked = tuple[tuple[int, int, int, str], str]


@lru_cache(maxsize=1 << 16)
def _used_types(annotation: str) -> tuple[str, ...]:
    # Annotations repeat across a memory; parsing each once keeps a rebuild linear and cheap.
    return tuple(dict.fromkeys(name.lower() for name in type_names(annotation)))


def usefulness(concept: Concept) -> tuple[int, int, int, str]:
    """Sort key, most useful first (:func:`arcmemo.memory.evidence.usefulness_key`)."""
    return usefulness_key(concept)


def _signature(concept: Concept, rank: tuple[int, int, int, str]) -> _Signature:
    """Everything about a concept that a relation list or its order depends on."""
    return (
        concept.name,
        concept.kind,
        concept.routine_subtype,
        tuple([p.type for p in concept.parameters]),
        tuple(concept.relations),
        rank,
    )


class RelationIndex:
    """Type -> fillers and type -> users of one concept list (see the module docstring)."""

    def __init__(self, concepts: Sequence[Concept]) -> None:
        # By object identity; the objects are kept, so no identity is reused meanwhile.
        self._members = {id(c): c for c in concepts}
        self._ranks = {id(c): usefulness(c) for c in concepts}
        self.signatures = [_signature(c, self._ranks[id(c)]) for c in concepts]
        self._memo: dict[tuple[int, int | None], tuple[list[str], int]] = {}
        self._by_id: dict[str, Concept] = {}
        self._uses: dict[str, frozenset[str]] = {}
        fillers: dict[str, list[Concept]] = {}
        users: dict[str, list[Concept]] = {}
        self._both: Counter[tuple[str, str]] = Counter()
        for concept in concepts:
            self._by_id[concept.id] = concept
            used: frozenset[str] = frozenset()
            for param in concept.parameters:
                if param.type:
                    used = used.union(_used_types(param.type))
            self._uses[concept.id] = used
            for name in used:
                users.setdefault(name, []).append(concept)
            filled = self._filled(concept)
            if filled is not None:
                fillers.setdefault(filled, []).append(concept)
                for name in used:
                    self._both[(filled, name)] += 1
        # (sort key, name) pairs, so merging compares precomputed keys.
        self._fillers = {t: self._ranked(cs) for t, cs in fillers.items()}
        self._users = {t: self._ranked(cs) for t, cs in users.items()}

    def _ranked(self, concepts: list[Concept]) -> list[_Ranked]:
        return sorted((self._ranks[id(c)], c.name) for c in concepts)

    def rank(self, concept: Concept) -> tuple[int, int, int, str]:
        """:func:`usefulness` of a concept of this index (computed once)."""
        if self._members.get(id(concept)) is not concept:
            return usefulness(concept)
        return self._ranks[id(concept)]

    @staticmethod
    def _filled(concept: Concept) -> str | None:
        """The type a routine fills (its subtype, lower-cased), if any."""
        if concept.kind == "routine" and concept.routine_subtype:
            return concept.routine_subtype.lower()
        return None

    def matches(self, concepts: Sequence[Concept]) -> bool:
        """Whether this index still describes ``concepts``."""
        if len(concepts) != len(self.signatures):
            return False
        for concept, signature in zip(concepts, self.signatures, strict=True):
            if _signature(concept, usefulness(concept)) != signature:
                return False
        return True

    def _implied_lists(self, concept: Concept) -> tuple[list[list[_Ranked]], list[_Ranked]]:
        own = self._uses.get(concept.id, frozenset())
        filled = self._filled(concept)
        fills = [self._fillers[t] for t in sorted(own) if t in self._fillers]
        used_by = self._users.get(filled, []) if filled is not None else []
        return fills, used_by

    def _implied(self, concept: Concept) -> Iterator[str]:
        """Type-implied names, most useful first, without ``concept`` itself or repeats."""
        fills, used_by = self._implied_lists(concept)
        lists = [ranked for ranked in (*fills, used_by) if ranked]
        seen = {concept.name}
        merged = lists[0] if len(lists) == 1 else heapq.merge(*lists)
        for _, name in merged:
            if name not in seen:
                seen.add(name)
                yield name

    def _implied_count(self, concept: Concept) -> int:
        """How many names :meth:`_implied` yields, counted without listing them."""
        own = self._uses.get(concept.id, frozenset())
        filled = self._filled(concept)
        fills, used_by = self._implied_lists(concept)
        # Fillers of different types are disjoint (one subtype each); a filler of one of
        # these types that also uses this routine's type is in both lists.
        total = sum(map(len, fills)) + len(used_by)
        if filled is not None:
            total -= sum(self._both[(t, filled)] for t in own if t in self._fillers)
            if filled in own:  # the concept fills its own parameter: it is in both, once
                total -= 1
        return total

    def _is_implied(self, concept: Concept, name: str) -> bool:
        from arcmemo.memory.ontology import concept_id

        other = self._by_id.get(concept_id(name))
        if other is None or other.name != name or other.name == concept.name:
            return False
        own = self._uses.get(concept.id, frozenset())
        filled = self._filled(concept)
        fills = self._filled(other)
        return (fills is not None and fills in own) or (
            filled is not None and filled in self._uses.get(other.id, frozenset())
        )

    def related(self, concept: Concept, limit: int | None = None) -> tuple[list[str], int]:
        """Up to ``limit`` related names of ``concept`` (written ones first, then the
        implied ones most useful first) and how many more there are."""
        if self._members.get(id(concept)) is not concept:
            return self._related(concept, limit)
        key = (id(concept), limit)
        if key not in self._memo:  # a view renders it again for every task
            self._memo[key] = self._related(concept, limit)
        names, more = self._memo[key]
        return list(names), more

    def _related(self, concept: Concept, limit: int | None) -> tuple[list[str], int]:
        written = list(dict.fromkeys(concept.relations))
        names = written if limit is None else written[:limit]
        room = None if limit is None else max(limit - len(names), 0)
        if room != 0:
            extra = (n for n in self._implied(concept) if n not in written)
            names = names + list(itertools.islice(extra, room))
        implied = self._implied_count(concept) - sum(
            1 for n in written if self._is_implied(concept, n)
        )
        return names, len(written) + implied - len(names)


_LOCK = threading.Lock()
_INDEXES: dict[int, tuple[weakref.ref[Memory], RelationIndex]] = {}


def _forget(key: int, _ref: object = None) -> None:
    with _LOCK:
        _INDEXES.pop(key, None)


def relation_index(memory: Memory) -> RelationIndex:
    """The relation index of ``memory``, rebuilt only when its concepts changed.

    Kept outside the model (keyed by the memory's identity, dropped with it) so that a
    cache never takes part in equality, copies or serialisation.
    """
    key = id(memory)
    with _LOCK:
        entry = _INDEXES.get(key)
    if entry is not None and entry[0]() is memory and entry[1].matches(memory.concepts):
        return entry[1]
    index = RelationIndex(memory.concepts)
    owner = weakref.ref(memory, partial(_forget, key))
    with _LOCK:
        _INDEXES[key] = (owner, index)
    return index
