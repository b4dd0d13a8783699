"""JSON escape damage in problem text: ``\\frac`` written into JSON unescaped reads back as a
form feed followed by ``rac``.

JSON turns ``\\b``, ``\\f``, ``\\n``, ``\\r`` and ``\\t`` into control characters, so a file
whose writer forgot to double LaTeX backslashes holds a backspace where ``\\boxed`` was
meant, a form feed for ``\\frac`` and a tab for ``\\times``. :func:`repair_escapes` puts the
command back where the letters after the control character spell a LaTeX command (a
backspace or form feed anywhere, since problem text has no use for them; a tab, newline or
carriage return only inside math, where they are otherwise plausible) and names every other
control character it leaves.
"""

from __future__ import annotations

import bisect
import re

from pydantic import BaseModel, Field

# The LaTeX commands each JSON escape letter can begin, by that letter.
_COMMANDS = {
    "\b": {
        "b", "backslash", "bar", "begin", "beta", "bf", "big", "bigcap", "bigcup", "bigg",
        "bigl", "bigr", "binom", "bmod", "bot", "boxed", "bullet",
    },
    "\f": {"fbox", "flat", "forall", "frac"},
    "\t": {
        "tan", "tau", "tbinom", "text", "textbf", "textit", "textrm", "tfrac", "therefore",
        "theta", "tilde", "times", "to", "top", "triangle",
    },
    "\n": {
        "nabla", "ne", "neg", "neq", "newline", "ngeq", "ni", "nleq", "nmid", "not", "nu",
    },
    "\r": {"rangle", "rceil", "rfloor", "rho", "right", "rightarrow", "rm"},
}  # fmt: skip
_LETTER = {"\b": "b", "\f": "f", "\t": "t", "\n": "n", "\r": "r"}
_ONLY_IN_MATH = {"\t", "\n", "\r"}
_DAMAGE = re.compile(r"([\b\f\t\n\r])([A-Za-z]*)")
# Control characters left after repair (tab and newline are text).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# What opens or closes math: an unescaped $, or \( \) \[ \].
_MATH_MARK = re.compile(r"(?<!\\)\$|\\[()\[\]]")


class EscapeReport(BaseModel):
    """What :func:`repair_escapes` did to one text."""

    repairs: list[str] = Field(default_factory=list, description="Each command restored.")
    controls: list[str] = Field(
        default_factory=list, description="Code points of control characters left in the text."
    )


def _math_toggles(text: str) -> list[int]:
    """Positions where math opens or closes, in order."""
    return [m.start() for m in _MATH_MARK.finditer(text)]


def repair_escapes(text: str) -> tuple[str, EscapeReport]:
    """``text`` with JSON escape damage repaired, and what was repaired or left."""
    report = EscapeReport()
    toggles: list[int] | None = None

    def fix(match: re.Match[str]) -> str:
        nonlocal toggles
        control, letters = match.group(1), match.group(2)
        name = _LETTER[control] + letters
        if name not in _COMMANDS[control]:
            return match.group(0)
        if control in _ONLY_IN_MATH:
            if toggles is None:
                toggles = _math_toggles(text)
            if bisect.bisect_left(toggles, match.start()) % 2 == 0:
                return match.group(0)  # outside math: a real tab or line break
        report.repairs.append(f"\\{name}")
        # "\\frac" written as "\\\frac": the backslash is there, only the letter is lost.
        after_backslash = match.start() > 0 and text[match.start() - 1] == "\\"
        return name if after_backslash else "\\" + name

    repaired = _DAMAGE.sub(fix, text)
    report.controls = sorted({f"U+{ord(c):04X}" for c in _CONTROL.findall(repaired)})
    return repaired, report
