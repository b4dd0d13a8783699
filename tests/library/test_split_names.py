"""Helper splitting of a converted BARC seed on the edge cases of name analysis, pinned:
what each top-level statement binds and mutates, the order helpers call each other in and
the statements each closure carries (tests/benchmarks/arc/test_barc_names.py pins the
conversion of the same seed); and a helper run alone with the mutations it needs."""

from __future__ import annotations

from pathlib import Path

from arcmemo.benchmarks.arc.barc import convert_seed, load_library
from arcmemo.library import build_library, memory_functions, run_recorded_tests
from arcmemo.library.split import SplitProgram, split_program
from arcmemo.memory.schema import Memory
from arcmemo.sandbox import Sandbox
from tests.support.barc import EDGE_COMMON, EDGE_SEED
from tests.support.library_programs import ENTRY_POINTS


def edge_program(tmp_path: Path) -> SplitProgram:
    (tmp_path / "common.py").write_text(EDGE_COMMON)
    seed = convert_seed(EDGE_SEED, load_library(tmp_path / "common.py"), task_id="00000e0e")
    return split_program("00000e0e", seed.source, ENTRY_POINTS)


def test_what_each_statement_binds(tmp_path: Path) -> None:
    program = edge_program(tmp_path)
    found = [
        (s.text.splitlines()[0], sorted(s.binds), sorted(s.mutates)) for s in program.statements
    ]
    assert found == [
        # An import binds its alias, else the first part of a dotted name; a star import "*".
        ("import numpy as np", ["np"], []),
        ("import os.path", ["os"], []),
        ("from functools import lru_cache as cached", ["cached"], []),
        ("from typing import *", ["*"], []),
        ("class Color:", ["Color"], []),
        ("A, B = 1, 2", ["A", "B"], []),
        # An attribute target binds nothing and mutates the name it hangs on (now inlined:
        # weight uses Color.EXTRA).
        ("Color.EXTRA = 10", [], ["Color"]),
        # (TABLE = [0, 0, 0] and TABLE[A] = ... are no longer inlined: the seed uses no TABLE,
        # the A in TABLE[A] was read as defined)
        # A comprehension's variable binds nothing at module level (it was bound before).
        ("SQUARES = [k * k for k in range(4)]", ["SQUARES"], []),
        ("COUNTER = 0", ["COUNTER"], []),
        ("LIMIT: int = 3", ["LIMIT"], []),
        # the seed's own import after the library section (docstrings, the top-level loop
        # are not in the converted seed; defs are helpers or entry points)
        ("import numpy as np", ["np"], []),
    ]
    assert sorted(program.statements[7].uses) == ["SQUARES", "k", "range"]
    assert sorted(program.entry_uses) == [
        "A",
        "LIMIT",
        "grid",
        "input_grid",
        "np",
        "padded",
        "pick",
        "squares_up_to",
        "total",
        "transform_xy",
        "weight",
    ]


def test_helpers_their_calls_and_the_statements_they_carry(tmp_path: Path) -> None:
    program = edge_program(tmp_path)
    assert list(program.helpers) == [
        "squares_up_to",
        "count",
        "shifted",
        "inner",
        "padded",
        "weight",
        "pick",
    ]
    # A decorated helper's text starts at its decorator.
    assert program.helpers["weight"].text == (
        "@cached(maxsize=None)\ndef weight(n):\n"
        "    return sum(k for k in range(n)) + count() * Color.EXTRA"
    )
    assert sorted(program.helpers["weight"].uses) == [
        "Color",
        "cached",
        "count",
        "k",
        "n",
        "range",
        "sum",
    ]
    # Calls in the order of the AST's breadth-first walk: pick's conditional test first.
    assert program.helper_calls("pick") == ["count", "shifted", "inner"]
    assert program.helper_closure("pick") == ["pick", "count", "shifted", "inner"]
    # A nested def's call names the top-level helper of that name.
    assert program.helper_calls("shifted") == ["inner"]
    preambles = {
        name: [s.text.splitlines()[0] for s in program.preamble(program.helper_closure(name))]
        for name in program.helpers
    }
    assert preambles == {
        "squares_up_to": [
            "from functools import lru_cache as cached",
            "from typing import *",
            "SQUARES = [k * k for k in range(4)]",
        ],
        # `global COUNTER` is no use; COUNTER's mentions are.
        "count": ["from typing import *", "COUNTER = 0"],
        "shifted": ["import os.path", "from typing import *", "LIMIT: int = 3"],
        "inner": ["import os.path", "from typing import *"],
        # Both imports of np, the comprehension's c binding nothing here.
        "padded": [
            "import numpy as np",
            "from typing import *",
            "A, B = 1, 2",
            "import numpy as np",
        ],
        # Color's class with Color.EXTRA = 10 (mutating Color; left out before, so weight
        # alone failed), and no SQUARES (carried before only for the k of weight's generator).
        "weight": [
            "from functools import lru_cache as cached",
            "from typing import *",
            "class Color:",
            "Color.EXTRA = 10",
            "COUNTER = 0",
        ],
        "pick": [
            "import os.path",
            "from typing import *",
            "COUNTER = 0",
            "LIMIT: int = 3",
        ],
    }


# A program whose helper needs a mutation of a class (Color.EXTRA = 10) and whose other
# helper has a local named like a comprehension's variable of a constant (k).
MUTATED = """import numpy as np

class Color:
    BLACK = 0

Color.EXTRA = 10
SQUARES = [k * k for k in range(4)]

def brighten(grid):
    return [[cell + Color.EXTRA for cell in row] for row in grid]

def widest(grid):
    k = max(len(row) for row in grid)
    return k

def transform(grid):
    return [row + [widest(grid)] for row in brighten(grid)]
"""


def test_a_helper_run_alone_gets_the_mutations_of_the_names_it_uses(bwrap: Sandbox) -> None:
    # Without Color.EXTRA = 10 in brighten's module its recorded calls raise AttributeError
    # standalone and it is dropped; widest's local k carried SQUARES = [...] along.
    grid = [[1, 2], [3, 4]]
    pairs = {"00000e0f": [(grid, [[11, 12, 2], [13, 14, 2]])]}
    memory = Memory()
    report = build_library({"00000e0f": MUTATED}, pairs, memory, bwrap, entry_points=ENTRY_POINTS)
    functions = memory_functions(memory)
    assert sorted(functions) == ["brighten", "widest"], report.dropped
    assert "Color.EXTRA = 10" in functions["brighten"].source
    assert "SQUARES" not in functions["widest"].source
    assert report.tests == report.tests_passed == 2
    assert all(result.ok for result in run_recorded_tests(memory, bwrap))
