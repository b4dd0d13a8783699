"""The names top-level statements bind and use, the statements names need, and renaming."""

from __future__ import annotations

import ast

from arcmemo.library.names import Statement, bound, defined, mentioned, needed, rename_references


def _statement(text: str) -> ast.stmt:
    (node,) = ast.parse(text).body
    return node


def test_names_are_mentioned_once_breadth_first() -> None:
    node = _statement("def f(x):\n    return a(x) if b(x) else c(a)\n")
    assert mentioned(node) == ["b", "x", "a", "c"]


def test_a_helpers_bindings_and_a_librarys_definitions_side_by_side() -> None:
    # bound: what a helper's closure looks for; defined: what BARC's common.py defines.
    cases = {
        "import os.path": ({"os"}, set()),
        "from typing import *": ({"*"}, set()),
        "from functools import lru_cache as cached": ({"cached"}, set()),
        "@cached\ndef f(x):\n    y = x\n    return y": ({"f"}, {"f"}),
        "class C:\n    X = 1": ({"C"}, {"C"}),
        "A, B = 1, 2": ({"A", "B"}, {"A", "B"}),
        "LIMIT: int = 3": ({"LIMIT"}, {"LIMIT"}),
        "COUNT += 1": ({"COUNT"}, {"COUNT"}),
        "SQUARES = [k * k for k in range(4)]": ({"SQUARES", "k"}, {"SQUARES"}),
        "TABLE[A] = 1": (set(), {"TABLE", "A"}),
        "C.EXTRA = 10": (set(), {"C"}),
        "for i in range(2):\n    TABLE.append(i)": ({"i"}, set()),
    }
    for text, (binds, defines) in cases.items():
        node = _statement(text)
        assert (set(bound(node)), set(defined(node))) == (binds, defines), text


def test_every_statement_binding_a_needed_name_is_needed_and_star_imports_always() -> None:
    statements = [
        Statement("from typing import *", frozenset({"*"}), frozenset()),
        Statement("A, B = 1, 2", frozenset({"A", "B"}), frozenset({"A", "B"})),
        Statement("TABLE = [0, 0]", frozenset({"TABLE"}), frozenset({"TABLE"})),
        Statement("TABLE[A] = 1", frozenset({"TABLE", "A"}), frozenset({"TABLE", "A"})),
        Statement("UNUSED = 0", frozenset({"UNUSED"}), frozenset({"UNUSED"})),
    ]
    # B reaches A, A both statements defining it, those TABLE's first definition.
    assert [s.text for s in needed(statements, {"B"})] == [
        "from typing import *",
        "A, B = 1, 2",
        "TABLE = [0, 0]",
        "TABLE[A] = 1",
    ]
    assert [s.text for s in needed(statements, set())] == ["from typing import *"]


def test_renaming_keeps_attributes_comments_and_layout() -> None:
    text = "def f(x):\n    # call crop\n    return crop(x).crop +  crop\n"
    assert rename_references(text, {"crop": "crop_2", "f": "g"}) == (
        "def g(x):\n    # call crop\n    return crop_2(x).crop +  crop_2\n"
    )
    assert rename_references("s = 'main'  # main\nmain()\n", {"main": "go"}) == (
        "s = 'main'  # main\ngo()\n"
    )
