"""Refactoring: programs import the library's functions and still solve their tasks."""

from __future__ import annotations

import ast
from typing import Any, cast

from arcmemo.library import BuildReport
from arcmemo.library.refactor import refactor_program, refactor_programs, rewrite
from arcmemo.memory.schema import Memory
from arcmemo.sandbox import CallResult, Program, Sandbox
from tests.support.library_programs import ENTRY_POINTS, pairs, programs

SOURCE = """import numpy as np
import random

class Unused:
    pass

def helper(grid):
    return Unused

@staticmethod
def other(grid):
    return random.random()

def transform(grid):
    return other(grid)
"""


def test_rewrite_replaces_helpers_and_drops_what_nothing_uses() -> None:
    text = rewrite(SOURCE, {"helper": "lib_helper", "other": "other"})
    assert text.startswith("from arcmemo_library import other\n")
    assert "lib_helper" not in text  # nothing left calls helper
    assert "class Unused" not in text and "import random" not in text
    assert "@staticmethod" not in text and "def other" not in text
    assert "import numpy as np" not in text
    ast.parse(text)


def test_the_fixture_programs_all_still_pass_and_shrink(
    built: tuple[Memory, BuildReport], bwrap: Sandbox
) -> None:
    memory, _ = built
    report, kept = refactor_programs(
        programs(), pairs(tests=True), memory, bwrap, entry_points=ENTRY_POINTS
    )
    assert report.passing == 3
    by_task = {p.task_id: p for p in report.programs}
    assert by_task["aaaa0002"].imports == {
        "crop": "crop",
        "recolor": "paint",
        "most_common": "most_common",
    }
    assert "from arcmemo_library import paint as recolor" in kept["aaaa0002"]
    assert "def recolor" not in kept["aaaa0002"]
    # dominant has most_common's behaviour, and the program still passes with it.
    assert by_task["aaaa0003"].imports["dominant"] == "most_common"
    assert "shifted" not in by_task["aaaa0003"].imports  # no library function has it
    assert report.tokens_after < report.tokens_before
    assert all(p.tokens_after < p.tokens_before for p in report.programs)
    assert report.library_tokens > 0


def test_a_program_the_library_breaks_is_kept_as_it_was(
    built: tuple[Memory, BuildReport], bwrap: Sandbox
) -> None:
    memory, _ = built
    source = programs()["aaaa0002"]
    wrong = [(pairs()["aaaa0002"][0][0], [[0]])]
    report, kept = refactor_program(
        bwrap, memory, "aaaa0002", source, wrong, entry_points=ENTRY_POINTS
    )
    assert not report.passed and report.error is not None
    assert kept == source and report.tokens_after == report.tokens_before


class _Recording:
    """A sandbox that records the programs it runs and runs them in bwrap."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.programs: list[Program] = []

    def run(self, program: Program, inputs: list[list[Any]], **kwargs: Any) -> list[CallResult]:
        self.programs.append(program)
        return self.inner.run(program, inputs, **kwargs)


def test_a_refactored_program_is_verified_as_arcmemo_run_runs_it(
    built: tuple[Memory, BuildReport], bwrap: Sandbox
) -> None:
    """The rewritten program is verified with its library as ``Program.library`` (the
    module the sandbox builds in the program's child), the program's text unchanged: one
    way to run a program with a library, no trusted code prefixed to it."""
    memory, _ = built
    recording = _Recording(bwrap)
    report, kept = refactor_program(
        cast(Sandbox, recording),
        memory,
        "aaaa0002",
        programs()["aaaa0002"],
        pairs(tests=True)["aaaa0002"],
        entry_points=ENTRY_POINTS,
    )
    assert report.passed and report.imports
    verified = [p for p in recording.programs if p.entry == "transform"]
    assert len(verified) == 1
    assert verified[0].source == kept
    for name in set(report.imports.values()):
        assert f"def {name}(" in verified[0].library
