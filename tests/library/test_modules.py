"""Module texts of library functions: closures, conflicts and the leakage guard."""

from __future__ import annotations

import pytest

from arcmemo.library.modules import (
    LibraryConflictError,
    available_functions,
    closure,
    function_module,
    library_source,
    memory_functions,
    module_text,
)
from arcmemo.memory.schema import Concept, LibraryFunction, Memory


def _memory() -> Memory:
    functions = [
        LibraryFunction(
            name="base", source="import numpy as np\n\ndef base(x):\n    return x\n", sources=["t1"]
        ),
        LibraryFunction(
            name="uses_base", source="def uses_base(x):\n    return base(x) + 1\n", sources=["t2"]
        ),
        LibraryFunction(
            name="alone", source="SIZE = 2\n\ndef alone():\n    return SIZE\n", sources=["t2", "t3"]
        ),
    ]
    memory = Memory()
    memory.add(Concept(name="routines", kind="routine", functions=functions))
    memory.add(
        Concept(
            name="retired one",
            kind="routine",
            retired="pruned",
            functions=[LibraryFunction(name="gone", source="def gone():\n    return 0\n")],
        )
    )
    return memory


def test_a_function_module_holds_what_it_calls() -> None:
    functions = memory_functions(_memory())
    assert "gone" not in functions  # retired concepts lend no code
    assert closure(functions, "uses_base") == ["uses_base", "base"]
    namespace: dict[str, object] = {}
    exec(function_module(functions, "uses_base"), namespace)
    assert namespace["uses_base"](1) == 2  # type: ignore[operator]
    assert "def alone" not in function_module(functions, "uses_base")


def test_the_leakage_guard_leaves_out_a_task_s_functions_and_their_callers() -> None:
    memory = _memory()
    assert available_functions(memory) == ["base", "uses_base", "alone"]
    assert available_functions(memory, ["t1"]) == ["alone"]  # uses_base needs base
    assert available_functions(memory, ["t3"]) == ["base", "uses_base"]
    text = library_source(memory, ["t1"])
    assert "def alone" in text and "def base" not in text and "def uses_base" not in text
    assert text.startswith('"""arcmemo_library: 1 tested functions')


def test_statements_shared_are_written_once_and_a_conflict_is_refused() -> None:
    one = LibraryFunction(name="a", source="import numpy as np\nK = 1\n\ndef a():\n    return K\n")
    two = LibraryFunction(name="b", source="import numpy as np\n\ndef b():\n    return np\n")
    text = module_text([one, two])
    assert text.count("import numpy as np") == 1
    clash = LibraryFunction(name="c", source="K = 2\n\ndef c():\n    return K\n")
    with pytest.raises(LibraryConflictError, match="'K'"):
        module_text([one, clash])
