"""Behaviour of the local sandbox on well-meaning programs (hostile ones: test_hostile.py)."""

import threading

from arcmemo.sandbox import Sandbox, SandboxLimits

FLIP = """
def transform(grid):
    print("rows", len(grid))
    return np.flipud(grid)
"""


def test_run_transform_returns_grids_and_stdout(sandbox: Sandbox) -> None:
    results = sandbox.run_transform(FLIP, [[[1, 2], [3, 4]], [[5]]])
    assert [r.ok for r in results] == [True, True]
    assert results[0].value == [[3, 4], [1, 2]]
    assert results[1].value == [[5]]
    assert results[0].stdout == "rows 2\n"


def test_transform_receives_a_numpy_array_and_np_is_available(sandbox: Sandbox) -> None:
    program = "def transform(grid):\n    return [[int(isinstance(grid, np.ndarray))]]\n"
    assert sandbox.run_transform(program, [[[0]]])[0].value == [[1]]


def test_call_passes_json_args_unconverted(sandbox: Sandbox) -> None:
    program = "def f(x, y):\n    return {'type': type(x).__name__, 'sum': x[0][0] + y}\n"
    results = sandbox.call(program, "f", [[[[1]], 2], [[[5]], 5]])
    assert [r.value for r in results] == [{"type": "list", "sum": 3}, {"type": "list", "sum": 10}]


def test_numpy_return_values_become_lists(sandbox: Sandbox) -> None:
    program = "import numpy as np\ndef f():\n    return {'a': np.arange(3), 'b': np.int64(4)}\n"
    assert sandbox.call(program, "f", [[]])[0].value == {"a": [0, 1, 2], "b": 4}


def test_unserialisable_return_value_is_invalid_output(sandbox: Sandbox) -> None:
    result = sandbox.call("def f():\n    return object()\n", "f", [[]])[0]
    assert result.error_kind == "invalid_output"
    assert "object" in (result.error or "")


def test_exception_gives_trimmed_traceback_of_program_frames(sandbox: Sandbox) -> None:
    program = "def helper(g):\n    return g[10]\n\ndef transform(grid):\n    return helper(grid)\n"
    result = sandbox.run_transform(program, [[[1]]])[0]
    assert result.error_kind == "exception"
    error = result.error or ""
    assert 'File "<program>", line 5, in transform' in error
    assert 'File "<program>", line 2, in helper' in error
    assert "return g[10]" in error
    assert error.strip().endswith("IndexError: index 10 is out of bounds for axis 0 with size 1")
    assert "_worker" not in error and "_guard" not in error


def test_syntax_error_fails_every_call(sandbox: Sandbox) -> None:
    results = sandbox.run_transform("def transform(grid:\n    return grid\n", [[[1]], [[2]]])
    assert [r.error_kind for r in results] == ["syntax", "syntax"]
    assert "line 1" in (results[0].error or "")


def test_missing_function_is_reported(sandbox: Sandbox) -> None:
    result = sandbox.run_transform("def solve(grid):\n    return grid\n", [[[1]]])[0]
    assert result.error_kind == "exception"
    assert "no function transform()" in (result.error or "")


def test_top_level_exception_fails_every_call(sandbox: Sandbox) -> None:
    results = sandbox.call("x = 1 / 0\ndef f():\n    return 1\n", "f", [[], []])
    assert [r.error_kind for r in results] == ["exception", "exception"]
    assert "ZeroDivisionError" in (results[1].error or "")


def test_invalid_output_messages(sandbox: Sandbox) -> None:
    program = (
        "def transform(grid):\n"
        "    k = int(grid[0][0])\n"
        "    return [None, [[1, 2], [3]], [[12]], [[0] * 5] * 31, np.zeros((2, 2)), [[True]]][k]\n"
    )
    results = sandbox.run_transform(program, [[[k]] for k in range(6)])
    assert all(r.error_kind == "invalid_output" for r in results)
    errors = [r.error or "" for r in results]
    assert "returned None" in errors[0]
    assert "output row 1 has 1 cells, row 0 has 2" in errors[1]
    assert "value 12 at (0, 0) is not a color 0-9" in errors[2]
    assert "output is 31x5, larger than 30x30" in errors[3]
    assert "float" in errors[4]
    assert "bool" in errors[5]


def test_a_timeout_does_not_lose_the_other_calls(sandbox: Sandbox) -> None:
    program = "def f(x):\n    while x == 1:\n        pass\n    return x * 10\n"
    limits = SandboxLimits(timeout_s=0.5)
    results = sandbox.call(program, "f", [[0], [1], [2], [3]], limits=limits)
    assert [r.error_kind for r in results] == [None, "timeout", None, None]
    assert [r.value for r in results] == [0, None, 20, 30]


def test_state_does_not_leak_between_programs(sandbox: Sandbox) -> None:
    sandbox.call("import numpy\nnumpy.SECRET = 7\ndef f():\n    return 0\n", "f", [[]])
    program = "import numpy\ndef f():\n    return getattr(numpy, 'SECRET', None)\n"
    assert sandbox.call(program, "f", [[]])[0].value is None


def test_calls_within_one_program_share_its_state(sandbox: Sandbox) -> None:
    program = "seen = []\ndef f(x):\n    seen.append(x)\n    return len(seen)\n"
    assert [r.value for r in sandbox.call(program, "f", [[1], [2], [3]])] == [1, 2, 3]


def test_top_level_output_is_kept(sandbox: Sandbox) -> None:
    result = sandbox.call("print('loading')\ndef f():\n    print('call')\n", "f", [[]])[0]
    assert result.stdout == "loading\ncall\n"


def test_main_guard_does_not_run(sandbox: Sandbox) -> None:
    program = "if __name__ == '__main__':\n    raise SystemExit(3)\ndef f():\n    return 1\n"
    assert sandbox.call(program, "f", [[]])[0].value == 1


def test_many_threads_at_once(sandbox: Sandbox) -> None:
    program = "def f(x):\n    return x * x\n"
    answers: dict[int, object] = {}

    def work(k: int) -> None:
        answers[k] = [r.value for r in sandbox.call(program, "f", [[k], [k + 1]])]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == {k: [k * k, (k + 1) * (k + 1)] for k in range(16)}
