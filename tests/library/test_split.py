"""Splitting programs into helpers with their closures, and the AST key of a closure."""

from __future__ import annotations

import pytest

from arcmemo.library.split import (
    ProgramSyntaxError,
    normalised_closure,
    positional_arity,
    signature_of,
    split_program,
)
from tests.support.library_programs import ENTRY_POINTS, programs

SOURCE = '''
import numpy as np
from typing import *
SIZE = 3
class Box:
    pass

def outer(grid: np.ndarray, colour=1) -> np.ndarray:
    """Outer."""
    return inner(grid) * SIZE  # a comment

def inner(g):
    return g + 1

def lonely():
    return Box()

def transform(grid):
    return outer(grid)
'''


def test_helpers_exclude_the_entry_points_and_carry_what_they_need() -> None:
    program = split_program("t", SOURCE, frozenset({"transform"}))
    assert list(program.helpers) == ["outer", "inner", "lonely"]
    assert program.helper_closure("outer") == ["outer", "inner"]
    texts = [s.text for s in program.preamble(["outer"])]
    assert texts == ["import numpy as np", "from typing import *", "SIZE = 3"]
    assert [s.text for s in program.preamble(["lonely"])][-1].startswith("class Box")
    extra = [s.text for s in program.preamble(["inner"], {"Box"})]
    assert any(text.startswith("class Box") for text in extra)


def test_the_ast_key_ignores_names_docstrings_comments_and_layout() -> None:
    renamed = SOURCE.replace("outer", "outside").replace("inner(g)", "inner(values)")
    renamed = renamed.replace("return g + 1", "return values   +  1").replace('"""Outer."""', "")
    first = split_program("a", SOURCE, frozenset({"transform"}))
    second = split_program("b", renamed, frozenset({"transform"}))
    assert normalised_closure(first, "outer") == normalised_closure(second, "outside")
    changed = split_program("c", SOURCE.replace("return g + 1", "return g + 2"), frozenset())
    assert normalised_closure(first, "outer") != normalised_closure(changed, "outer")
    # The statements around count only with the preamble.
    other_size = split_program("d", SOURCE.replace("SIZE = 3", "SIZE = 4"), frozenset())
    assert normalised_closure(first, "outer") != normalised_closure(other_size, "outer")
    assert normalised_closure(first, "outer", preamble=False) == normalised_closure(
        other_size, "outer", preamble=False
    )


def test_the_fixture_programs_share_code_under_other_names() -> None:
    split = {task: split_program(task, text, ENTRY_POINTS) for task, text in programs().items()}
    assert normalised_closure(split["aaaa0001"], "paint") == normalised_closure(
        split["aaaa0002"], "recolor"
    )
    assert normalised_closure(split["aaaa0001"], "crop") == normalised_closure(
        split["aaaa0002"], "crop"
    )
    assert normalised_closure(split["aaaa0001"], "crop") != normalised_closure(
        split["aaaa0003"], "crop"
    )


def test_signature_and_arity() -> None:
    program = split_program("t", SOURCE, frozenset({"transform"}))
    outer = program.helpers["outer"].node
    assert signature_of(outer) == "(grid: np.ndarray, colour=1) -> np.ndarray"
    assert positional_arity(outer) == 2


def test_a_program_that_does_not_parse_names_its_task() -> None:
    with pytest.raises(ProgramSyntaxError, match="bad: line 1"):
        split_program("bad", "def (:\n", frozenset())
