"""The parent's side of a zygote's channel, against fake zygotes that lie.

A fake zygote speaks the framing protocol from a small script (no sandbox around it) and
answers each request the way a zygote taken over by a program would: with another
request's id, with extra frames after the reply, or with a reply of millions of objects.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from arcmemo.sandbox import _framing
from arcmemo.sandbox._pool import Zygote

FAKE = """
import json, os, struct, sys, time
sys.path.insert(0, {folder!r})
import _framing
mode = sys.argv[1]
reader = _framing.FrameReader(0, 1 << 30)
_framing.write_frame(1, {{"hello": os.getpid()}})
while True:
    request = reader.next()
    if not isinstance(request, dict):
        break
    n = len(request["inputs"])
    result = {{"ok": True, "value": 7, "duration_s": 0.0, "stdout": ""}}
    reply = {{"id": request["id"], "results": [result] * n, "retire": False}}
    if mode == "other-id":
        reply["id"] = "0" * 32
    if mode == "bomb":
        reply["results"] = [dict(result, value=[{{}}] * 3_000_000)] * n
    frames = _framing.encode(reply)
    if mode == "trailing":
        frames += _framing.encode(dict(reply, id="f" * 32))
    os.write(1, frames)
    if mode == "late":
        time.sleep(0.2)
        _framing.write_frame(1, dict(reply, id="f" * 32))
"""


def _zygote(tmp_path: Path, mode: str) -> Zygote:
    script = tmp_path / "fake_zygote.py"
    script.write_text(FAKE.format(folder=str(Path(_framing.__file__).parent)))
    return Zygote([sys.executable, "-I", str(script), mode], str(tmp_path), {})


def _request(zygote: Zygote, n: int = 2) -> list:
    payload = {"inputs": [[1]] * n}
    results = zygote.request(payload, time.monotonic() + 30, n)
    assert results is not None
    return results


def test_an_honest_reply_is_taken_and_the_zygote_kept(tmp_path: Path) -> None:
    zygote = _zygote(tmp_path, "honest")
    try:
        assert [r.value for r in _request(zygote)] == [7, 7]
        assert not zygote.retired
    finally:
        zygote.kill()


@pytest.mark.parametrize("mode", ["other-id", "trailing"])
def test_a_frame_for_another_request_is_crashed_and_retires_the_zygote(
    tmp_path: Path, mode: str
) -> None:
    zygote = _zygote(tmp_path, mode)
    try:
        results = _request(zygote)
        if mode == "other-id":
            assert all(r.error_kind == "crashed" for r in results), results
        assert zygote.retired
    finally:
        zygote.kill()


def test_a_frame_arriving_after_the_reply_retires_the_zygote_before_the_next_request(
    tmp_path: Path,
) -> None:
    zygote = _zygote(tmp_path, "late")
    try:
        assert [r.value for r in _request(zygote)] == [7, 7]
        time.sleep(0.5)  # the late frame arrives
        assert zygote.request({"inputs": [[1]]}, time.monotonic() + 30, 1) is None
        assert zygote.retired
    finally:
        zygote.kill()


def test_a_reply_of_millions_of_objects_is_invalid_output_without_decoding(tmp_path: Path) -> None:
    zygote = _zygote(tmp_path, "bomb")
    try:
        results = _request(zygote, 1)
        assert [r.error_kind for r in results] == ["invalid_output"]
        assert zygote.retired
    finally:
        zygote.kill()


def test_bounds_count_items_and_depth_outside_strings() -> None:
    grid = str([[1] * 30] * 30).encode()
    assert _framing.within_bounds(grid, 1000)
    assert not _framing.within_bounds(b"[" + b"{}," * 10 + b"{}]", 5)
    assert _framing.within_bounds(b'{"a": "[[[[,,,,,,,,", "b": [[1, 2]]}', 10, 3)
    assert _framing.within_bounds(b'{"a": "[[\\"[[,,,,,,", "b": [[1, 2]]}', 10, 3)
    assert not _framing.within_bounds(b"[" * 70 + b"]" * 70, 1000)
    assert not _framing.within_bounds(b'["x", ' + b"[" * 70 + b"]" * 70 + b"]", 1000)
