"""The trusted harness texts run in the sandbox, with the value codec they carry."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_HERE = Path(__file__).parent


@cache
def _text(name: str) -> str:
    return (_HERE / name).read_text(encoding="utf-8")


def codec_source() -> str:
    """The text of :mod:`arcmemo.library.values`, which the harnesses exec in the sandbox."""
    return _text("values.py")


def trace_harness(helpers: list[str], *, entry: str, max_calls: int, max_chars: int) -> str:
    """The harness that wraps ``helpers`` and calls ``entry`` (``_arcmemo_traced``)."""
    arguments = [codec_source(), sorted(helpers), entry, int(max_calls), int(max_chars)]
    call = ", ".join(repr(argument) for argument in arguments)
    return _text("_trace_harness.py") + f"\n_arcmemo_install({call})\n"


def call_harness() -> str:
    """The harness whose ``_arcmemo_call(name, args, kwargs)`` runs one recorded call."""
    return _text("_call_harness.py") + f"\n_arcmemo_load_codec({codec_source()!r})\n"
