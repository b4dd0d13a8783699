"""Building big object graphs without the cyclic garbage collector.

Loading a 30,000-concept memory or a 4,000-task run creates millions of objects that live
on, and every full collection walks all of them again: measured, a 30,000-concept load
took 2.2 s with the collector and 1.1 s without, a 4,000-task report load 13.4 s and 5.4 s,
for nothing, since none of them is garbage yet. Validated models and loaded records hold
no reference cycles, so pausing the collector frees nothing late; reference counting frees
what is dropped meanwhile either way.

What such a build leaves behind is still in the youngest generation when the collector
resumes, so the next collections walk all of it, promoting it generation by generation
(0.5 s of a 16-task run at 30,000 concepts). :func:`lasting` builds it and leaves it out of
collections (``gc.freeze``) for as long as its user keeps it.

The collector is the host process's, so both are opt-in: :func:`paused_gc` and
:func:`lasting` touch it only inside :func:`collector_pauses`, which the ``arcmemo``
command enters for the whole command. A program using the Python API gets the same speed
by entering it around its own loads and renders (``with arcmemo.collector_pauses(): ...``);
without it, a load or render leaves the collector as it is.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")

_LOCK = threading.Lock()
_paused = 0  # nested or concurrent pauses: the collector resumes when the last ends
_resume = False
_frozen = 0  # nested or concurrent lasting blocks: everything thaws when the last ends
_allowed = 0  # open collector_pauses blocks (nested or concurrent)


@contextlib.contextmanager
def collector_pauses() -> Iterator[None]:
    """Within the block, let arcmemo pause the cyclic collector while it builds or renders
    a big memory or run (``gc.disable``, undone when the build ends) and keep a run's or a
    command's memory out of collections while it is used (``gc.freeze``, undone when that
    use ends); outside any such block, arcmemo never touches the collector."""
    global _allowed
    with _LOCK:
        _allowed += 1
    try:
        yield
    finally:
        with _LOCK:
            _allowed -= 1


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic collector off (as it was before, afterwards), inside
    :func:`collector_pauses`; elsewhere the block runs as it is."""
    global _paused, _resume
    if not _allowed:
        yield
        return
    with _LOCK:
        if _paused == 0:
            _resume = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _LOCK:
            _paused -= 1
            if _paused == 0 and _resume:
                gc.enable()


@contextlib.contextmanager
def lasting(build: Callable[[], T]) -> Iterator[T]:
    """``build()``, built with the collector paused, and every object alive then (what it
    built above all) left out of collections until the block ends, inside
    :func:`collector_pauses`; elsewhere just ``build()``.

    For what lives as long as the block (a run's memory, a command's): skipping it frees
    nothing late, since it holds no cycles; cyclic garbage that was alive at the freeze is
    collected after the block, which hands everything back to the oldest generation.
    """
    global _frozen
    if not _allowed:
        yield build()
        return
    with paused_gc():
        built = build()
        with _LOCK:
            gc.freeze()  # before the collector resumes, or its first collection walks them
            _frozen += 1
    try:
        yield built
    finally:
        with _LOCK:
            _frozen -= 1
            if _frozen == 0:
                gc.unfreeze()
