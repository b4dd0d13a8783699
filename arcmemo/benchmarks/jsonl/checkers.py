"""Deciding whether an answer to a user's problem is right: the ``checker`` option.

``exact`` (the same text, ignoring surrounding space and case), ``numeric`` (the same number
within 1e-6 relative; fractions and thousands separators read), ``choice`` (the same option
letter, ``(B)`` or ``B.`` read as ``B``), ``regex:PATTERN`` (the answer matches PATTERN in
full), ``python:MODULE:FUNCTION`` (user code: ``FUNCTION(answer, reference, problem)`` returns
a bool, or ``(bool, feedback)``, or ``{"correct": bool, "feedback": str}``).

Only the answer the solver wrote is read: the text after its last ``Answer:``, else its last
``\\boxed{...}``, else its last non-empty line, at most :data:`MAX_ANSWER_CHARS` characters.
A regular expression and user code both run in the sandbox, under its time limit: a pattern
that backtracks for ever, or a checker that reads the caller's files or environment, is
contained like any model-written program. A checker's feedback (never the reference) is what
a feedback round tells the solver.
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from arcmemo.sandbox.base import Program, SandboxLimits
from arcmemo.sandbox.text import clean_text

MAX_ANSWER_CHARS = 1_000
MAX_FEEDBACK_CHARS = 1_000
# Only the end of a response is searched for its answer (linear time whatever its size).
_TAIL_CHARS = 20_000
_ANSWER = re.compile(r"answer\s*[:=]", re.IGNORECASE)
_BOXED = "\\boxed{"
_CHOICE = re.compile(r"\(?([A-Za-z])[).:]?")
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?(?:/\d+)?|[-+]?\.\d+")
CHECK_LIMITS = SandboxLimits(timeout_s=2.0, memory_mb=512)


class CheckerError(ValueError):
    """A ``checker`` option that cannot be used (one line, naming what is wrong)."""


@dataclass(frozen=True)
class Verdict:
    """Whether an answer is right, and what the solver may be told."""

    correct: bool
    feedback: str = ""


def extract_answer(completion: str) -> str | None:
    """The answer a response gives (see the module docstring), or None."""
    tail = completion[-_TAIL_CHARS:]
    found = None
    for found in _ANSWER.finditer(tail):  # noqa: B007 - the last one is wanted
        pass
    if found is not None:
        text = tail[found.end() :].strip().splitlines()
        answer = text[0].strip() if text else ""
    elif (start := tail.rfind(_BOXED)) >= 0:
        answer = _braced(tail, start + len(_BOXED))
    else:
        lines = [line.strip() for line in tail.splitlines() if line.strip()]
        answer = lines[-1] if lines else ""
    answer = answer.strip().strip("$").strip()
    return clean_text(answer[:MAX_ANSWER_CHARS]) or None


def _braced(text: str, start: int) -> str:
    depth = 1
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[start:index]
    return text[start:]


def _number(text: str) -> float | None:
    found = _NUMBER.search(text.replace(" ", ""))
    if found is None:
        return None
    value = found.group().replace(",", "")
    try:
        return float(Fraction(value)) if "/" in value else float(value)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


def check_exact(answer: str, reference: str) -> Verdict:
    return Verdict(" ".join(answer.split()).lower() == " ".join(reference.split()).lower())


def check_numeric(answer: str, reference: str) -> Verdict:
    got, want = _number(answer), _number(reference)
    if got is None:
        return Verdict(False, f"the answer {answer!r} is not a number")
    if want is None:
        return Verdict(False)
    return Verdict(math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9))


def check_choice(answer: str, reference: str) -> Verdict:
    got, want = _CHOICE.match(answer.strip()), _CHOICE.match(reference.strip())
    if got is None:
        return Verdict(False, f"the answer {answer!r} names no option letter")
    return Verdict(want is not None and got.group(1).upper() == want.group(1).upper())


BUILT_IN: dict[str, Callable[[str, str], Verdict]] = {
    "exact": check_exact,
    "numeric": check_numeric,
    "choice": check_choice,
}

# Run in the sandbox: the pattern is the user's, the answer the model's.
_REGEX_HARNESS = """
import re
def __arcmemo_regex(pattern, answer):
    return re.fullmatch(pattern, answer) is not None
"""


@dataclass(frozen=True)
class Checker:
    """A parsed ``checker`` option: a built-in, a pattern, or user code to run sandboxed."""

    spec: str
    builtin: str | None = None
    pattern: str | None = None
    source: str | None = None
    function: str | None = None

    @property
    def needs_reference(self) -> bool:
        """Whether an answer can be judged only against a reference (not a regex)."""
        return self.pattern is None

    @property
    def sandboxed(self) -> bool:
        return self.builtin is None

    def program(self) -> Program:
        """The sandboxed program of a regex or Python checker."""
        if self.pattern is not None:
            return Program(source=_REGEX_HARNESS, entry="__arcmemo_regex")
        assert self.source is not None and self.function is not None
        return Program(source=self.source, entry=self.function)

    def arguments(self, answer: str, reference: str | None, problem: str) -> list[Any]:
        if self.pattern is not None:
            return [self.pattern, answer]
        return [answer, reference, problem]


def parse_checker(spec: str) -> Checker:
    """The checker ``spec`` names; a Python checker's source is read here (in the parent)."""
    if spec in BUILT_IN:
        return Checker(spec, builtin=spec)
    kind, _, rest = spec.partition(":")
    if kind == "regex" and rest:
        try:
            re.compile(rest)
        except re.error as error:
            raise CheckerError(f"checker {spec!r}: not a regular expression ({error})") from None
        return Checker(spec, pattern=rest)
    if kind == "python":
        module, _, function = rest.rpartition(":")
        if not module or not function.isidentifier():
            raise CheckerError(f"checker {spec!r}: expected python:MODULE:FUNCTION")
        return Checker(spec, source=_module_source(module, spec), function=function)
    raise CheckerError(
        f"unknown checker {spec!r}: use exact, numeric, choice, regex:PATTERN or "
        "python:MODULE:FUNCTION"
    )


def _module_source(module: str, spec: str) -> str:
    """The text of ``module``: a ``.py`` file, or an importable module's file (not imported:
    the code runs only in the sandbox)."""
    if module.endswith(".py"):
        path = Path(module)
    else:
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        if found is None or not found.origin or not found.origin.endswith(".py"):
            raise CheckerError(f"checker {spec!r}: no Python source file for module {module!r}")
        path = Path(found.origin)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CheckerError(f"checker {spec!r}: cannot read {path} ({error})") from None


def verdict_of(value: Any) -> Verdict | None:
    """What a sandboxed checker returned, as a verdict (None: not a verdict)."""
    if isinstance(value, bool):
        return Verdict(value)
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], bool):
        return Verdict(value[0], clean_text(str(value[1]), MAX_FEEDBACK_CHARS))
    if isinstance(value, dict) and isinstance(value.get("correct"), bool):
        feedback = value.get("feedback") or ""
        return Verdict(value["correct"], clean_text(str(feedback), MAX_FEEDBACK_CHARS))
    return None
