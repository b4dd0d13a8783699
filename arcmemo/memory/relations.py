"""Relations between concepts, indexed once per version of a concept list.

A concept is related to the names in its written ``relations`` and to those its types
imply: a routine whose ``routine_subtype`` is a callable type (``selection criteria``) can
fill every parameter of that type, so it is related to each concept with such a parameter,
both ways. Growing memories make these lists long (a thousand criteria routines relate to
every filter), so the index answers per concept in time proportional to what is asked for:
type -> fillers and type -> users lists, each sorted most useful first, merged lazily, and
counted without being listed. It also holds the concepts in usefulness order, which the
budgeted views walk for every task.

:func:`relation_index` keeps the index of a concept list until its members change or any
concept is edited (:func:`arcmemo.memory.edits.derived`): a kept index costs one pass
over the list's identities, and a concept added, merged, deleted or edited in place
rebuilds it, so a render never sees a stale index. The copies that leave out retired
concepts or a task's own concepts share the index of the same filtered list; a task's list
(the leakage guard's) gets an index derived from the memory's in time proportional to what
its own concepts relate to (:meth:`RelationIndex.without`), and reads from there the
rendered blocks they leave unchanged.
"""

from __future__ import annotations

import heapq
import operator
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from arcmemo.memory import edits
from arcmemo.memory.evidence import usefulness_key
from arcmemo.memory.schema import concept_id
from arcmemo.memory.types import type_names

if TYPE_CHECKING:
    from arcmemo.memory.schema import Concept, Memory

_ID = attrgetter("id")
_Signature = tuple[object, ...]
_Ranked = tuple[int, str]
_NONE: frozenset[str] = frozenset()
_NO_KIN: tuple[frozenset[str], str | None] = (_NONE, None)  # a concept no type relates


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


class _Listing:
    """Names of sorted ``(key, name)`` lists merged most useful first without repeats,
    listed only as far as asked for."""

    def __init__(self, lists: list[list[_Ranked]]) -> None:
        self._source = iter(lists[0]) if len(lists) == 1 else heapq.merge(*lists)
        self._names: list[str] = []
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def prefix(self, length: int | None) -> list[str]:
        """The first ``length`` names (all of them for None; fewer when there are not
        as many)."""
        with self._lock:
            while length is None or len(self._names) < length:
                ranked = next(self._source, None)
                if ranked is None:
                    break
                if ranked[1] not in self._seen:
                    self._seen.add(ranked[1])
                    self._names.append(ranked[1])
            return self._names[:length]


class RelationIndex:
    """Type -> fillers and type -> users of one concept list (see the module docstring)."""

    def __init__(self, concepts: Sequence[Concept], *, _every_type: bool = False) -> None:
        self._start(concepts, sorted(concepts, key=usefulness_key))
        # Every implied relation runs through a type some member fills, so the members'
        # used types are kept only where they are such a type: most parameters (grids,
        # colors) then cost a dictionary lookup, and most concepts, relating by type to
        # nothing, are not stored at all (their kinship is _NO_KIN). A concept outside
        # the list may fill any type: it is answered by an index of every type
        # (``_every_type``, built when first needed).
        filled_of = [self._filled(c) for c in self.order]
        fillable = None if _every_type else {t for t in filled_of if t is not None}
        relevant: dict[str | None, frozenset[str]] = {None: _NONE, "": _NONE}
        self._uses: dict[str, frozenset[str]] = {}
        self._kin: dict[int, tuple[frozenset[str], str | None]] = {}
        # (position in the usefulness order, name) pairs: walking the concepts in that
        # order lists every type's fillers and users already sorted, and merging them
        # compares integers.
        self._fillers: dict[str, list[_Ranked]] = {}
        self._users: dict[str, list[_Ranked]] = {}
        self._both: Counter[tuple[str, str]] = Counter()
        for position, concept in enumerate(self.order):
            used = _NONE
            for param in concept.parameters:
                annotation = param.type
                names = relevant.get(annotation)
                if names is None:
                    names = frozenset(_used_types(annotation or ""))
                    names = relevant[annotation] = names if fillable is None else names & fillable
                if names:
                    used = used | names if used else names
            filled = filled_of[position]
            if used:
                self._uses[concept.id] = used
            elif filled is None:
                continue
            self._kin[id(concept)] = (used, filled)
            entry = (position, concept.name)
            for name in used:
                self._users.setdefault(name, []).append(entry)
            if filled is not None:
                self._fillers.setdefault(filled, []).append(entry)
                for name in used:
                    self._both[(filled, name)] += 1
        if len(self._by_id) < len(concepts):
            # Ids shared by several members (a list that would not load): the one latest
            # in the usefulness order answers for its id, even when it uses no such type.
            self._uses = {c.id: self._kin.get(id(c), _NO_KIN)[0] for c in self.order}

    def _start(
        self,
        concepts: Sequence[Concept],
        order: list[Concept],
        maps: tuple[dict[int, Concept], dict[str, Concept]] | None = None,
    ) -> None:
        """The state every index starts from: its members, in usefulness ``order``, with
        nothing derived from them yet (the type lists are the constructor's own);
        ``maps``: the members by identity and by id, when the caller has them."""
        # By object identity; the objects are kept, so no identity is reused meanwhile.
        if maps is None:
            maps = (
                dict(zip(map(id, concepts), concepts, strict=True)),  # in C
                dict(zip(map(_ID, concepts), concepts, strict=True)),
            )
        self._members, self._by_id = maps
        self.order = order
        self._position: dict[int, int] | None = None  # built when first asked for
        # Only for the field-by-field check of :meth:`matches` (the test suite's).
        self.signatures = (
            [_signature(c, usefulness(c)) for c in concepts] if edits.verifying() else None
        )
        self._memo: dict[tuple[int, int | None], tuple[list[str], int]] = {}
        self._listings: dict[tuple[frozenset[str], str | None], _Listing] = {}
        self._counts: dict[tuple[frozenset[str], str | None], int] = {}
        # What the renderer derived from this version of the list (arcmemo.memory.render's
        # concept blocks), dropped with the index.
        self.rendered: dict[object, Any] = {}
        # The index this one was derived from (RelationIndex.without), and the types the
        # members it left out fill and use: blocks of concepts relating to none of them are
        # read from there.
        self._parent: RelationIndex | None = None
        self._left_out: tuple[frozenset[str], frozenset[str]] = (_NONE, _NONE)
        # Ids of the members left out: a written relation naming one is not shown (their
        # names are a task's own, which the leakage guard keeps from it).
        self._hidden_ids: frozenset[str] = _NONE
        self._concepts = tuple(concepts)  # for the index of every type (_for_outsiders)
        self._outsiders: RelationIndex | None = None
        self._lock = threading.Lock()

    def without(self, hidden: Collection[int], concepts: Sequence[Concept]) -> RelationIndex:
        """The index of ``concepts``: this list less the members whose identities are in
        ``hidden`` (a task's own few), derived from this index in time that grows with
        what those members relate to, not with the list (no sort, no scan of parameters).

        Only the type lists the hidden members fill or use change; the kinships of the
        others are shared. A type that only hidden members fill stops relating anything,
        as it would in an index built afresh.
        """
        gone = [self._members[i] for i in hidden if i in self._members]
        hidden_ids = self._hidden_ids.union(c.id for c in gone)
        if len(self._by_id) < len(self._members):  # shared ids: a fresh build decides
            fresh = RelationIndex(concepts)
            fresh._hidden_ids = hidden_ids
            return fresh
        # The members' maps and order are this index's less the few left out: copied and
        # cut in C, not built again from the list (a task's view costs what it hides).
        members, by_id = dict(self._members), dict(self._by_id)
        for concept in gone:
            del members[id(concept)], by_id[concept.id]
        if len(members) != len(concepts) or (
            edits.verifying() and not all(map(operator.is_, members.values(), concepts))
        ):
            raise ValueError("concepts must be this index's members less the hidden ones")
        if self._parent is None:  # its places are places in its own order
            positions = self._positions()
            order = _less(self.order, sorted(positions[id(c)] for c in gone))
        else:
            order = [c for c in self.order if id(c) not in hidden]
        index = object.__new__(RelationIndex)
        index._start(concepts, order, (members, by_id))
        index._hidden_ids = hidden_ids
        index._parent = self
        index._uses = dict(self._uses)
        index._kin = self._kin  # read only for members, and every member's is unchanged
        index._fillers, index._users = dict(self._fillers), dict(self._users)
        index._both = Counter(self._both)
        fills: set[str] = set()
        uses: set[str] = set()
        for concept in gone:
            index._uses.pop(concept.id, None)
            used, filled = self._kin.get(id(concept), _NO_KIN)
            uses |= used
            for name in used:
                _drop(index._users, name, concept.name)
            if filled is not None:
                fills.add(filled)
                _drop(index._fillers, filled, concept.name)
                for name in used:
                    index._both[(filled, name)] -= 1
        index._left_out = (frozenset(fills), frozenset(uses))
        return index

    def kept_render(self, concept: Concept, key: object) -> Any:
        """What the renderer kept under ``key`` for ``concept`` (a member): this index's
        own, or the one it was derived from, when the concept relates by type to none of
        the members left out (its related line, so its block, is the same there)."""
        kept = self.rendered.get(key)
        if kept is None and self._parent is not None:
            used, filled = self._kin.get(id(concept), _NO_KIN)
            fills, uses = self._left_out
            if (
                used.isdisjoint(fills)
                and (filled is None or filled not in uses)
                and not self._names_hidden(concept)
            ):
                kept = self._parent.kept_render(concept, key)
        return kept

    def _names_hidden(self, concept: Concept) -> bool:
        """Whether a written relation of ``concept`` names a member left out."""
        return bool(self._hidden_ids) and any(
            concept_id(name) in self._hidden_ids for name in concept.relations
        )

    @staticmethod
    def _filled(concept: Concept) -> str | None:
        """The type a routine fills (its subtype, lower-cased), if any."""
        if concept.kind == "routine" and concept.routine_subtype:
            return concept.routine_subtype.lower()
        return None

    def matches(self, concepts: Sequence[Concept]) -> bool:
        """Whether this index still describes ``concepts``, field by field (the check
        :data:`arcmemo.memory.edits.VERIFY_VARIABLE` makes on every cache hit; an index
        built without that variable set has nothing to compare)."""
        if self.signatures is None:
            raise RuntimeError(f"set {edits.VERIFY_VARIABLE}=1 to compare an index field by field")
        if len(concepts) != len(self.signatures):
            return False
        for concept, signature in zip(concepts, self.signatures, strict=True):
            if _signature(concept, usefulness(concept)) != signature:
                return False
        return True

    def holds(self, concept: Concept) -> bool:
        """Whether ``concept`` (this very object) is a member of the indexed list."""
        return self._members.get(id(concept)) is concept

    def with_ids(self, ids: Iterable[str]) -> list[Concept]:
        """The members with these ids (in the order given; unknown ids left out)."""
        return [self._by_id[i] for i in ids if i in self._by_id]

    def by_usefulness(self, concepts: Iterable[Concept]) -> list[Concept]:
        """``concepts`` (members of this index) most useful first."""
        wanted = {id(c) for c in concepts}
        if len(wanted) == len(self.order):
            return list(self.order)
        if len(wanted) * 8 < len(self.order):  # a few: sorting them beats a pass over all
            position = self._positions()
            return sorted((self._members[i] for i in wanted), key=lambda c: position[id(c)])
        return [c for c in self.order if id(c) in wanted]

    def _positions(self) -> dict[int, int]:
        """Each member's place in the usefulness order, by identity; an index derived by
        :meth:`without` answers with its parent's places (its order is theirs, less a
        few), so it never builds its own."""
        if self._position is None:
            self._position = (
                self._parent._positions()
                if self._parent is not None
                else {id(c): i for i, c in enumerate(self.order)}
            )
        return self._position

    def _kinship(self, concept: Concept) -> tuple[frozenset[str], str | None]:
        """What a concept's implied relations depend on: the types it uses and fills."""
        if self.holds(concept):
            return self._kin.get(id(concept), _NO_KIN)
        return (self._uses.get(concept.id, _NONE), self._filled(concept))

    def _implied_names(self, kin: tuple[frozenset[str], str | None]) -> _Listing:
        # Concepts of one kinship share their implied list (less themselves), so it is
        # merged once for all of them, and only as far as a view reads it.
        listing = self._listings.get(kin)
        if listing is None:
            own, filled = kin
            fills = [self._fillers[t] for t in sorted(own) if t in self._fillers]
            used_by = self._users.get(filled, []) if filled is not None else []
            listing = self._listings[kin] = _Listing([r for r in (*fills, used_by) if r])
        return listing

    def _implied_count(self, kin: tuple[frozenset[str], str | None]) -> int:
        """How many type-implied names a concept of this kinship has (itself left out),
        counted without listing them."""
        if kin not in self._counts:
            own, filled = kin
            # Fillers of different types are disjoint (one subtype each); a filler of one
            # of these types that also uses this routine's type is in both lists.
            total = sum(len(self._fillers[t]) for t in own if t in self._fillers)
            if filled is not None:
                total += len(self._users.get(filled, []))
                total -= sum(self._both[(t, filled)] for t in own if t in self._fillers)
                if filled in own:  # the concept fills its own parameter: in both, once
                    total -= 1
            self._counts[kin] = total
        return self._counts[kin]

    def _is_implied(self, concept: Concept, name: str) -> bool:
        other = self._by_id.get(concept_id(name))
        if other is None or other.name != name or other.name == concept.name:
            return False
        own = self._uses.get(concept.id, _NONE)
        filled = self._filled(concept)
        fills = self._filled(other)
        return (fills is not None and fills in own) or (
            filled is not None and filled in self._uses.get(other.id, _NONE)
        )

    def related(self, concept: Concept, limit: int | None = None) -> tuple[list[str], int]:
        """Up to ``limit`` related names of ``concept`` (written ones first, then the
        implied ones most useful first) and how many more there are."""
        if not self.holds(concept):
            return self._for_outsiders()._related(concept, limit)
        key = (id(concept), limit)
        if key not in self._memo:  # a view renders it again for every task
            self._memo[key] = self._related(concept, limit)
        names, more = self._memo[key]
        return list(names), more

    def _for_outsiders(self) -> RelationIndex:
        """The index of every type of the same members, for a concept not among them."""
        with self._lock:
            if self._outsiders is None:
                self._outsiders = RelationIndex(self._concepts, _every_type=True)
            return self._outsiders

    def _related(self, concept: Concept, limit: int | None) -> tuple[list[str], int]:
        kin = self._kinship(concept)
        if not concept.relations:  # most concepts: implied names only, less itself
            listed = self._implied_names(kin).prefix(None if limit is None else limit + 1)
            names = [name for name in listed if name != concept.name][:limit]
            return names, self._implied_count(kin) - len(names)
        written = list(dict.fromkeys(concept.relations))
        if self._names_hidden(concept):
            written = [name for name in written if concept_id(name) not in self._hidden_ids]
        names = written if limit is None else written[:limit]
        room = None if limit is None else max(limit - len(names), 0)
        if room != 0:
            # Type-implied names most useful first, less the concept and its written
            # ones: at most len(skip) of the first room + len(skip) are left out.
            skip = {*written, concept.name}
            listed = self._implied_names(kin).prefix(None if room is None else room + len(skip))
            extra = [name for name in listed if name not in skip]
            names = names + (extra if room is None else extra[:room])
        implied = self._implied_count(kin) - sum(1 for n in written if self._is_implied(concept, n))
        return names, len(written) + implied - len(names)


def _less(items: list[Concept], spots: list[int]) -> list[Concept]:
    """``items`` without those at the sorted positions ``spots`` (a few: slices copy in C)."""
    kept: list[Concept] = []
    start = 0
    for spot in spots:
        kept += items[start:spot]
        start = spot + 1
    kept += items[start:]
    return kept


def _drop(lists: dict[str, list[_Ranked]], key: str, name: str) -> None:
    """``lists[key]`` less the entry of ``name`` (a copy; the key goes with its last entry)."""
    kept = [entry for entry in lists[key] if entry[1] != name]
    if kept:
        lists[key] = kept
    else:
        del lists[key]


def relation_index(memory: Memory) -> RelationIndex:
    """The relation index of ``memory``'s concept list, rebuilt only after an edit
    (:func:`arcmemo.memory.edits.derived`; kept outside the model, so that a cache never
    takes part in equality, copies or serialisation)."""
    return _kept_index(memory.concepts, RelationIndex)


def index_less(memory: Memory, hidden: Collection[int], concepts: Sequence[Concept]) -> None:
    """Keep the index of ``concepts`` (``memory``'s list less its members ``hidden``), made
    from ``memory``'s own (:meth:`RelationIndex.without`) unless one is kept already."""
    parent = relation_index(memory)
    _kept_index(concepts, lambda items: parent.without(hidden, items))


def _kept_index(
    concepts: Sequence[Concept], build: Callable[[Sequence[Concept]], RelationIndex]
) -> RelationIndex:
    return edits.derived("relation index", concepts, build, lambda i: i.matches(concepts))
