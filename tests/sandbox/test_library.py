"""``from arcmemo_library import f`` inside the sandbox, and what a program cannot do to it."""

from __future__ import annotations

from arcmemo.library.task import task_library
from arcmemo.memory.schema import Concept, LibraryFunction, Memory
from arcmemo.sandbox import Program, Sandbox
from tests.support.sandboxes import arc_program

CROP = LibraryFunction(
    name="crop_to_object",
    source="import numpy as np\n\n\n"
    'def crop_to_object(grid):\n    """Crop to the non-zero cells."""\n'
    "    rows, cols = np.nonzero(grid)\n"
    "    return grid[rows.min():rows.max() + 1, cols.min():cols.max() + 1]\n",
    signature="(grid: Grid) -> Grid",
    docstring="Crop to the non-zero cells.",
    sources=["task-b"],
)
FLIP = LibraryFunction(
    name="flip_rows",
    source="import numpy as np\n\n\ndef flip_rows(grid):\n    return np.flipud(grid)\n",
    sources=["task-a"],
)


def _memory() -> Memory:
    return Memory(
        domain="arc",
        concepts=[
            Concept(name="crop to object", kind="routine", functions=[CROP]),
            Concept(name="flip rows", kind="routine", functions=[FLIP]),
        ],
    )


def _program(source: str, task_id: str) -> Program:
    library = task_library(_memory(), task_id, [], "all")
    return arc_program(source).model_copy(update={"library": library.source})


USES_BOTH = """
from arcmemo_library import crop_to_object, flip_rows

def transform(grid):
    return flip_rows(crop_to_object(grid))
"""


def test_a_program_imports_library_functions(sandbox: Sandbox) -> None:
    program = _program(USES_BOTH, "task-c")
    result = sandbox.run(program, [[[[0, 0, 0], [0, 1, 2], [0, 3, 4]]]])[0]
    assert result.ok, result.error
    assert result.value == [[3, 4], [1, 2]]


def test_a_task_cannot_import_its_own_function(sandbox: Sandbox) -> None:
    own = sandbox.run(_program(USES_BOTH, "task-a"), [[[[1]]]])[0]
    assert own.error_kind == "exception"
    assert "ImportError: cannot import name 'flip_rows'" in (own.error or "")
    other = "from arcmemo_library import crop_to_object\ndef transform(g):\n    return g\n"
    assert sandbox.run(_program(other, "task-a"), [[[[1]]]])[0].ok


def test_without_a_library_there_is_no_module(sandbox: Sandbox) -> None:
    result = sandbox.run(arc_program(USES_BOTH), [[[[1]]]])[0]
    assert "ModuleNotFoundError: No module named 'arcmemo_library'" in (result.error or "")


PROBE_FILE = """
import arcmemo_library, importlib.util, os

def transform(grid):
    spec = importlib.util.find_spec("arcmemo_library")
    found = [getattr(arcmemo_library, "__file__", None), spec.origin]
    for _folder, _dirs, files in os.walk(os.getcwd()):
        found += files
    return [[str(x) for x in found]]
"""


def test_the_module_has_no_file_to_read_or_write(sandbox: Sandbox) -> None:
    result = sandbox.run(_program(PROBE_FILE, "task-c"), [[[[1]]]])[0]
    assert result.ok, result.error
    assert result.value == [["None", "None"]]


TAMPER = """
import arcmemo_library

def transform(grid):
    arcmemo_library.crop_to_object = lambda g: [[9]]
    arcmemo_library.planted = True
    return [[int(hasattr(arcmemo_library, "flip_rows"))]]
"""
CHECK = """
import arcmemo_library

def transform(grid):
    return [[int(hasattr(arcmemo_library, "planted")), int(hasattr(arcmemo_library, "flip_rows"))]]
"""


def test_no_program_reaches_another_tasks_library(sandbox: Sandbox) -> None:
    # task-c's library holds flip_rows (task-a's own function); task-a's program, run after
    # a task-c program changed its module, sees neither that change nor flip_rows.
    assert sandbox.run(_program(TAMPER, "task-c"), [[[[1]]]])[0].value == [[1]]
    for _ in range(3):  # whichever warm worker serves it
        after = sandbox.run(_program(CHECK, "task-a"), [[[[1]]]])[0]
        assert after.ok, after.error
        assert after.value == [[0, 0]]


def test_library_code_runs_under_the_programs_guard(sandbox: Sandbox) -> None:
    sneaky = LibraryFunction(
        name="sneaky",
        source="def sneaky():\n    import socket\n    return socket.socket()\n",
    )
    memory = Memory(
        domain="arc",
        concepts=[Concept(name="sneaky", kind="routine", functions=[sneaky])],
    )
    library = task_library(memory, "t", ["sneaky"], "selected").source
    program = Program(
        source="from arcmemo_library import sneaky\ndef f():\n    return str(sneaky())\n",
        entry="f",
        library=library,
    )
    result = sandbox.run(program, [[]])[0]
    assert not result.ok
    assert result.error_kind in ("forbidden", "exception")
