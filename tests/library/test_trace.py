"""Tracing: the helpers' real calls, recorded in the sandbox."""

from __future__ import annotations

from arcmemo.library.trace import trace_program
from arcmemo.library.values import decode
from arcmemo.sandbox import Sandbox
from tests.support.library_programs import pairs, programs

PROGRAM = """
def double(x):
    return x * 2

def countdown(n):
    return 0 if n == 0 else countdown(n - 1)

def fill(grid, colour):
    grid[:, :] = colour

def transform(grid):
    for value in range(6):
        double(value)
    countdown(3)
    out = grid.copy()
    fill(out, double(int(grid[0, 0])))
    return out
"""


def test_every_call_recorded_is_a_real_one(bwrap: Sandbox) -> None:
    examples = [([[1, 0]], [[2, 2]]), ([[2]], [[4]])]
    trace = trace_program(bwrap, "t", PROGRAM, examples, ["double", "countdown", "fill"])
    assert trace.matched == 2 and not trace.errors
    doubles = trace.calls["double"]
    # At most 4 calls a helper on each example: the first ones.
    assert [(c.args, c.result) for c in doubles] == [([v], v * 2) for v in (0, 1, 2, 3)] * 2
    assert {c.task_id for c in doubles} == {"t"}
    # Recursion is recorded at its outermost call only.
    assert [(c.args, c.result) for c in trace.calls["countdown"]] == [([3], 0), ([3], 0)]
    # A call that changes its argument records what the argument became.
    fill = trace.calls["fill"][0]
    effect = decode(fill.result)
    assert effect["returned"] is None
    assert effect["args"][0].tolist() == [[2, 2]]
    assert decode(fill.args)[0].tolist() == [[1, 0]]


def test_an_example_with_a_wrong_output_records_nothing(bwrap: Sandbox) -> None:
    examples = [([[1, 0]], [[9, 9]]), ([[2]], [[4]])]
    trace = trace_program(bwrap, "t", PROGRAM, examples, ["double"])
    assert trace.matched == 1
    assert "example 0" in trace.errors[0]
    assert len(trace.calls["double"]) == 4


def test_calls_over_the_size_limit_are_counted_not_recorded(bwrap: Sandbox) -> None:
    examples = [([[1] * 20] * 20, [[2] * 20] * 20)]
    trace = trace_program(bwrap, "t", PROGRAM, examples, ["fill"], max_chars=200)
    assert "fill" not in trace.calls or not trace.calls["fill"]
    assert trace.skipped["fill"] == 1


def test_a_failing_program_reports_its_error(bwrap: Sandbox) -> None:
    trace = trace_program(
        bwrap, "t", "def transform(grid):\n    return 1 / 0\n", [([[1]], [[1]])], ["x"]
    )
    assert trace.matched == 0 and "ZeroDivisionError" in trace.errors[0]


def test_the_fixture_programs_trace_their_helpers(bwrap: Sandbox) -> None:
    source = programs()["aaaa0002"]
    trace = trace_program(
        bwrap,
        "aaaa0002",
        source,
        pairs()["aaaa0002"],
        ["crop", "recolor", "most_common"],
    )
    assert trace.matched == 2
    assert {name: len(calls) for name, calls in trace.calls.items()} == {
        "crop": 2,
        "recolor": 2,
        "most_common": 2,
    }


def test_a_program_that_forges_its_trace_loses_that_example_only(bwrap: Sandbox) -> None:
    forged = PROGRAM + (
        "\n_real = transform\n"
        "def transform(grid):\n"
        "    out = _real(grid)\n"
        "    _arcmemo_calls['double'] = [{'args': [1], 'surprise': 2}]\n"
        "    return out\n"
    )
    trace = trace_program(bwrap, "t", forged, [([[1, 0]], [[2, 2]])], ["double"])
    assert trace.matched == 0 and not trace.calls
    assert "unreadable trace" in trace.errors[0]
