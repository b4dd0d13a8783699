"""Library sections: helpers inlined into a converted seed program from another file.

Converted programs (:mod:`arcmemo.benchmarks.arc.barc`) may carry a *library section*
between :data:`LIBRARY_BEGIN` and :data:`LIBRARY_END`; abstraction and selection prompts
show the program without it (:func:`without_library`), as the paper showed the seed code
alone.
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


def without_library(source: str, *, note: bool = True) -> str:
    """``source`` with each library section replaced by a one-line note of what it defines
    (with ``note``), else removed."""

    def noted(match: re.Match[str]) -> str:
        if not note:
            return ""
        names = _DEFINED.findall(match.group(0))
        origin = match.group("origin").strip() or "a library"
        shown = ", ".join(names) if names else "nothing"
        return f"# (definitions from {origin} left out here: {shown})\n"

    return _LIBRARY.sub(noted, source)
