"""The names top-level statements bind and use, the statements names need, and renaming."""

from __future__ import annotations

import ast

from arcmemo.library.names import Statement, bindings, mentioned, needed, rename_references


def _statement(text: str) -> ast.stmt:
    (node,) = ast.parse(text).body
    return node


def test_names_are_mentioned_once_breadth_first() -> None:
    node = _statement("def f(x):\n    return a(x) if b(x) else c(a)\n")
    assert mentioned(node) == ["b", "x", "a", "c"]


def test_what_a_top_level_statement_binds_and_mutates() -> None:
    # One rule for a helper's closure and for BARC's common.py: (binds, mutates).
    cases = {
        "import os.path": ({"os"}, set()),
        "from typing import *": ({"*"}, set()),
        "from functools import lru_cache as cached": ({"cached"}, set()),
        # A def's or class's name; not its locals, nor a nested def's (their scope).
        "@cached\ndef f(x):\n    y = x\n    def g():\n        pass\n    return y": (
            {"f"},
            set(),
        ),
        "class C:\n    X = 1\n    Y: int = 2": ({"C"}, set()),
        "A, B = 1, 2": ({"A", "B"}, set()),
        "(A, [B, *C]) = 1, (2, 3)": ({"A", "B", "C"}, set()),
        "LIMIT: int = 3": ({"LIMIT"}, set()),
        "LIMIT: int": (set(), set()),
        "COUNT += 1": ({"COUNT"}, set()),
        # A comprehension's variable is the comprehension's own, a walrus in it the module's.
        "SQUARES = [k * k for k in range(4)]": ({"SQUARES"}, set()),
        "PAIRS = {a: [b for b in a] for a in 'xy'}": ({"PAIRS"}, set()),
        "FIRST = [(last := k) for k in range(3)]": ({"FIRST", "last"}, set()),
        "F = lambda n=(m := 1): [(z := n)]": ({"F", "m"}, set()),
        "if (n := 3) > 2:\n    pass": ({"n"}, set()),
        # Attribute and subscript targets mutate the name they hang on.
        "TABLE[A] = 1": (set(), {"TABLE"}),
        "TABLE[A][B] += 1": (set(), {"TABLE"}),
        "C.EXTRA = 10": (set(), {"C"}),
        "C.inner.EXTRA: int = 10": (set(), {"C"}),
        "del TABLE[0], X": (set(), {"TABLE", "X"}),
        "f().x = 1": (set(), set()),
        # Compound statements bind (and mutate) what their bodies do at module scope.
        "for i in range(2):\n    TABLE.append(i)": ({"i"}, set()),
        "for i, C.x in []:\n    pass\nelse:\n    DONE = True": ({"i", "DONE"}, {"C"}),
        "while not READY:\n    READY = True": ({"READY"}, set()),
        "if X:\n    def g():\n        pass\nelse:\n    class g:\n        pass": ({"g"}, set()),
        "try:\n    import cv2\nexcept ImportError as error:\n    cv2 = None\n"
        "finally:\n    C.x = 1": ({"cv2", "error"}, {"C"}),
        "with open('f') as handle, lock as (a, b):\n    DATA = handle.read()": (
            {"handle", "a", "b", "DATA"},
            set(),
        ),
        "match P:\n    case [x, *rest]:\n        pass\n    case {'k': v, **others}:\n"
        "        pass\n    case C(y) as z:\n        pass": (
            {"x", "rest", "v", "others", "y", "z"},
            set(),
        ),
        # A global declaration binds nothing: at module level it does nothing, in a
        # function the name is bound only when the function runs.
        "global G": (set(), set()),
        "def reset():\n    global COUNT\n    COUNT = 0": ({"reset"}, set()),
        "print(TABLE)": (set(), set()),
    }
    for text, (binds, mutates) in cases.items():
        node = _statement(text)
        assert bindings(node) == (frozenset(binds), frozenset(mutates)), text
        statement = Statement.of(node, text)
        assert (statement.binds, statement.mutates) == (binds, mutates), text
        assert statement.uses == frozenset(mentioned(node)), text


def test_every_statement_binding_or_mutating_a_needed_name_is_needed() -> None:
    statements = [
        Statement("from typing import *", frozenset({"*"}), frozenset()),
        Statement("A, B = 1, 2", frozenset({"A", "B"}), frozenset({"A", "B"})),
        Statement("TABLE = [0, 0]", frozenset({"TABLE"}), frozenset({"TABLE"})),
        Statement("TABLE[A] = 1", frozenset(), frozenset({"TABLE", "A"}), frozenset({"TABLE"})),
        Statement("UNUSED = 0", frozenset({"UNUSED"}), frozenset({"UNUSED"})),
        Statement("UNUSED[B] = 1", frozenset(), frozenset({"UNUSED", "B"}), frozenset({"UNUSED"})),
    ]
    # TABLE reaches its mutation, which reaches A; star imports always.
    assert [s.text for s in needed(statements, {"TABLE"})] == [
        "from typing import *",
        "A, B = 1, 2",
        "TABLE = [0, 0]",
        "TABLE[A] = 1",
    ]
    # Using A or B needs neither TABLE nor UNUSED: a mutation's index is a use, not a binding.
    assert [s.text for s in needed(statements, {"B"})] == ["from typing import *", "A, B = 1, 2"]
    assert [s.text for s in needed(statements, set())] == ["from typing import *"]


def test_renaming_keeps_attributes_comments_and_layout() -> None:
    text = "def f(x):\n    # call crop\n    return crop(x).crop +  crop\n"
    assert rename_references(text, {"crop": "crop_2", "f": "g"}) == (
        "def g(x):\n    # call crop\n    return crop_2(x).crop +  crop_2\n"
    )
    assert rename_references("s = 'main'  # main\nmain()\n", {"main": "go"}) == (
        "s = 'main'  # main\ngo()\n"
    )
