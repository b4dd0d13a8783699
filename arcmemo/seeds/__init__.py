"""Hand-written seed solutions from other projects, converted into ``transform`` programs.

:mod:`arcmemo.benchmarks.arc.barc` imports the 160 BARC seed solutions the paper's memory starts
from. Converted programs may carry a *library section* (helpers inlined from another file)
between :data:`LIBRARY_BEGIN` and :data:`LIBRARY_END`; abstraction prompts show the program
without it (:func:`without_library`), as the paper showed the seed code alone.
"""

from __future__ import annotations

import re

LIBRARY_BEGIN = "# ---- begin library: definitions inlined from"
LIBRARY_END = "# ---- end library"
_LIBRARY = re.compile(
    rf"^{re.escape(LIBRARY_BEGIN)}(?P<origin>[^\n]*)\n.*?^{re.escape(LIBRARY_END)}[^\n]*\n",
    re.DOTALL | re.MULTILINE,
)
_DEFINED = re.compile(r"^(?:def|class)\s+(\w+)", re.MULTILINE)


def without_library(source: str) -> str:
    """``source`` with each library section replaced by a one-line note of what it defines."""

    def note(match: re.Match[str]) -> str:
        names = _DEFINED.findall(match.group(0))
        origin = match.group("origin").strip() or "a library"
        shown = ", ".join(names) if names else "nothing"
        return f"# (definitions from {origin} left out here: {shown})\n"

    return _LIBRARY.sub(note, source)


__all__ = ["LIBRARY_BEGIN", "LIBRARY_END", "without_library"]
