"""The edit clock and the derivations kept per concept list: what is computed from a
concept list once per version of it (the relation index and usefulness order of
:mod:`arcmemo.memory.relations`, the retired and task-owned concepts, the names a selector
may answer), so that rendering a prompt for every task of a run costs what the prompt
shows, not what the memory holds.

Two owners, each explicit:

- :data:`CLOCK` (an :class:`EditClock`, the process's only counter) counts every edit to
  a concept anywhere in the process: assigning a field of a memory, a concept, a
  parameter, its provenance or its statistics (:class:`Tracked`), and changing one of
  their lists in place (:class:`TrackedList`: ``memory.concepts.pop()``,
  ``concept.relations.append(...)``, ``stats.helpful.append(...)``); and every assignment
  of a concept's id (``ids``). Its version is the "memory index" every derivation is
  stamped with.
- A memory's concept list (a :class:`TrackedList`) holds what was derived from it
  (:func:`derived`), each value with the clock version it was built at, and drops it with
  the list. A copy of a memory that hides retired or a task's own concepts is itself
  derived from its source's list, so it lives (and is rebuilt) with its source.

The clock is one per process, not one per memory, because memories share concept objects:
the copies above hold the very concepts of their source, and a parameter, a statistics
record or a ``relations`` list has no path back to the memory (or memories) holding its
concept. An edit made through any of them must reach every list holding that concept, and
the clock is the one place all of them read. Edits are rare next to renders (at most a
few per task), so rebuilding a derivation after any edit costs little. Only writing a
model's ``__dict__`` by hand goes unseen; the test suite sets :data:`VERIFY_VARIABLE`,
which checks every cache hit against a fresh derivation.
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, SupportsIndex, TypeVar

import yaml
from pydantic import AfterValidator, BaseModel

if TYPE_CHECKING:
    from typing_extensions import Self

T = TypeVar("T")
V = TypeVar("V")


class EditClock:
    """Counts the edits made to concepts in this process: ``version`` changes with each, so
    a value derived at one version is stale at any other; ``ids`` counts the assignments of
    a concept's id, the one edit that reaches the id indexes (:func:`list_index`) too."""

    __slots__ = ("_next", "_next_id", "ids", "version")

    def __init__(self) -> None:
        self._next = itertools.count(1)  # next() on a count is atomic under the GIL
        self._next_id = itertools.count(1)
        self.version = 0
        self.ids = 0

    def bump(self) -> None:
        """Record an edit (what was derived before it rebuilds on its next use)."""
        self.version = next(self._next)

    def id_assigned(self) -> None:
        """Record that some concept's id was assigned (every id index is rebuilt)."""
        self.ids = next(self._next_id)


CLOCK = EditClock()
# Set by the test suite: every cache hit is also checked against a fresh derivation, so a
# way of editing that does not bump the count fails the tests.
VERIFY_VARIABLE = "ARCMEMO_VERIFY_CACHES"


def count() -> int:
    """The edit clock's version: how many edits this process has made to concepts so far."""
    return CLOCK.version


bump = CLOCK.bump  # bound once: Tracked.__setattr__ calls it on every assignment


def verifying() -> bool:
    """Whether cache hits are checked against a fresh derivation (the test suite)."""
    return os.environ.get(VERIFY_VARIABLE) == "1"


class TrackedList(list[T]):
    """A list whose in-place changes count as edits; otherwise a plain list (equal to,
    serialised and copied as one).

    It also counts its own changes (:attr:`version`), keeps one index built over its
    items (:func:`list_index`) for as long as that count stays the same, and holds what
    was derived from it (:func:`derived`) for as long as the edit clock stays the same."""

    # Unset until first used: a memory creates a list for every field of every concept,
    # and an __init__ would cost each of them a Python call.
    __slots__ = ("__weakref__", "_derived", "_index", "_version")
    _index: tuple[int, int, str, Any]
    _version: int
    # what -> (clock version, value), least recently used first: only a memory's concept
    # list ever holds any.
    _derived: dict[str, tuple[int, Any]]

    def __reduce__(self) -> tuple[Any, ...]:
        # Copies and pickles are built whole, not appended to (which would count).
        return (TrackedList, (list(self),))

    @property
    def version(self) -> int:
        """How many in-place changes this list has had."""
        return getattr(self, "_version", 0)

    def _changed(self) -> None:
        bump()
        self._version = self.version + 1

    def append(self, item: T) -> None:
        self._changed()
        super().append(item)

    def extend(self, items: Iterable[T]) -> None:
        self._changed()
        super().extend(items)

    def insert(self, index: SupportsIndex, item: T) -> None:
        self._changed()
        super().insert(index, item)

    def remove(self, item: T) -> None:
        self._changed()
        super().remove(item)

    def pop(self, index: SupportsIndex = -1) -> T:
        self._changed()
        return super().pop(index)

    def clear(self) -> None:
        self._changed()
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._changed()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self._changed()
        super().reverse()

    def __setitem__(self, index: Any, value: Any) -> None:
        self._changed()
        super().__setitem__(index, value)

    def __delitem__(self, index: Any) -> None:
        self._changed()
        super().__delitem__(index)

    def __iadd__(self, items: Iterable[T]) -> TrackedList[T]:  # type: ignore[override,misc]
        self._changed()
        super().__iadd__(items)
        return self

    def __imul__(self, times: SupportsIndex) -> TrackedList[T]:
        self._changed()
        super().__imul__(times)
        return self


def list_index(
    items: Sequence[T], what: str, build: Callable[[Sequence[T]], V], *, stamp: int = 0
) -> V:
    """``build(items)``, kept by a tracked list until the list itself changes or ``stamp``
    does (one index per list, named ``what``); any other sequence is indexed afresh on
    every call.

    Unlike :func:`derived`, edits inside the items do not reach this index: it is for
    what an item cannot change once it is in a list (a concept's id), and the code that
    changes the list in place keeps the index in step with :func:`keep_index`. With
    :data:`VERIFY_VARIABLE` set, a kept index is checked against a fresh ``build``.
    """
    if type(items) is not TrackedList:
        return build(items)
    kept = getattr(items, "_index", None)
    if kept is not None and kept[:2] == (items.version, stamp) and kept[2] == what:
        value: V = kept[3]
        if verifying() and build(items) != value:
            raise StaleCacheError(f"{what}: an item of the list changed what it is indexed by")
        return value
    value = build(items)
    items._index = (items.version, stamp, what, value)
    return value


def keep_index(items: Sequence[T], what: str, value: Any, *, stamp: int = 0) -> None:
    """Record ``value`` as the current ``what`` index of ``items`` (after a change that the
    caller applied to the index as well, e.g. one appended item)."""
    if type(items) is TrackedList:
        items._index = (items.version, stamp, what, value)


class YamlDumper(yaml.SafeDumper):
    """YAML's safe dumper that writes a tracked list as a list (json and pickle already
    take it as one). Our own class: ``yaml.SafeDumper`` stays as the host process has it."""


YamlDumper.add_representer(TrackedList, yaml.representer.SafeRepresenter.represent_list)


def yaml_text(data: Any, **options: Any) -> str:
    """``yaml.safe_dump(data, **options)`` that also takes tracked lists."""
    return str(yaml.dump(data, Dumper=YamlDumper, **options))


def _tracked(items: list[T]) -> list[T]:
    return TrackedList(items)


# A list field whose in-place changes count as edits (the same schema as ``list[T]``).
TrackedListField = Annotated[list[T], AfterValidator(_tracked)]


def _track_lists(model: BaseModel) -> None:
    # Values that arrive without validation (model_copy's update, model_construct).
    for name, value in model.__dict__.items():
        if type(value) is list:
            model.__dict__[name] = TrackedList(value)


class Tracked(BaseModel):
    """A model whose field assignments count as edits; every list it is given without
    validation (assigned, copied in by ``model_copy(update=...)``) is tracked too."""

    def __setattr__(self, name: str, value: Any) -> None:
        bump()
        if type(value) is list:
            value = TrackedList(value)
        super().__setattr__(name, value)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copied = super().model_copy(update=update, deep=deep)
        if update:
            _track_lists(copied)
        return copied

    @classmethod
    # pydantic's mypy plugin gives every model its own typed model_construct signature.
    def model_construct(  # type: ignore[override]
        cls, _fields_set: set[str] | None = None, **values: Any
    ) -> Self:
        built = super().model_construct(_fields_set, **values)
        _track_lists(built)
        return built


class StaleCacheError(AssertionError):
    """A concept was edited in a way this module did not count (found by the test suite's
    check of every cache hit)."""


_LOCK = threading.Lock()
# Lists holding derivations, so that those from before an edit are let go at the next
# derivation (not kept alive by a list nobody renders again until it is).
# By identity (a list is unhashable); a dead entry goes at the next sweep, or when a new
# list takes its identity.
_HOLDERS: dict[int, weakref.ref[TrackedList[Any]]] = {}
# Derivations of plain sequences (slices, lists built by a caller): by their members'
# identities -> (clock version, the sequence, value); each entry keeps its sequence alive,
# so an identity in a key is never reused while the key is held.
_BY_MEMBERS: OrderedDict[tuple[str, tuple[int, ...]], tuple[int, Sequence[Any], Any]] = (
    OrderedDict()
)
_KEPT = 16  # derivations per list (and of plain sequences), the least recently used go
_swept = 0  # the clock version up to which stale derivations have been let go


def derived(
    what: str,
    items: Sequence[T],
    build: Callable[[Sequence[T]], V],
    check: Callable[[V], bool] | None = None,
) -> V:
    """``build(items)``, computed once per version of the list: kept (by a tracked list
    itself, else by its members' identities) until the list's members change or any
    concept is edited (:data:`CLOCK`).

    ``what`` names the derivation (one list holds several). With :data:`VERIFY_VARIABLE`
    set, a kept value is checked on every hit, by ``check`` or against a fresh ``build``,
    and :class:`StaleCacheError` is raised when it is stale. The value is shared: callers
    must not change it.
    """
    version = CLOCK.version  # before building, so an edit made meanwhile shows next call
    tracked = type(items) is TrackedList
    if tracked:
        kept = getattr(items, "_derived", None)
        with _LOCK:
            entry: tuple[Any, ...] | None = kept.pop(what, None) if kept else None
            hit = entry is not None and entry[0] == version
            if entry is not None and hit and kept is not None:
                kept[what] = (entry[0], entry[-1])  # the most recently used, last
    else:
        key = (what, tuple(map(id, items)))
        with _LOCK:
            entry = _BY_MEMBERS.get(key)
            hit = entry is not None and entry[0] == version
            if hit:
                _BY_MEMBERS.move_to_end(key)
    if hit:
        assert entry is not None
        value: V = entry[-1]
        if verifying() and not (check(value) if check else build(items) == value):
            raise StaleCacheError(f"{what}: a concept was edited without counting as an edit")
        return value
    value = build(items)
    _let_go_stale(version)
    if tracked:
        held: TrackedList[T] = items  # type: ignore[assignment]
        if getattr(held, "_derived", None) is None:
            held._derived = {}
            with _LOCK:
                _HOLDERS[id(held)] = weakref.ref(held)
        with _LOCK:
            held._derived[what] = (version, value)
            while len(held._derived) > _KEPT:  # a task's copy each: the oldest go
                del held._derived[next(iter(held._derived))]
    else:
        with _LOCK:
            _BY_MEMBERS[key] = (version, items, value)
            while len(_BY_MEMBERS) > _KEPT:
                _BY_MEMBERS.popitem(last=False)
    return value


def _let_go_stale(version: int) -> None:
    """Drop every derivation from before ``version`` (once per version of the clock)."""
    global _swept
    if _swept == version:
        return
    with _LOCK:
        _swept = version
        for key, ref in list(_HOLDERS.items()):
            holder = ref()
            if holder is None:
                del _HOLDERS[key]
                continue
            held = holder._derived
            for what in [w for w, (at, _) in held.items() if at != version]:
                del held[what]
        for members in [k for k, entry in _BY_MEMBERS.items() if entry[0] != version]:
            del _BY_MEMBERS[members]
