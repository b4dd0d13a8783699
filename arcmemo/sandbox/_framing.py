"""Frames on the sandbox's pipes: a 4-byte big-endian length, then that many bytes of JSON.

Used on both sides of every pipe: by the parent (``arcmemo.sandbox._pool``) and, as a plain
top-level module, by the worker interpreter (``_worker.py``), so it imports only the
standard library. Readers never trust the other side: a frame is size-bounded, and a
malformed one is reported as such, never raised.
"""

from __future__ import annotations

import json
import os
import re
import select
import struct
import time
from typing import Any

HEADER = struct.Struct(">I")
MAX_ITEMS = 200_000
"""Most JSON items (containers, and elements after the first of each) one returned value may
hold: what a reader builds from a frame is bounded by this, not only by the frame's bytes
(two bytes of ``{}`` become a 64-byte dict)."""
MAX_DEPTH = 64
"""Deepest nesting of containers in a frame."""
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_OPENING = frozenset(b"[{")


class BadFrame(Exception):
    """The other side sent something that is not a frame of the expected shape."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def encode(payload: Any) -> bytes:
    """``payload`` as one frame (strict JSON: no NaN or infinities)."""
    data = json.dumps(payload, allow_nan=False).encode("utf-8")
    return HEADER.pack(len(data)) + data


def write_frame(fd: int, payload: Any) -> None:
    """Write one frame to ``fd`` completely."""
    view = memoryview(encode(payload))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def decode(data: bytes) -> dict[str, Any]:
    """The JSON object in a frame's body; BadFrame for anything else."""
    try:
        frame = json.loads(data, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:
        raise BadFrame(f"the frame is not JSON ({type(error).__name__})") from None
    if not isinstance(frame, dict):
        raise BadFrame("the frame is not a JSON object")
    return frame


def within_bounds(data: bytes, max_items: int, max_depth: int = MAX_DEPTH) -> bool:
    """Whether the JSON text ``data`` holds at most ``max_items`` items nested at most
    ``max_depth`` deep; linear in its size, and it builds nothing (checked before decoding)."""
    opens = data.count(b"[") + data.count(b"{")
    if opens + data.count(b",") <= max_items and opens <= max_depth:
        return True  # the counts include brackets and commas inside strings: an upper bound
    # Without escapes the strings are exactly every other piece between quotes.
    escaped = b"\\" in data
    bare = _STRING.sub(b'""', data) if escaped else b"".join(data.split(b'"')[0::2])
    opens = bare.count(b"[") + bare.count(b"{")
    if opens + bare.count(b",") > max_items:
        return False
    if opens <= max_depth:
        return True
    depth = 0
    for bracket in bare.translate(None, _NOT_BRACKETS):
        depth += 1 if bracket in _OPENING else -1
        if depth > max_depth:
            return False
    return True


class FrameReader:
    """Reads frames from a pipe with deadlines and a size bound."""

    def __init__(self, fd: int, max_bytes: int, max_items: int | None = None) -> None:
        self.fd = fd
        self.max_bytes = max_bytes
        self.max_items = max_items
        self.buffer = bytearray()
        self.eof = False

    def next(self, deadline: float | None = None) -> dict[str, Any] | str:
        """The next frame, or ``"timeout"``, ``"eof"``, ``"garbage"`` (a malformed or
        over-large frame; the stream is unusable afterwards) or ``"oversized"`` (a frame of
        more than ``max_items`` items or nested too deeply, skipped without decoding)."""
        while True:
            if len(self.buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self.buffer)
                if size > self.max_bytes:
                    return "garbage"
                if len(self.buffer) >= HEADER.size + size:
                    data = bytes(self.buffer[HEADER.size : HEADER.size + size])
                    del self.buffer[: HEADER.size + size]
                    if self.max_items is not None and not within_bounds(data, self.max_items):
                        return "oversized"
                    try:
                        return decode(data)
                    except BadFrame:
                        return "garbage"
            if self.eof:
                return "eof"
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return "timeout"
                ready, _, _ = select.select([self.fd], [], [], remaining)
                if not ready:
                    return "timeout"
            chunk = os.read(self.fd, 1 << 20)
            if chunk:
                self.buffer += chunk
            else:
                self.eof = True
