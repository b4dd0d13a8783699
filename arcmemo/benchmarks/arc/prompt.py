"""ARC prompts: grids as text, the task description, retry feedback, program extraction."""

from __future__ import annotations

import re
from typing import Any

from arcmemo.benchmarks.arc.data import ArcTask
from arcmemo.records import Step
from arcmemo.sandbox.grids import Grid
from arcmemo.structured import PYTHON_LANGUAGES, fenced_blocks


def format_grid(grid: Grid) -> str:
    """Rows of digits, one row per line."""
    return "\n".join("".join(str(cell) for cell in row) for row in grid)


def shape(grid: Grid) -> str:
    return f"{len(grid)}x{len(grid[0]) if grid else 0}"


_DEFINES_TRANSFORM = re.compile(r"^\s*def\s+transform\s*\(", re.MULTILINE)


def extract_program(text: str) -> str | None:
    """The last fenced code block that defines ``transform`` (models often draft first)."""
    for body in reversed(fenced_blocks(text, PYTHON_LANGUAGES)):
        if _DEFINES_TRANSFORM.search(body):
            return body.strip() + "\n"
    return None


def describe_task(task: ArcTask) -> str:
    """The task as text (train pairs and test inputs, never test outputs)."""
    parts = []
    for index, pair in enumerate(task.train, 1):
        parts.append(f"Example {index} input ({shape(pair.input)}):\n{format_grid(pair.input)}")
        parts.append(f"Example {index} output ({shape(pair.output)}):\n{format_grid(pair.output)}")
    for index, grid in enumerate(task.test_inputs, 1):
        parts.append(f"Test {index} input ({shape(grid)}):\n{format_grid(grid)}")
    return "\n\n".join(parts) + "\n"


def previous_view(task: ArcTask, step: Step) -> dict[str, Any]:
    failures = []
    for check in step.checks:
        if check.correct:
            continue
        expected = task.train[check.index].output
        failures.append(
            {
                "index": check.index + 1,
                "error": check.error,
                "output": format_grid(check.output) if check.output else "",
                "output_shape": shape(check.output) if check.output else "",
                "expected": format_grid(expected),
                "expected_shape": shape(expected),
            }
        )
    return {
        "program": step.candidate or "(no program found in your answer)",
        "parse_error": step.parse_error,
        "failures": failures,
        "passed": sum(c.correct for c in step.checks),
    }
