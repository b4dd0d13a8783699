"""Behaviour on well-meaning programs, under every sandbox kind (hostile: test_hostile.py)."""

from __future__ import annotations

import threading

import pytest

from arcmemo.sandbox import Program, Sandbox, SandboxLimits
from tests.support.sandboxes import arc_program, call, make

FLIP = """
def transform(grid):
    print("rows", len(grid))
    return np.flipud(grid)
"""


def test_the_arc_shape_gets_numpy_arrays_and_returns_lists(sandbox: Sandbox) -> None:
    results = sandbox.run(arc_program(FLIP), [[[[1, 2], [3, 4]]], [[[5]]]])
    assert [r.ok for r in results] == [True, True]
    assert results[0].value == [[3, 4], [1, 2]]
    assert results[1].value == [[5]]
    assert results[0].stdout == "rows 2\n"
    probe = "def transform(grid):\n    return [[int(isinstance(grid, np.ndarray))]]\n"
    assert sandbox.run(arc_program(probe), [[[[0]]]])[0].value == [[1]]


def test_harness_frames_never_appear_in_tracebacks(sandbox: Sandbox) -> None:
    program = "def helper(g):\n    return g[10]\n\ndef transform(grid):\n    return helper(grid)\n"
    result = sandbox.run(arc_program(program), [[[[1]]]])[0]
    assert result.error_kind == "exception"
    error = result.error or ""
    assert 'File "<program>", line 5, in transform' in error
    assert 'File "<program>", line 2, in helper' in error
    assert "return g[10]" in error
    assert error.strip().endswith("IndexError: index 10 is out of bounds for axis 0 with size 1")
    assert "_arcmemo_transform" not in error and "<harness>" not in error
    assert "_worker" not in error and "_guard" not in error


def test_the_harness_cannot_be_swallowed_by_an_unfinished_program(sandbox: Sandbox) -> None:
    # Appended as text, the harness would become part of this string literal.
    result = sandbox.run(arc_program('x = """\n'), [[[[1]]]])[0]
    assert result.error_kind == "syntax"


def test_bindings_are_globals_of_the_program(sandbox: Sandbox) -> None:
    program = Program(
        source="def f():\n    return [np.__name__, it.__name__]\n",
        entry="f",
        bindings={"np": "numpy", "it": "itertools"},
    )
    assert sandbox.run(program, [[]])[0].value == ["numpy", "itertools"]


def test_call_passes_json_args_unconverted(sandbox: Sandbox) -> None:
    program = "def f(x, y):\n    return {'type': type(x).__name__, 'sum': x[0][0] + y}\n"
    results = call(sandbox, program, "f", [[[[1]], 2], [[[5]], 5]])
    assert [r.value for r in results] == [{"type": "list", "sum": 3}, {"type": "list", "sum": 10}]


def test_numpy_return_values_become_lists_and_numbers(sandbox: Sandbox) -> None:
    program = (
        "import numpy as np\n"
        "def f():\n    return {'a': np.arange(3), 'b': np.int64(4), 'c': np.float32(0.5),"
        " 'd': (np.bool_(True),)}\n"
    )
    assert call(sandbox, program, "f", [[]])[0].value == {
        "a": [0, 1, 2],
        "b": 4,
        "c": 0.5,
        "d": [True],
    }


def test_unserialisable_return_values_are_invalid_output(sandbox: Sandbox) -> None:
    program = (
        "import numpy as np\ndef f(k):\n    return [object(), float('nan'), np.array([None])][k]\n"
    )
    results = call(sandbox, program, "f", [[0], [1], [2]])
    assert [r.error_kind for r in results] == ["invalid_output"] * 3
    assert "object" in (results[0].error or "") and "NaN" in (results[1].error or "")


def test_syntax_error_fails_every_call(sandbox: Sandbox) -> None:
    results = sandbox.run(arc_program("def transform(grid:\n    return grid\n"), [[[[1]]], [[[2]]]])
    assert [r.error_kind for r in results] == ["syntax", "syntax"]
    assert "line 1" in (results[0].error or "")


def test_missing_entry_function_is_reported(sandbox: Sandbox) -> None:
    result = call(sandbox, "def solve(grid):\n    return grid\n", "transform", [[1]])[0]
    assert result.error_kind == "exception"
    assert "no function transform()" in (result.error or "")


def test_top_level_exception_fails_every_call(sandbox: Sandbox) -> None:
    results = call(sandbox, "x = 1 / 0\ndef f():\n    return 1\n", "f", [[], []])
    assert [r.error_kind for r in results] == ["exception", "exception"]
    assert "ZeroDivisionError" in (results[1].error or "")


def test_a_timeout_does_not_lose_the_other_calls(sandbox: Sandbox) -> None:
    program = "def f(x):\n    while x == 1:\n        pass\n    return x * 10\n"
    results = call(sandbox, program, "f", [[0], [1], [2]], limits=SandboxLimits(timeout_s=0.5))
    assert [r.error_kind for r in results] == [None, "timeout", None]
    assert [r.value for r in results] == [0, None, 20]


@pytest.mark.parametrize(
    ("body", "kind"),
    [("while True:\n            pass", "timeout"), ("import os\n        os._exit(3)", "crashed")],
)
def test_stop_after_failure_runs_nothing_after_a_timeout_or_crash(
    sandbox: Sandbox, body: str, kind: str
) -> None:
    source = f"def f(x):\n    if x == 1:\n        {body}\n    return x * 10\n"
    inputs: list[list[object]] = [[0], [1], [2], [3]]
    limits = SandboxLimits(timeout_s=0.5)
    program = Program(source=source, entry="f", stop_after_failure=True)
    results = sandbox.run(program, inputs, limits=limits)
    assert [r.error_kind for r in results] == [None, kind, "not_run", "not_run"]
    assert [r.value for r in results] == [0, None, None, None]
    assert results[2].error == f"not run: the program was stopped after call 2 ({kind})"
    assert not any(r.ok for r in results[1:])
    # Without the flag the remaining calls still run, each in a fresh process.
    results = sandbox.run(Program(source=source, entry="f"), inputs, limits=limits)
    assert [r.error_kind for r in results] == [None, kind, None, None]
    assert [r.value for r in results] == [0, None, 20, 30]


def test_state_does_not_leak_between_programs(sandbox: Sandbox) -> None:
    call(
        sandbox,
        "import numpy\nnumpy.SECRET = 7\nopen('f', 'w').write('x')\ndef f():\n    return 0\n",
        "f",
        [[]],
    )
    program = (
        "import numpy, os\ndef f():\n    return [getattr(numpy, 'SECRET', None), os.listdir('.')]\n"
    )
    assert call(sandbox, program, "f", [[]])[0].value == [None, []]


def test_calls_within_one_program_share_its_state(sandbox: Sandbox) -> None:
    program = "seen = []\ndef f(x):\n    seen.append(x)\n    return len(seen)\n"
    assert [r.value for r in call(sandbox, program, "f", [[1], [2], [3]])] == [1, 2, 3]


def test_top_level_output_is_kept_and_main_guard_does_not_run(sandbox: Sandbox) -> None:
    program = (
        "print('loading')\nif __name__ == '__main__':\n    raise SystemExit(3)\n"
        "def f():\n    print('call')\n"
    )
    result = call(sandbox, program, "f", [[]])[0]
    assert result.ok and result.stdout == "loading\ncall\n"


def test_many_threads_at_once(sandbox: Sandbox) -> None:
    program = "def f(x):\n    return x * x\n"
    answers: dict[int, object] = {}

    def work(k: int) -> None:
        answers[k] = [r.value for r in call(sandbox, program, "f", [[k], [k + 1]])]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == {k: [k * k, (k + 1) * (k + 1)] for k in range(12)}


@pytest.mark.parametrize("kind", ["bwrap", "process"])
def test_workers_started_from_a_thread_that_ended_keep_serving(kind: str) -> None:
    # bubblewrap's --die-with-parent follows the thread that started it, not the process.
    sandbox = make(kind, max_workers=2)
    try:
        program = "import time\ndef f(x):\n    time.sleep(0.2)\n    return x\n"
        threads = [
            threading.Thread(target=call, args=(sandbox, program, "f", [[k]])) for k in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        results = [call(sandbox, program, "f", [[k]])[0] for k in range(3)]
        assert [r.value for r in results] == [0, 1, 2], results
    finally:
        sandbox.close()
