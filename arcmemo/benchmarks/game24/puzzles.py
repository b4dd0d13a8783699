"""The Game of 24 puzzles: every multiset of four numbers from 1 to 13 that can make 24.

A puzzle is four numbers ``a <= b <= c <= d``; it is kept when some expression using each
number exactly once with ``+ - * /`` and parentheses equals 24 in exact (rational)
arithmetic. Of the 1,820 multisets, :data:`PUZZLE_COUNT` = 1,362 can. They are listed in
ascending order of their numbers read as a tuple (``1 1 1 8``, ``1 1 1 11``, ..., ``12 12
13 13``, ...), each with one solution our search found (never shown to a solver).

The list ships as ``puzzles.txt`` next to this module (the search takes seconds, too slow for
every load); ``python -m arcmemo.benchmarks.game24.puzzles`` writes it again, and a test
checks that the shipped file is what the search gives.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from importlib import resources

TARGET = 24
LOWEST, HIGHEST = 1, 13
PUZZLE_COUNT = 1362
PUZZLES_FILE = "puzzles.txt"

Puzzle = tuple[tuple[int, ...], str]


def _results(a: Fraction, b: Fraction) -> Iterator[Fraction]:
    yield a + b
    yield a - b
    yield b - a
    yield a * b
    if b:
        yield a / b
    if a:
        yield b / a


@cache
def _reaches(values: tuple[Fraction, ...]) -> bool:
    """Whether ``values`` (sorted) combine to :data:`TARGET`."""
    if len(values) == 1:
        return values[0] == TARGET
    for i, j in itertools.combinations(range(len(values)), 2):
        rest = values[:i] + values[i + 1 : j] + values[j + 1 :]
        if any(_reaches(tuple(sorted((*rest, v)))) for v in _results(values[i], values[j])):
            return True
    return False


def _witness(terms: list[tuple[Fraction, str]]) -> str | None:
    """An expression for ``terms`` (value, text) that makes :data:`TARGET`, or None."""
    if len(terms) == 1:
        return terms[0][1] if terms[0][0] == TARGET else None
    for i, j in itertools.combinations(range(len(terms)), 2):
        (a, x), (b, y) = terms[i], terms[j]
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        made = [(a + b, f"({x} + {y})"), (a - b, f"({x} - {y})"), (b - a, f"({y} - {x})"),
                (a * b, f"({x} * {y})")]  # fmt: skip
        if b:
            made.append((a / b, f"({x} / {y})"))
        if a:
            made.append((b / a, f"({y} / {x})"))
        for value, text in made:
            if _reaches(tuple(sorted([v for v, _ in rest] + [value]))):
                found = _witness([*rest, (value, text)])
                if found is not None:
                    return found
    return None


def _outer(text: str) -> str:
    """``text`` without the parentheses around the whole expression."""
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def generate() -> list[Puzzle]:
    """Every puzzle with one solution, in the order of the module docstring (seconds)."""
    found: list[Puzzle] = []
    for numbers in itertools.combinations_with_replacement(range(LOWEST, HIGHEST + 1), 4):
        if _reaches(tuple(Fraction(n) for n in numbers)):
            solution = _witness([(Fraction(n), str(n)) for n in numbers])
            assert solution is not None
            found.append((numbers, _outer(solution)))
    return found


def render(puzzles: list[Puzzle]) -> str:
    """The text of ``puzzles.txt``: per line the four numbers, a tab and the solution."""
    return "".join(f"{' '.join(map(str, numbers))}\t{solution}\n" for numbers, solution in puzzles)


def load() -> list[Puzzle]:
    """The shipped puzzles (``puzzles.txt``), in order."""
    text = (
        resources.files("arcmemo.benchmarks.game24")
        .joinpath(PUZZLES_FILE)
        .read_text(encoding="utf-8")
    )
    puzzles: list[Puzzle] = []
    for line in text.splitlines():
        numbers, _, solution = line.partition("\t")
        puzzles.append((tuple(int(n) for n in numbers.split()), solution))
    return puzzles


def puzzle_id(numbers: tuple[int, ...]) -> str:
    """A puzzle's id: its numbers joined by dashes (``3-3-8-8``)."""
    return "-".join(map(str, numbers))


if __name__ == "__main__":
    sys.stdout.write(render(generate()))
