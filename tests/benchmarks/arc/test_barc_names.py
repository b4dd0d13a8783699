"""BARC seed conversion on the edge cases of name analysis, pinned as it converts today:
which top-level statements of common.py are kept, the names each binds, mutates and uses,
and what a seed that reaches into every edge gets inlined (tests/library/test_split_names.py
pins the helper splitting of the same converted seed); top-level compound statements
inlined or reported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from click.testing import CliRunner

from arcmemo.benchmarks.arc.barc import (
    Library,
    LibraryLeftOut,
    convert_seed,
    import_barc,
    load_library,
)
from arcmemo.cli.main import cli
from arcmemo.core.inlined_library import LIBRARY_BEGIN, LIBRARY_END
from tests.support.barc import (
    COMPOUND_COMMON,
    COMPOUND_SEED,
    EDGE_COMMON,
    EDGE_SEED,
)


def edge_library(tmp_path: Path) -> Library:
    (tmp_path / "common.py").write_text(EDGE_COMMON)
    return load_library(tmp_path / "common.py")


def test_imports_stand_apart_and_every_other_statement_is_kept(tmp_path: Path) -> None:
    library = edge_library(tmp_path)
    # Every import, verbatim and in file order, whatever it binds (star imports too).
    assert library.imports == (
        "import numpy as np\n",
        "import os.path\n",
        "from functools import lru_cache as cached\n",
        "from typing import *\n",
    )
    found = [
        (d.text.splitlines()[0], sorted(d.binds), sorted(d.mutates), sorted(d.uses))
        for d in library.statements
    ]
    assert found == [
        # A class defines its name; its body's names are uses, not definitions.
        ("class Color:", ["Color"], [], ["BLACK", "BLUE"]),
        ("A, B = 1, 2", ["A", "B"], [], ["A", "B"]),
        # An attribute or subscript target binds nothing and mutates the name it hangs on
        # (it defined every name in it before: Color, and TABLE and the index A).
        ("Color.EXTRA = 10", [], ["Color"], ["Color"]),
        ("TABLE = [0, 0, 0]", ["TABLE"], [], ["TABLE"]),
        ("TABLE[A] = Color.BLUE", [], ["TABLE"], ["A", "Color", "TABLE"]),
        # A comprehension's variable is a use, not a definition.
        ("SQUARES = [k * k for k in range(4)]", ["SQUARES"], [], ["SQUARES", "k", "range"]),
        # The top-level for loop binds its variable (it was dropped before, silently); the
        # docstring is left out.
        ("for _i in range(2):", ["_i"], [], ["TABLE", "_i", "range"]),
        ("COUNTER = 0", ["COUNTER"], [], ["COUNTER"]),
        ("LIMIT: int = 3", ["LIMIT"], [], ["LIMIT", "int"]),
        # A decorated def starts at its decorator, whose names are uses.
        ("@cached(maxsize=None)", ["squares_up_to"], [], ["SQUARES", "cached", "n", "tuple"]),
        # `global COUNTER` names no use; COUNTER's own mentions do.
        ("def count():", ["count"], [], ["COUNTER"]),
        # A nested def's name is no use, but calling it is (and names the top-level inner).
        ("def shifted(grid):", ["shifted"], [], ["LIMIT", "g", "grid", "inner"]),
        ("def inner(grid):", ["inner"], [], ["grid", "os", "str"]),
        ("def padded(grid):", ["padded"], [], ["B", "c", "grid", "np"]),
        ("def unused(grid):", ["unused"], [], ["TABLE", "n"]),
    ]
    # The loop is the one statement run for its effect (reported when no program carries it).
    assert [(e.line, e.kind, e.statement.text.splitlines()[0]) for e in library.effects] == [
        (19, "for", "for _i in range(2):")
    ]


def test_a_seed_gets_what_its_names_reach_in_file_order(tmp_path: Path) -> None:
    seed = convert_seed(EDGE_SEED, edge_library(tmp_path), task_id="00000e0e")
    # Sorted names each inlined statement binds: TABLE's two statements are gone (the seed
    # uses no TABLE; TABLE[A] was read as defining A), and Color.EXTRA binds nothing.
    assert seed.library_names == (
        "A",
        "B",
        "COUNTER",
        "Color",
        "LIMIT",
        "SQUARES",
        "count",
        "inner",
        "padded",
        "shifted",
        "squares_up_to",
    )
    section = seed.source.split(LIBRARY_BEGIN, 1)[1].split(LIBRARY_END, 1)[0]
    assert section == (
        " BARC common.py\n"
        "# (only what this program uses, and what that uses in turn)\n"
        "import numpy as np\n"
        "import os.path\n"
        "from functools import lru_cache as cached\n"
        "from typing import *\n"
        "\n"  # (the blank lines the section puts here collapse as a label block's do)
        "class Color:\n    BLACK = 0\n    BLUE = 1\n\n"
        "A, B = 1, 2\n\n"
        "Color.EXTRA = 10\n\n"
        # (no TABLE = [0, 0, 0] nor TABLE[A] = Color.BLUE: see above)
        "SQUARES = [k * k for k in range(4)]\n\n"
        "COUNTER = 0\n\n"
        "LIMIT: int = 3\n\n"
        "@cached(maxsize=None)\ndef squares_up_to(n):\n    return tuple(SQUARES[:n])\n\n"
        "def count():\n    global COUNTER\n    COUNTER += 1\n    return COUNTER\n\n"
        "def shifted(grid):\n    def inner(g):\n        return g + LIMIT\n\n"
        "    return inner(grid)\n\n"
        "def inner(grid):\n    return os.path.basename(str(grid))\n\n"
        "def padded(grid):\n    return np.pad(grid, [(c, c) for c in (B,)])\n\n"
    )
    after = seed.source.split(LIBRARY_END, 1)[1]
    assert "def transform_xy(input_grid):" in after and "def pick(grid):" in after
    namespace: dict[str, object] = {}
    exec(compile(seed.source, "<seed>", "exec"), namespace)
    result = namespace["transform"](np.array([[1]]))  # type: ignore[operator]
    assert np.asarray(result).tolist()[2] == [24, 24, 28, 24, 24]


def test_compound_statements_are_inlined_when_needed_and_reported_when_not(
    tmp_path: Path,
) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "common.py").write_text(COMPOUND_COMMON)
    (seeds / "00000c0c.py").write_text(COMPOUND_SEED)
    seed = convert_seed(COMPOUND_SEED, load_library(seeds / "common.py"), task_id="00000c0c")
    # They were dropped before, silently: the program failed with a NameError (OFFSET).
    section = seed.source.split(LIBRARY_BEGIN, 1)[1].split(LIBRARY_END, 1)[0]
    firsts = [block.splitlines()[0] for block in section.split("\n\n")[1:] if block.strip()]
    assert firsts == [
        "try:",
        'if np.__name__ == "numpy":',
        "with nullcontext(3) as SCALE:",
        "for _i in range(3):",
        "def shift(grid):",
    ]
    namespace: dict[str, object] = {}
    exec(compile(seed.source, "<seed>", "exec"), namespace)
    result = namespace["transform"](np.array([[1, 2]]))  # type: ignore[operator]
    assert np.asarray(result).tolist() == [[11, 12]]
    # The loop binding only _j goes into no program: the import report says so.
    report = import_barc(tmp_path, tmp_path / "out", verify=None)
    assert report.imported == ["00000c0c"]
    assert report.library_left_out == [
        LibraryLeftOut(
            line=23,
            statement="for _j in range(2):",
            reason="a top-level for binding or mutating _j, which no written program uses",
        )
    ]
    result = CliRunner().invoke(
        cli, ["seeds", "import-barc", str(tmp_path), "--out", str(tmp_path / "cli"), "--no-verify"]
    )
    assert result.exit_code == 0, result.output
    assert (
        "not inlined: common.py line 23 ('for _j in range(2):'): a top-level for binding or "
        "mutating _j, which no written program uses" in result.output
    )
