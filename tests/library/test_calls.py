"""Re-running recorded tests in the sandbox: a test that does not reproduce fails."""

from __future__ import annotations

from arcmemo.library import Unrecordable, encode, run_recorded_tests
from arcmemo.library.calls import check_function, run_calls
from arcmemo.memory.schema import Concept, LibraryFunction, Memory, RecordedCall
from arcmemo.sandbox import Sandbox

SOURCE = '''import numpy as np

class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

def total(pair, scale=1):
    """Sum of a pair, scaled."""
    return np.int64((pair.a + pair.b) * scale)
'''


class Pair:
    def __init__(self, a: int, b: int) -> None:
        self.a, self.b = a, b


def _memory(result: object) -> Memory:
    call = RecordedCall(
        args=[encode(Pair(1, 2))], kwargs={"scale": 2}, result=encode(result), task_id="t"
    )
    function = LibraryFunction(name="total", source=SOURCE, tests=[call], sources=["t"])
    memory = Memory()
    memory.add(Concept(name="total", kind="routine", functions=[function]))
    return memory


def test_recorded_objects_arguments_and_results_reproduce(bwrap: Sandbox) -> None:
    import numpy as np

    [result] = run_recorded_tests(_memory(np.int64(6)), bwrap)
    assert result.ok and result.passed == result.tests == 1


def test_a_result_that_differs_fails(bwrap: Sandbox) -> None:
    import numpy as np

    wrong_value = check_function(bwrap, _memory(np.int64(7)), "total")
    assert not wrong_value.ok and "task t" in wrong_value.failures[0]
    # An int where the function returns a numpy int64 is another value.
    wrong_type = check_function(bwrap, _memory(6), "total")
    assert not wrong_type.ok


def test_exceptions_and_unbuildable_modules_are_outcomes(bwrap: Sandbox) -> None:
    calls = [RecordedCall(args=[1], result=None)]
    assert run_calls(bwrap, "def f(x):\n    return x / 0\n", "f", calls) == [
        "raised:ZeroDivisionError"
    ]
    assert run_calls(bwrap, "def f(x:\n", "f", calls) == [None]
    assert Unrecordable.__name__ == "Unrecordable"
