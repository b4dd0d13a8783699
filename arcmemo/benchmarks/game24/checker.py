"""Whether an expression solves a Game of 24 puzzle, and what was wrong when it does not.

The expression is model text, so it is read with bounds and never run: at most
:data:`MAX_EXPRESSION_CHARS` characters of digits, spaces, ``+ - * /`` and parentheses
(``×``, ``÷``, ``−`` and LaTeX's ``\\times``, ``\\div`` read as ``*``, ``/``, ``-``; a
trailing ``= 24`` dropped), parsed by :mod:`ast` into a tree at most :data:`MAX_DEPTH`
deep, of which only whole numbers and the four binary operators are accepted (a unary
minus, ``**`` and ``//`` are refused). It must use each of the puzzle's numbers exactly once
and no other, and equal 24 in exact rational arithmetic (:class:`fractions.Fraction`:
``8 / (3 - 8 / 3)`` is 24, not 23.99...). Numbers are compared before anything is computed,
so no value grows past what four numbers up to 13 make.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

from arcmemo.benchmarks.game24.puzzles import TARGET
from arcmemo.benchmarks.jsonl.checkers import Verdict

MAX_EXPRESSION_CHARS = 200
MAX_DEPTH = 32
_ALLOWED = re.compile(r"[0-9+\-*/() ]*")
_SPELLED = str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-", "\t": " "})
_LATEX = (("\\times", "*"), ("\\cdot", "*"), ("\\div", "/"), ("\\left", ""), ("\\right", ""))
_OPERATORS: dict[type[ast.operator], str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/",
}  # fmt: skip
_NAMED = {ast.Pow: "** (power)", ast.FloorDiv: "// (floor division)", ast.Mod: "% (remainder)"}


class _Refused(ValueError):
    """The expression breaks a rule; the message says which."""


def _normalized(answer: str) -> str:
    for latex, operator in _LATEX:
        answer = answer.replace(latex, operator)
    text = answer.translate(_SPELLED).strip().strip("$`").strip()
    if text.count("=") == 1:
        left, right = (side.strip() for side in text.split("="))
        text = left if right == str(TARGET) else right if left == str(TARGET) else text
    return text


def _numbers(node: ast.AST, depth: int = 0) -> list[int]:
    """The numbers of ``node`` in order, refusing anything but numbers and + - * /."""
    if depth > MAX_DEPTH:
        raise _Refused(f"the expression is nested more than {MAX_DEPTH} levels deep")
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [node.value]
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _OPERATORS:
            named = _NAMED.get(type(node.op), type(node.op).__name__)
            raise _Refused(f"the operator {named} is not allowed: use only + - * /")
        return _numbers(node.left, depth + 1) + _numbers(node.right, depth + 1)
    if isinstance(node, ast.UnaryOp):
        raise _Refused("a sign before a number or bracket is not allowed: use only + - * / "
                       "between two terms")  # fmt: skip
    raise _Refused("the expression may hold only whole numbers, + - * / and parentheses")


def _value(node: ast.AST) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return Fraction(node.value)
    assert isinstance(node, ast.BinOp)
    left, right = _value(node.left), _value(node.right)
    if isinstance(node.op, ast.Add):
        return left + right
    if isinstance(node.op, ast.Sub):
        return left - right
    if isinstance(node.op, ast.Mult):
        return left * right
    if right == 0:
        raise _Refused("the expression divides by zero")
    return left / right


def _count_problem(given: Sequence[int], used: list[int]) -> str | None:
    """What is wrong with the numbers ``used`` for a puzzle of ``given`` (None: nothing)."""
    want, have = Counter(given), Counter(used)
    strangers = sorted(n for n in have if n not in want)
    if strangers:
        return f"{', '.join(map(str, strangers))} {'is' if len(strangers) == 1 else 'are'} " \
            "not among the puzzle's numbers"  # fmt: skip
    for number in sorted(want):
        if have[number] > want[number]:
            return f"{number} is used {have[number]} times, but the puzzle has it " \
                f"{_times(want[number])}"  # fmt: skip
    missing = sorted((want - have).elements())
    if missing:
        return f"the expression does not use {', '.join(map(str, missing))}: use each " \
            "number exactly once"  # fmt: skip
    return None


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _shown(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value} (a fraction)"


def check_expression(numbers: Sequence[int], answer: str) -> Verdict:
    """Whether ``answer`` solves the puzzle of ``numbers``; a refusal names what was wrong."""
    text = _normalized(answer)
    if not text:
        return Verdict(False, "the answer holds no expression")
    if len(text) > MAX_EXPRESSION_CHARS:
        return Verdict(False, f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    if not _ALLOWED.fullmatch(text):
        odd = next(c for c in text if not _ALLOWED.fullmatch(c))
        return Verdict(
            False,
            f"the expression may hold only whole numbers, + - * / and parentheses (found {odd!r})",
        )
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Verdict(False, f"{text!r} is not a well-formed arithmetic expression")
    try:
        problem = _count_problem(numbers, _numbers(tree))
        if problem is not None:
            return Verdict(False, problem)
        value = _value(tree)
    except _Refused as refusal:
        return Verdict(False, str(refusal))
    if value != TARGET:
        return Verdict(False, f"the expression equals {_shown(value)}, not {TARGET}")
    return Verdict(True)
