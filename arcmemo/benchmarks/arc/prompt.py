"""ARC prompts: grids as text, the task description, retry feedback, program extraction.

Grids are written in one of :data:`GRID_FORMATS` (the ARC benchmark's ``grid_format``
option):

* ``numpy`` (default, the paper's form): ``[[0, 1, 2],\n [3, 4, 5]]``, exactly what
  ``numpy.array2string(grid, separator=", ")`` prints for an ARC grid (rows never wrap:
  30 cells fit its line width), so every cell is its own token for GPT-family tokenizers;
* ``spaces``: one row per line, cells separated by spaces (``0 1 2``);
* ``digits``: one row per line, cells run together (``012``), the most compact; tokenizers
  merge digit runs into tokens of up to three digits, which hides cell boundaries.

Shapes (``(3x3)``) and the labels of the test inputs are part of the prompt whatever the
format (the published prompts concatenated several test inputs without labels).
"""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple

from arcmemo.benchmarks.arc.data import ArcTask
from arcmemo.benchmarks.arc.grids import Grid
from arcmemo.benchmarks.base import NO_CUTS, PromptCuts
from arcmemo.core.records import Step
from arcmemo.models.structured import (
    PYTHON_LANGUAGES,
    fence_language,
    fenced_blocks,
    fenced_spans,
)

GridFormat = Literal["numpy", "digits", "spaces"]
GRID_FORMATS: tuple[GridFormat, ...] = ("numpy", "digits", "spaces")
DEFAULT_GRID_FORMAT: GridFormat = "numpy"


def format_grid(grid: Grid, fmt: GridFormat = DEFAULT_GRID_FORMAT) -> str:
    """``grid`` as prompt text in the format ``fmt`` (see the module docstring)."""
    rows = [[str(cell) for cell in row] for row in grid]
    if fmt == "numpy":
        return "[" + ",\n ".join("[" + ", ".join(row) + "]" for row in rows) + "]"
    if fmt == "spaces":
        return "\n".join(" ".join(row) for row in rows)
    if fmt == "digits":
        return "\n".join("".join(row) for row in rows)
    raise ValueError(f"unknown grid format {fmt!r}; choose one of {', '.join(GRID_FORMATS)}")


def shape(grid: Grid) -> str:
    return f"{len(grid)}x{len(grid[0]) if grid else 0}"


_DEFINES_TRANSFORM = re.compile(r"^\s*def\s+transform\s*\(", re.MULTILINE)
_BARE_TRANSFORM = re.compile(r"^def\s+transform\s*\(")
# Lines at the margin that belong to a module rather than to prose.
_CODE_AT_MARGIN = re.compile(r"^(def |class |import |from \S+ import |@|#)")

LENIENT_UNCLOSED = "an unclosed ```python block (the answer ends inside it), taken to the end"
LENIENT_BARE = (
    "no ```python block: the bare code defining transform, from the imports and definitions "
    "above it to the first line of prose after it"
)
LENIENT_FIRST_WITHOUT_TRANSFORM = (
    "the first ```python block defines no transform; run as written, as the paper's code does"
)


class FoundProgram(NamedTuple):
    """A program read from an answer, and how, where the answer left the asked format."""

    source: str
    lenient: str | None = None


def find_program(text: str) -> FoundProgram | None:
    """The program of an answer, read as a careful reader would, in this order:

    1. the last fenced ``python`` (or untagged) block that defines ``transform`` (models
       often draft first): the format the prompt asks for;
    2. a block the answer opens last and never closes (an answer cut at ``max_tokens``),
       when it defines ``transform``: everything after its opening line;
    3. bare code: the last ``def transform(`` at the margin outside any block, with the
       lines of code around it (imports, helpers and comments just above; its body and
       further definitions below), up to prose.

    2 and 3 carry their reading in ``lenient``; None when nothing defines ``transform``.
    """
    for body in reversed(fenced_blocks(text, PYTHON_LANGUAGES)):
        if _DEFINES_TRANSFORM.search(body):
            return FoundProgram(body.strip() + "\n")
    spans = fenced_spans(text)
    rest = text[spans[-1][2] + 3 :] if spans else text
    opening = _opening_fence(rest)
    if opening is not None and opening[0].lower() in PYTHON_LANGUAGES:
        body = rest[opening[1] :]
        if "```" not in body and _DEFINES_TRANSFORM.search(body):
            return FoundProgram(body.strip() + "\n", LENIENT_UNCLOSED)
    bare = _bare_program(_blank_blocks(text, spans))
    return FoundProgram(bare, LENIENT_BARE) if bare is not None else None


def _opening_fence(text: str) -> tuple[str, int] | None:
    """Language and body start of the first fence opening a line of ``text`` (a line that
    starts with three backquotes and ends), or None."""
    start = 0 if text.startswith("```") else text.find("\n```")
    if start < 0:
        return None
    start += 0 if text.startswith("```") else 1
    newline = text.find("\n", start + 3)
    if newline < 0:
        return None
    return fence_language(text, start, newline), newline + 1


def _blank_blocks(text: str, spans: list[tuple[int, int, int, str]]) -> str:
    """``text`` with every closed fenced block replaced by its line breaks."""
    parts, position = [], 0
    for start, _, end, _ in spans:
        parts += [text[position:start], "\n" * text.count("\n", start, end + 3)]
        position = end + 3
    parts.append(text[position:])
    return "".join(parts)


def _bare_program(text: str) -> str | None:
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _BARE_TRANSFORM.match(line)]
    if not starts:
        return None

    def is_code(line: str) -> bool:
        return not line.strip() or line[0] in " \t" or bool(_CODE_AT_MARGIN.match(line))

    first = last = starts[-1]
    while first > 0 and is_code(lines[first - 1]):
        first -= 1
    while last + 1 < len(lines) and is_code(lines[last + 1]):
        last += 1
    return "\n".join(lines[first : last + 1]).strip() + "\n"


def extract_program(text: str) -> str | None:
    """The program :func:`find_program` reads from ``text``, or None."""
    found = find_program(text)
    return found.source if found is not None else None


def find_first_program(text: str) -> FoundProgram | None:
    """The program of an answer as the paper's code takes it (the default ``paper`` layout):
    the first closed ```python block, else the first closed untagged one, run as written:
    a draft before the final answer is what gets run.

    When that block defines no ``transform`` it is still the program (the published code
    runs it, and every example then fails with ``transform`` undefined, which the retry
    shows), with :data:`LENIENT_FIRST_WITHOUT_TRANSFORM` recorded so that such answers can
    be counted. An answer with no closed block at all (one cut at ``max_tokens``) is read as
    :func:`find_program` reads it, its reading recorded in ``lenient``; the published code
    finds no program there.
    """
    tagged = fenced_blocks(text, tuple(lang for lang in PYTHON_LANGUAGES if lang))
    blocks = tagged or fenced_blocks(text, ("",))
    if not blocks:
        return find_program(text)
    first = blocks[0]
    lenient = None if _DEFINES_TRANSFORM.search(first) else LENIENT_FIRST_WITHOUT_TRANSFORM
    return FoundProgram(first.strip() + "\n", lenient)


def describe_task(task: ArcTask, fmt: GridFormat = DEFAULT_GRID_FORMAT) -> str:
    """The task as text (train pairs and test inputs, never test outputs)."""
    parts = []
    for index, pair in enumerate(task.train, 1):
        parts.append(
            f"Example {index} input ({shape(pair.input)}):\n{format_grid(pair.input, fmt)}"
        )
        parts.append(
            f"Example {index} output ({shape(pair.output)}):\n{format_grid(pair.output, fmt)}"
        )
    for index, grid in enumerate(task.test_inputs, 1):
        parts.append(f"Test {index} input ({shape(grid)}):\n{format_grid(grid, fmt)}")
    return "\n\n".join(parts) + "\n"


def solve_view(task: ArcTask, fmt: GridFormat = DEFAULT_GRID_FORMAT) -> dict[str, Any]:
    """The variables of ``prompts/arc/solve.j2`` for ``task`` (no test outputs)."""
    return {
        "train": [
            {
                "input": format_grid(p.input, fmt),
                "output": format_grid(p.output, fmt),
                "input_shape": shape(p.input),
                "output_shape": shape(p.output),
            }
            for p in task.train
        ],
        "tests": [{"grid": format_grid(g, fmt), "shape": shape(g)} for g in task.test_inputs],
    }


def mismatch_summary(output: Grid, expected: Grid) -> str:
    """One line in place of a produced grid that a prompt cut to fit the model's window
    leaves out: its shape against the expected one's and, when they agree, how many cells
    differ (the expected grid itself is among the examples above)."""
    if not output:
        return "an empty grid"
    if shape(output) != shape(expected):
        return f"a {shape(output)} grid, where the expected output is {shape(expected)}"
    cells = [
        (a, b)
        for row, want in zip(output, expected, strict=True)
        for a, b in zip(row, want, strict=True)
    ]
    wrong = sum(a != b for a, b in cells)
    return f"a {shape(output)} grid with {wrong} of {len(cells)} cells unlike the expected output"


def _short_error(error: str | None, earlier: list[dict[str, Any]]) -> str | None:
    """``error`` as a prompt cut to fit the model's window shows it: its last line (the
    exception and its message), or the earlier example it repeats."""
    if not error:
        return error
    lines = [line for line in error.strip().splitlines() if line.strip()]
    last = lines[-1].strip() if lines else error.strip()
    for failure in earlier:
        if failure["error"] == last:
            return f"the same error as example {failure['index']}"
    return last


# What a cut prompt says in place of the previous answer's prose, or of the whole answer.
PROSE_CUT = "(the reasoning around this program is left out to fit the context window)"
ANSWER_CUT = "(your previous answer is left out to fit the context window)"


def previous_view(
    task: ArcTask,
    step: Step,
    fmt: GridFormat = DEFAULT_GRID_FORMAT,
    *,
    with_completion: bool = False,
    cuts: PromptCuts = NO_CUTS,
) -> dict[str, Any]:
    """The variables ``previous`` of the solve templates for the failed ``step``, less
    what ``cuts`` name: the produced (and expected) grids of the mismatches, each then one
    line (``summary``); the answer's prose, the program alone then shown; the errors'
    tracebacks (:func:`_short_error`); the program."""
    failures: list[dict[str, Any]] = []
    not_run = []
    for check in step.checks:
        if check.correct:
            continue
        if check.error_kind == "not_run":
            not_run.append(check.index + 1)
            continue
        expected = task.train[check.index].output
        grids = not cuts.produced_grids
        failures.append(
            {
                "index": check.index + 1,
                "error": _short_error(check.error, failures)
                if cuts.error_tracebacks
                else check.error,
                "output": format_grid(check.output, fmt) if grids and check.output else "",
                "output_shape": shape(check.output) if grids and check.output else "",
                "expected": format_grid(expected, fmt) if grids else "",
                "expected_shape": shape(expected),
                "summary": "" if grids else mismatch_summary(check.output or [], expected),
            }
        )
    program = step.candidate or "(no program found in your answer)"
    completion = getattr(step, "completion", "") if with_completion else ""
    if cuts.previous_program or (completion and cuts.answer_prose and not step.candidate):
        program = completion = ANSWER_CUT  # an answer without a program is all prose
    elif completion and cuts.answer_prose:
        completion = f"{PROSE_CUT}\n```python\n{program.rstrip()}\n```"
    return {
        "number": getattr(step, "round", 0) + 1,  # a bare CheckResult is a first try
        "program": program,
        "completion": completion,
        "parse_error": step.parse_error,
        "failures": failures,
        "not_run": not_run,
        "passed": sum(c.correct for c in step.checks),
    }
