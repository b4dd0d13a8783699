"""A small BARC-style checkout written for these tests (BARC's own files are not shipped).

It has the shapes that matter: a ``common.py`` whose helpers call each other, seeds that
index grids ``[x, y]`` (so they only pass when transposed as BARC's evaluator does), a
multi-line ``# concepts:`` block, an alternative solution, a wrong program, a file that is
not Python and a folder.
"""

from __future__ import annotations

from pathlib import Path

COMMON = '''"""Common library for the fixture"""

import numpy as np
import random


class Color:
    BLACK = 0
    BLUE = 1
    NOT_BLACK = [1, 2, 3, 4, 5, 6, 7, 8, 9]


def _stack(parts, axis):
    return np.concatenate(parts, axis=axis)


def repeat_along_x(grid, times=2):
    """Copies of grid side by side (x is the first index in BARC)."""
    return _stack([grid] * times, axis=0)


def unused_helper(grid):
    return random.choice(Color.NOT_BLACK)
'''

GENERATOR = """
def generate_input():
    return np.zeros((3, 3), dtype=int)


# ============= remove below this point for prompting =============

if __name__ == '__main__':
    visualize(generate_input, main)
"""

# 68b16354: the output is the input upside down. In [x, y] indexing that is a flip of the
# second axis; without the transposition it would flip left-right and fail.
FLIP = (
    """from common import *

import numpy as np
from typing import *

# concepts:
# reflection,
# BARC SECRET LABEL

# description:
# In the input you will see a grid of colors. Turn it upside down.

def main(input_grid):
    # "main" in a string or comment is not renamed; neither is main_axis
    main_axis = 1
    return np.flip(input_grid, axis=main_axis)
"""
    + GENERATOR
)

# a416b8f3: two copies side by side, through a library helper that uses another one.
TILE = (
    """from common import *

import numpy as np
from typing import *

# concepts: repetition, BARC SECRET LABEL

# description:
# Put two copies of the input next to each other.

def main(input_grid):
    return repeat_along_x(input_grid)
"""
    + GENERATOR
)

# 6150a2bd: wrong on purpose (the rule is a half turn).
WRONG = (
    """from common import *

import numpy as np

# concepts:
# rotation

# description:
# Rotate the grid.

def main(input_grid):
    return np.rot90(input_grid)
"""
    + GENERATOR
)


def write_checkout(root: Path) -> Path:
    """Write the fixture checkout under ``root`` and return it."""
    seeds = root / "seeds"
    seeds.mkdir(parents=True)
    (seeds / "common.py").write_text(COMMON)
    (seeds / "template.py").write_text("from common import *\n\ndef main(input_grid):\n    ...\n")
    (seeds / "68b16354.py").write_text(FLIP)
    (seeds / "a416b8f3.py").write_text(TILE)
    (seeds / "a416b8f3_Kevin.py").write_text(TILE)
    (seeds / "6150a2bd.py").write_text(WRONG)
    (seeds / "3c9b0459.py").write_text("def main(input_grid:\n    return input_grid\n")
    (seeds / "0000000f.py").write_text(TILE)
    (seeds / "ConceptARC").mkdir()
    (seeds / "notes.txt").write_text("a note beside the seeds\n")
    return root


# The edge cases of working out which names a top-level statement binds and which it uses
# (imports, decorators, globals, nested defs, comprehensions, star imports, attribute and
# subscript targets, a top-level loop), in a common.py and a seed that needs most of it.
EDGE_COMMON = '''"""Common library with the edge cases of name analysis"""

import numpy as np
import os.path
from functools import lru_cache as cached
from typing import *


class Color:
    BLACK = 0
    BLUE = 1


A, B = 1, 2
Color.EXTRA = 10
TABLE = [0, 0, 0]
TABLE[A] = Color.BLUE
SQUARES = [k * k for k in range(4)]
for _i in range(2):
    TABLE.append(_i)
COUNTER = 0
LIMIT: int = 3


@cached(maxsize=None)
def squares_up_to(n):
    return tuple(SQUARES[:n])


def count():
    global COUNTER
    COUNTER += 1
    return COUNTER


def shifted(grid):
    def inner(g):
        return g + LIMIT

    return inner(grid)


def inner(grid):
    return os.path.basename(str(grid))


def padded(grid):
    return np.pad(grid, [(c, c) for c in (B,)])


def unused(grid):
    return [n for n in TABLE if n]
'''

# 00000e0e: a seed whose main and helper reach into every edge of EDGE_COMMON above.
EDGE_SEED = (
    """from common import *

import numpy as np

# concepts:
# edges

# description:
# Exercise every edge of the name analysis.

@cached(maxsize=None)
def weight(n):
    return sum(k for k in range(n)) + count() * Color.EXTRA

def pick(grid):
    return shifted(grid) if count() else inner(grid)

def main(input_grid):
    total = squares_up_to(LIMIT)[-1]
    return padded(pick(input_grid)) + weight(A) + total
"""
    + GENERATOR
)

# Top-level compound statements binding names a seed needs (try, if, with, for) and one
# binding none (a loop run for its effect on TRACE).
COMPOUND_COMMON = '''"""Common library whose compound statements bind names"""

import numpy as np
from contextlib import nullcontext

try:
    from math import gcd
except ImportError:
    gcd = None

if np.__name__ == "numpy":
    OFFSET = 2
else:
    OFFSET = 0

with nullcontext(3) as SCALE:
    pass

for _i in range(3):
    LAST = _i

TRACE = []
for _j in range(2):
    TRACE.append(_j)


def shift(grid):
    return grid + OFFSET * SCALE + LAST + gcd(4, 6)
'''

# 00000c0c: adds 10 to every cell through the library's shift.
COMPOUND_SEED = """from common import *

import numpy as np

# description:
# Add ten.

def main(input_grid):
    return shift(input_grid)
"""
