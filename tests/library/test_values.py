"""Values as JSON: every kind a recorded call may hold comes back as it was."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from arcmemo.library.values import (
    Unrecordable,
    canonical,
    classes_in,
    decode,
    encode,
    outcome,
    returned,
)


@dataclasses.dataclass
class Box:
    x: int
    cells: tuple[int, ...]


class Plain:
    def __init__(self, colour: int) -> None:
        self.colour = colour


def _same(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        2.5,
        "text",
        [[0, 1], [2, 3]],
        np.array([[0, 1], [2, 3]]),
        np.array([[True, False]]),
        np.zeros((0, 3), dtype=np.int8),
        (1, (2, 3)),
        {"a": [1, 2]},
        {(1, 2): "pair", 3: "int"},
        {"__t": "a key named like the tag"},
        np.int64(7),
        np.float32(0.5),
        [np.array([1, 2]), (np.int64(1), 2)],
    ],
)
def test_values_come_back_as_they_were(value: object) -> None:
    data = json.loads(json.dumps(encode(value)))
    assert _same(decode(data), value)


def test_sets_encode_the_same_whatever_their_order() -> None:
    assert canonical(encode({3, 1, 2})) == canonical(encode({2, 3, 1}))
    assert decode(encode(frozenset({(1, 2), (0, 0)}))) == frozenset({(1, 2), (0, 0)})
    assert decode(encode({1, 2})) == {1, 2}


def test_non_finite_floats_are_tagged() -> None:
    data = json.loads(json.dumps(encode([math.inf, -math.inf]), allow_nan=False))
    assert decode(data) == [math.inf, -math.inf]
    assert math.isnan(decode(encode(math.nan)))
    array = decode(json.loads(json.dumps(encode(np.array([1.0, math.nan])), allow_nan=False)))
    assert array.dtype == np.float64 and math.isnan(array[1])


def test_objects_are_rebuilt_from_the_namespace_classes() -> None:
    box = Box(x=2, cells=(1, 2))
    data = encode(box)
    assert classes_in([data]) == {"Box"}
    assert decode(data, {"Box": Box}) == box
    plain = decode(encode(Plain(4)), {"Plain": Plain})
    assert isinstance(plain, Plain) and plain.colour == 4
    with pytest.raises(Unrecordable, match="no class Box"):
        decode(data, {})


@pytest.mark.parametrize(
    "value",
    [lambda: 0, (i for i in range(2)), np, Box, np.array([object()]), {1.5j}],
)
def test_what_cannot_be_recorded_says_so(value: object) -> None:
    with pytest.raises(Unrecordable):
        encode(value)


def test_values_too_large_or_deep_are_refused() -> None:
    with pytest.raises(Unrecordable, match="items"):
        encode(np.zeros((200, 200), dtype=int))
    nested: list[object] = []
    for _ in range(20):
        nested = [nested]
    with pytest.raises(Unrecordable, match="deep"):
        encode(nested)


def test_a_call_that_changes_its_arguments_records_the_effect() -> None:
    grid = np.zeros((2, 2), dtype=int)
    before = encode([grid, 5])
    grid[0, 0] = 5
    result = outcome(before, [grid, 5], None)
    assert result["__t"] == "effect"
    assert returned(result) is None
    assert decode(result)["args"][0][0, 0] == 5
    unchanged = outcome(encode([grid]), [grid], 3)
    assert unchanged == 3 and returned(unchanged) == 3
