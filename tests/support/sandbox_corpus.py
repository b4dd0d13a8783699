"""Ordinary programs that every sandbox kind must run, on every supported Python.

Hand-written ARC-style solutions (``transform(grid)``, numpy in as ``np``) that between them
use what real solutions use: numpy, ``scipy.ndimage``, ``collections.namedtuple``,
``dataclasses``, ``enum``, ``typing``, ``functools``, ``itertools``, ``re``, ``fractions``.
Each entry: name, source, input grid, expected output grid.
"""

from __future__ import annotations

CORPUS: list[tuple[str, str, list[list[int]], list[list[int]]]] = [
    (
        "recolor largest object (scipy.ndimage.label)",
        """
from scipy import ndimage

def transform(grid):
    labels, count = ndimage.label(grid > 0)
    sizes = ndimage.sum(grid > 0, labels, index=range(1, count + 1))
    largest = 1 + int(np.argmax(sizes))
    out = grid.copy()
    out[labels == largest] = 2
    return out
""",
        [[1, 1, 0, 0], [1, 1, 0, 1], [0, 0, 0, 1]],
        [[2, 2, 0, 0], [2, 2, 0, 1], [0, 0, 0, 1]],
    ),
    (
        "objects as namedtuples, sorted by size",
        """
from collections import namedtuple, Counter

Obj = namedtuple("Obj", "color size")

def transform(grid):
    counts = Counter(int(v) for v in grid.flatten() if v)
    objs = sorted((Obj(c, n) for c, n in counts.items()), key=lambda o: -o.size)
    return [[o.color for o in objs]]
""",
        [[3, 3, 3], [4, 0, 3], [4, 5, 0]],
        [[3, 4, 5]],
    ),
    (
        "dataclass boxes: crop the bounding box",
        """
from dataclasses import dataclass, field

@dataclass(frozen=True)
class Box:
    top: int
    left: int
    bottom: int
    right: int
    tags: list = field(default_factory=list, compare=False)

    def crop(self, g):
        return g[self.top:self.bottom + 1, self.left:self.right + 1]

def transform(grid):
    rows, cols = np.nonzero(grid)
    return Box(rows.min(), cols.min(), rows.max(), cols.max()).crop(grid)
""",
        [[0, 0, 0, 0], [0, 7, 8, 0], [0, 0, 9, 0]],
        [[7, 8], [0, 9]],
    ),
    (
        "enum directions: gravity to the bottom",
        """
from enum import Enum, auto

class Direction(Enum):
    DOWN = auto()
    UP = auto()

def fall(column, direction):
    cells = [v for v in column if v]
    pad = [0] * (len(column) - len(cells))
    return pad + cells if direction is Direction.DOWN else cells + pad

def transform(grid):
    cols = [fall(list(grid[:, c]), Direction.DOWN) for c in range(grid.shape[1])]
    return np.array(cols).T
""",
        [[1, 0], [0, 2], [0, 0]],
        [[0, 0], [0, 0], [1, 2]],
    ),
    (
        "typing annotations and a Protocol",
        """
from typing import List, Tuple, Optional, Protocol, TypeVar, NamedTuple

T = TypeVar("T")

class Painter(Protocol):
    def paint(self, grid: "np.ndarray") -> "np.ndarray": ...

class Cell(NamedTuple):
    row: int
    col: int

def first(items: List[T]) -> Optional[T]:
    return items[0] if items else None

def transform(grid) -> List[List[int]]:
    cells: List[Cell] = [Cell(int(r), int(c)) for r, c in zip(*np.nonzero(grid))]
    cell = first(cells)
    out = np.zeros_like(grid)
    if cell is not None:
        out[cell.row, :] = grid[cell.row, cell.col]
    return out.tolist()
""",
        [[0, 0, 0], [0, 6, 0], [0, 0, 0]],
        [[0, 0, 0], [6, 6, 6], [0, 0, 0]],
    ),
    (
        "functools: cached flood fill size, reduce",
        """
import functools

def transform(grid):
    h, w = grid.shape

    @functools.lru_cache(maxsize=None)
    def colour_count(color):
        return int((grid == color).sum())

    total = functools.reduce(lambda a, b: a + b, (colour_count(c) for c in range(1, 10)))
    return [[total % 10]]
""",
        [[1, 2], [2, 0]],
        [[3]],
    ),
    (
        "itertools: tile the grid in a checkerboard of flips",
        """
import itertools

def transform(grid):
    tiles = {}
    for r, c in itertools.product(range(2), repeat=2):
        tiles[r, c] = grid if (r + c) % 2 == 0 else np.fliplr(grid)
    rows = [np.hstack([tiles[r, c] for c in range(2)]) for r in range(2)]
    return np.vstack(rows)
""",
        [[1, 2]],
        [[1, 2, 2, 1], [2, 1, 1, 2]],
    ),
    (
        "re over a string rendering of rows",
        """
import re

def transform(grid):
    out = []
    for row in grid:
        text = "".join(str(v) for v in row)
        text = re.sub(r"(?<=1)0+(?=1)", lambda m: "3" * len(m.group()), text)
        out.append([int(ch) for ch in text])
    return out
""",
        [[1, 0, 0, 1, 0], [0, 1, 0, 1, 0]],
        [[1, 3, 3, 1, 0], [0, 1, 3, 1, 0]],
    ),
    (
        "fractions: scale by a ratio of sizes",
        """
from fractions import Fraction

def transform(grid):
    ratio = Fraction(4, grid.shape[0])
    factor = int(ratio) if ratio.denominator == 1 else 1
    return np.kron(grid, np.ones((factor, factor), dtype=int))
""",
        [[1, 0], [0, 2]],
        [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 2, 2], [0, 0, 2, 2]],
    ),
    (
        "numpy: mirror symmetry completion, binary_fill_holes, heapq, copy",
        """
import copy, heapq
from scipy.ndimage import binary_fill_holes

def transform(grid):
    filled = binary_fill_holes(grid > 0).astype(int) * 5
    out = np.where(grid > 0, grid, filled)
    top = heapq.nlargest(1, copy.deepcopy(out.flatten().tolist()))[0]
    out = np.maximum(out, np.fliplr(out))
    return out if top else grid
""",
        [[1, 1, 1, 0], [1, 0, 1, 0], [1, 1, 1, 0]],
        [[1, 1, 1, 1], [1, 5, 5, 1], [1, 1, 1, 1]],
    ),
    (
        "warnings, inspect and a class hierarchy with super()",
        """
import warnings, inspect

class Rule:
    def apply(self, grid):
        return grid

class Invert(Rule):
    def apply(self, grid):
        base = super().apply(grid)
        warnings.warn("inverting")
        return 9 - base

def transform(grid):
    assert inspect.isclass(Invert) and len(inspect.signature(Invert.apply).parameters) == 2
    return Invert().apply(grid)
""",
        [[0, 9], [4, 5]],
        [[9, 0], [5, 4]],
    ),
]
