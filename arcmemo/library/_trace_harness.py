"""Trusted harness that records the calls of a verified program's helper functions.

Never imported by arcmemo: :mod:`arcmemo.library.trace` reads it as text and appends it to
the program, followed by a call of :func:`_arcmemo_install`, so it shares the program's
globals: each helper is replaced there by a wrapper, and the program's functions find the
wrapper by its global name when they call it. A call is recorded only when it is the
outermost call of that helper (recursion is not recorded twice), fewer than ``max_calls``
were recorded for it on this input, its arguments and result have an encoding and the
record is at most ``max_chars`` characters of JSON. Errors of the
program propagate, so the sandbox reports them with the program's traceback.
"""

import json as _arcmemo_json
import types as _arcmemo_types

import numpy as _arcmemo_np

_arcmemo_codec = _arcmemo_types.ModuleType("arcmemo_values")
_arcmemo_config: dict = {}
_arcmemo_calls: dict = {}
_arcmemo_skipped: dict = {}
_arcmemo_active: dict = {}


def _arcmemo_wrap(name, function):
    def traced(*args, **kwargs):
        calls = _arcmemo_calls.setdefault(name, [])
        if _arcmemo_active.get(name) or len(calls) >= _arcmemo_config["max_calls"]:
            return function(*args, **kwargs)
        try:
            before = _arcmemo_codec.encode(list(args))
            keywords = {key: _arcmemo_codec.encode(item) for key, item in kwargs.items()}
        except _arcmemo_codec.Unrecordable:
            before = None
        _arcmemo_active[name] = True
        try:
            value = function(*args, **kwargs)
        finally:
            _arcmemo_active[name] = False
        record = None
        if before is not None:
            try:
                result = _arcmemo_codec.outcome(before, list(args), value)
                record = {"args": before, "kwargs": keywords, "result": result}
            except _arcmemo_codec.Unrecordable:
                record = None
        if record is not None:
            text = _arcmemo_codec.canonical(record)
            if len(text) > _arcmemo_config["max_chars"]:
                record = None
        if record is None:
            _arcmemo_skipped[name] = _arcmemo_skipped.get(name, 0) + 1
        else:
            calls.append(record)
        return value

    traced.__wrapped__ = function  # type: ignore[attr-defined]
    traced.__name__ = getattr(function, "__name__", name)
    traced.__doc__ = getattr(function, "__doc__", None)
    return traced


def _arcmemo_install(codec_source, helpers, entry, max_calls, max_chars):
    exec(codec_source, _arcmemo_codec.__dict__)
    _arcmemo_config.update(entry=entry, max_calls=max_calls, max_chars=max_chars)
    for name in helpers:
        function = globals().get(name)
        if callable(function) and not isinstance(function, type):
            globals()[name] = _arcmemo_wrap(name, function)


def _arcmemo_traced(grid):
    _arcmemo_calls.clear()
    _arcmemo_skipped.clear()
    output = globals()[_arcmemo_config["entry"]](_arcmemo_np.array(grid))
    if isinstance(output, _arcmemo_np.ndarray):
        output = output.tolist()
    return {
        "output": output,
        "calls": _arcmemo_json.dumps(_arcmemo_calls),
        "skipped": _arcmemo_json.dumps(_arcmemo_skipped),
    }
