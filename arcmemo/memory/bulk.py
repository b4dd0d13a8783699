"""Building big object graphs without the cyclic garbage collector.

Loading a 30,000-concept memory creates millions of objects, and every few thousand the
collector walks all the objects that survived so far: measured at 30,000 concepts it
doubles the load (2.2 s against 1.1 s) for nothing, since none of them is garbage yet.
Validated models hold no reference cycles, so pausing the collector while building them
frees nothing late; reference counting frees what is dropped meanwhile either way.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_LOCK = threading.Lock()
_paused = 0  # nested or concurrent pauses: the collector resumes when the last ends
_resume = False


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic collector off (as it was before, afterwards)."""
    global _paused, _resume
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
