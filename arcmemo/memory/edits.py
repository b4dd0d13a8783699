"""A process-wide count of edits to concepts, and :func:`derived`: what is computed from a
concept list once per version of it (the relation index and usefulness order of
:mod:`arcmemo.memory.relations`, the retired and task-owned concepts, the names a selector
may answer), so that rendering a prompt for every task of a run costs what the prompt
shows, not what the memory holds.

Every way of changing what those caches read bumps the count: assigning a field of a
memory, a concept, a parameter, its provenance or its statistics (:class:`Tracked`), and
changing one of their lists in place (:class:`TrackedList`: ``memory.concepts.pop()``,
``concept.relations.append(...)``, ``stats.helpful.append(...)``). A cache is kept for one
list (a memory's tracked concept list, or any other sequence by its members' identities)
and only until the next edit, so no caller has to remember to invalidate anything, and a
render never sees a stale index. Only writing a model's ``__dict__`` by hand goes unseen;
the test suite sets :data:`VERIFY_VARIABLE`, which checks every cache hit against a fresh
derivation.

The count is global, not per memory: memories share concept objects (the copies that hide
retired or a task's own concepts), and an edit through one must reach the caches of all.
Edits are rare next to renders (at most a few per task), so rebuilding every cache after
any edit costs little.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, SupportsIndex, TypeVar

import yaml
from pydantic import AfterValidator, BaseModel

if TYPE_CHECKING:
    from typing_extensions import Self

T = TypeVar("T")
V = TypeVar("V")

_COUNTER = itertools.count(1)  # next() on a count is atomic under the GIL
_edits = 0
# Set by the test suite: every cache hit is also checked against a fresh derivation, so a
# way of editing that does not bump the count fails the tests.
VERIFY_VARIABLE = "ARCMEMO_VERIFY_CACHES"


def count() -> int:
    """How many edits this process has made to concepts so far."""
    return _edits


def bump() -> None:
    """Record an edit (caches built before it rebuild on their next use)."""
    global _edits
    _edits = next(_COUNTER)


def verifying() -> bool:
    """Whether cache hits are checked against a fresh derivation (the test suite)."""
    return os.environ.get(VERIFY_VARIABLE) == "1"


class TrackedList(list[T]):
    """A list whose in-place changes count as edits; otherwise a plain list (equal to,
    serialised and copied as one).

    It also counts its own changes (:attr:`version`), and keeps one index built over its
    items (:func:`list_index`) for as long as that count stays the same."""

    # Unset until first used: a memory creates a list for every field of every concept,
    # and an __init__ would cost each of them a Python call.
    __slots__ = ("_index", "_version")
    _index: tuple[int, int, str, Any]
    _version: int

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


# A list to YAML's safe dumper too (json and pickle already take it as one).
for _dumper in (yaml.SafeDumper, getattr(yaml, "CSafeDumper", None)):
    if _dumper is not None:  # the C dumper keeps its own table (when libyaml is built in)
        _dumper.add_representer(TrackedList, yaml.representer.SafeRepresenter.represent_list)


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
# (what, the list's identity or its members') -> (edit count, the list, value). Each entry
# keeps its list alive, so an identity in a key is never reused while the key is held.
_DERIVED: OrderedDict[tuple[str, object], tuple[int, Sequence[Any], Any]] = OrderedDict()
_KEPT = 16


def derived(
    what: str,
    items: Sequence[T],
    build: Callable[[Sequence[T]], V],
    check: Callable[[V], bool] | None = None,
) -> V:
    """``build(items)``, computed once per version of the list: kept until the list's
    members change (compared by identity) or any concept is edited.

    ``what`` names the derivation (one cache serves several). With
    :data:`VERIFY_VARIABLE` set, a kept value is checked on every hit, by ``check`` or
    against a fresh ``build``, and :class:`StaleCacheError` is raised when it is stale.
    The value is shared: callers must not change it.
    """
    # A tracked list counts its own changes, so the list itself is the key; any other
    # sequence is known by its members.
    key = (what, id(items)) if type(items) is TrackedList else (what, tuple(map(id, items)))
    with _LOCK:
        kept = _DERIVED.get(key)
        if kept is not None and kept[0] == _edits and (kept[1] is items or type(key[1]) is tuple):
            _DERIVED.move_to_end(key)
        else:
            kept = None
    if kept is not None:
        value: V = kept[2]
        if verifying() and not (check(value) if check else build(items) == value):
            raise StaleCacheError(f"{what}: a concept was edited without counting as an edit")
        return value
    edits = _edits  # before building, so an edit made meanwhile shows on the next call
    value = build(items)
    with _LOCK:
        # An entry from before the last edit can never be used again: let it go now.
        for old in [k for k, entry in _DERIVED.items() if entry[0] != _edits]:
            del _DERIVED[old]
        _DERIVED[key] = (edits, items, value)
        _DERIVED.move_to_end(key)
        while len(_DERIVED) > _KEPT:
            _DERIVED.popitem(last=False)
    return value
