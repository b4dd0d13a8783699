"""AIME answer extraction: the last ``\\boxed{}`` (nesting and normalisation), then
final-answer phrases; answers are integers 0..999."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# Longer digit strings are no AIME answer (and Python refuses int() past 4,300 digits).
_MAX_DIGITS = 18
# An answer text longer than this is read as no integer: no written integer is, and the
# repeated unwrapping of nested \text{...} would be quadratic in it.
MAX_ANSWER_CHARS = 1_000
MIN_ANSWER = 0
MAX_ANSWER = 999


class ExtractedAnswer(BaseModel):
    """The final answer found in a model's output."""

    model_config = ConfigDict(frozen=True)

    raw: str | None = Field(description="The extracted answer text, before normalisation.")
    value: int | None = Field(
        description="The answer as an integer 0..999; None if absent, non-integer or out of range."
    )
    method: Literal["boxed", "phrase", "none"] = Field(
        description="Where it came from: the last \\boxed{}, a final-answer phrase, or nowhere."
    )


_BOXED = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])\s*")
_BRACE = re.compile(r"[{}]")
_BARE_BOXED_ARGUMENT = re.compile(r"[+-]?\d[\d,]*")
# "final answer" may be followed directly by the number (e.g. a heading); a bare "answer" needs
# "is", ":" or "=" so that prose such as "answer 3 questions" is not taken as an answer.
_PHRASE = re.compile(
    r"(?:\bfinal\s+answer\b[\s*_#:]*(?:is\b|=)?|\banswer\b[\s*_]*(?:is\b|:|=))[\s*_:$]*",
    re.IGNORECASE,
)
# What ends the token after a phrase.
_TOKEN_END = re.compile(r"[\s$*]")
# Sentence punctuation after the answer, but not the ")" of a "\)" math delimiter.
_PUNCTUATION = ".,;:!?)"
_TEXT_COMMANDS = re.compile(
    r"\\(?:text|textbf|textrm|textit|textnormal|mathrm|mathbf|mathit|mbox|boldsymbol|"
    r"operatorname|boxed|fbox)\s*\{([^{}]*)\}"
)
_TRAILING_UNIT = re.compile(
    r"(?<=[\d}])\s*\\(?:text|textrm|mbox|mathrm)\s*\{\s*[A-Za-z][A-Za-z .]*\}\s*$"
)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree(?![A-Za-z])")
_LATEX_NOISE = re.compile(r"\\[$%]|\$|\\[()\[\]]|\\(?:displaystyle|left|right)(?![A-Za-z])")
_LATEX_SPACES = re.compile(r"\\[,;:! ]|~|\\quad|\\qquad")
_THOUSANDS_SEPARATOR = re.compile(r"(?<=\d)[ ,](?=\d{3}(?!\d))")
_INTEGER = re.compile(r"[+-]?\d+(?:\.0*)?")


def extract_answer(text: str) -> ExtractedAnswer:
    """Find the final integer answer in ``text``.

    Order: the last complete ``\\boxed{...}`` / ``\\fbox{...}`` (nested braces handled; an
    unclosed one from a truncated output is skipped); else the last explicit answer phrase
    ("final answer: 016", "**Final Answer:** 73", "the answer is 73", "Answer: 42") followed
    by something containing a digit; else nothing (``method="none"``). There is deliberately no
    "last number in the text" fallback, so a missing answer is never counted as a wrong one.

    The found text is kept as ``raw``; ``value`` is its integer after :func:`normalize_answer`,
    or None when that is not an integer in 0..999. The last box counts even when its content is
    not an integer (an earlier box is not consulted).
    """
    boxed = _last_boxed(text)
    if boxed is not None:
        return ExtractedAnswer(raw=boxed, value=normalize_answer(boxed), method="boxed")
    phrase = _last_phrase(text)
    if phrase is not None:
        return ExtractedAnswer(raw=phrase, value=normalize_answer(phrase), method="phrase")
    return ExtractedAnswer(raw=None, value=None, method="none")


def normalize_answer(raw: str) -> int | None:
    """Turn an extracted answer string into an integer 0..999, or None.

    :func:`parse_integer` followed by the AIME range check (negative numbers and values above
    999 give None); so does a text longer than :data:`MAX_ANSWER_CHARS`.
    """
    if len(raw) > MAX_ANSWER_CHARS:
        return None
    value = parse_integer(raw)
    return value if value is not None and MIN_ANSWER <= value <= MAX_ANSWER else None


def parse_integer(raw: str) -> int | None:
    """Read an answer string written in LaTeX or plain text as an integer (no range check).

    Removes ``$``/``\\(``/``\\)`` delimiters, ``\\text{}``-style wrappers and bare braces
    (``{16}``, ``1{,}000``), a trailing ``\\text{unit}``, degree marks (``^\\circ``, ``°``),
    ``\\%``, LaTeX spaces, thousands separators (``1,000``, ``1\\,000``) and a trailing
    period; keeps only what follows a single ``=`` (``m+n=73`` -> 73); accepts leading zeros
    (``016``), a sign, and an integral decimal (``16.0``). Fractions, other decimals, lists and
    expressions give None.
    """
    text = _TRAILING_UNIT.sub("", raw.strip())
    previous = None
    while previous != text:
        previous, text = text, _TEXT_COMMANDS.sub(r"\1", text)
    text = _DEGREES.sub("", text)
    text = _LATEX_NOISE.sub("", text)
    text = _LATEX_SPACES.sub(" ", text)
    text = text.replace("{", "").replace("}", "")
    if text.count("=") == 1:  # "m+n=73": the value is the right-hand side
        text = text.split("=", 1)[1]
    text = re.sub(r"\s+", " ", text).strip().rstrip(".").strip()
    text = _THOUSANDS_SEPARATOR.sub("", text)
    text = re.sub(r"^([+-])\s+", r"\1", text)
    if not _INTEGER.fullmatch(text):
        return None
    digits = text.split(".", 1)[0]
    if len(digits.lstrip("+-").lstrip("0")) > _MAX_DIGITS:
        return None  # far out of range anyway; int() of thousands of digits raises
    return int(digits)


def _last_boxed(text: str) -> str | None:
    found: str | None = None
    closers: dict[int, int] | None = None
    for match in _BOXED.finditer(text):
        start = match.end()
        if start < len(text) and text[start] == "{":
            if closers is None:
                closers = _matching_braces(text)
            close = closers.get(start)
            content = text[start + 1 : close] if close is not None else None
        else:
            bare = _BARE_BOXED_ARGUMENT.match(text, start)
            content = bare.group(0) if bare else None
        if content is not None:
            found = content.strip()
    return found


def _matching_braces(text: str) -> dict[int, int]:
    """Where each brace group of ``text`` closes: opening index -> closing index, for every
    group that closes (a brace after a backslash is no brace). One pass with a stack, so
    that an answer of many unclosed ``\\boxed{`` is not rescanned once per box."""
    closers: dict[int, int] = {}
    stack: list[int] = []
    for match in _BRACE.finditer(text):
        index = match.start()
        if index > 0 and text[index - 1] == "\\":
            continue
        if match.group(0) == "{":
            stack.append(index)
        elif stack:
            closers[stack.pop()] = index
    return closers


def _last_phrase(text: str) -> str | None:
    found: str | None = None
    token_end = -1  # the first token end at or after the last phrase read
    for match in _PHRASE.finditer(text):
        start = match.end()
        if token_end < start:
            # Phrases come in order, so each stretch of text is searched once (searched
            # anew per phrase, "answer:answer:..." would read to the end every time).
            end = _TOKEN_END.search(text, start)
            token_end = end.start() if end else len(text)
        if token_end == start or token_end - start > MAX_ANSWER_CHARS:
            continue  # no token, or a run of non-space too long to be an answer
        candidate = _without_trailing_punctuation(text[start:token_end])
        if any(char.isdigit() for char in candidate):
            found = candidate
    return found


def _without_trailing_punctuation(token: str) -> str:
    """``token`` less the sentence punctuation that ends it (read from the end: a regular
    expression anchored at the end retries every start of a run of punctuation)."""
    end = len(token)
    while end > 0 and token[end - 1] in _PUNCTUATION and (end < 2 or token[end - 2] != "\\"):
        end -= 1
    return token[:end]
