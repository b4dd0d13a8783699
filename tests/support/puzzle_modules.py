"""Generator modules for the puzzle tests: one that passes and one per way of failing.

Each bad module differs from GOOD in one place, so a test that rejects it shows that the
corresponding check is what rejects it.
"""

from __future__ import annotations

GOOD = """
import numpy as np


def concept_routine(grid, axis):
    g = np.asarray(grid)
    return g[:, ::-1].copy() if axis == "vertical" else g[::-1, :].copy()


def generate_input(rng):
    height, width = rng.randint(3, 7), rng.randint(3, 7)
    grid = [[0] * width for _ in range(height)]
    for _ in range(rng.randint(2, 6)):
        grid[rng.randrange(height)][rng.randrange(width)] = rng.randint(1, 9)
    grid[0][0] = rng.randint(1, 9)
    grid[0][width - 1] = 0
    return grid


def transform(grid):
    return concept_routine(grid, "vertical")
"""

# transform does the mirroring itself and never calls the concept.
IGNORES_CONCEPT = GOOD.replace(
    'return concept_routine(grid, "vertical")', "return np.asarray(grid)[:, ::-1]"
)

# transform calls the concept (so the trace sees it) but throws the result away.
DISCARDS_RESULT = GOOD.replace(
    'return concept_routine(grid, "vertical")',
    'concept_routine(grid, "vertical")\n    return np.asarray(grid)[:, ::-1]',
)

# generate_input draws from the global random module instead of rng.
GLOBAL_RANDOM = GOOD.replace("import numpy as np", "import random\n\nimport numpy as np").replace(
    "height, width = rng.randint(3, 7)", "height, width = random.randint(3, 7)"
)

# generate_input draws from numpy's global state (identical in every forked sandbox child).
NUMPY_RANDOM = GOOD.replace(
    "grid[0][0] = rng.randint(1, 9)", "grid[0][0] = int(np.random.randint(1, 10))"
)

# transform itself is random.
RANDOM_TRANSFORM = GOOD.replace(
    'return concept_routine(grid, "vertical")',
    'out = concept_routine(grid, "vertical")\n'
    "    out[-1, -1] = np.random.randint(0, 10)\n"
    "    return out",
)

# transform writes a color that does not exist.
BAD_COLOR = GOOD.replace(
    'return concept_routine(grid, "vertical")',
    'out = concept_routine(grid, "vertical")\n    out[0, 0] = 10\n    return out',
)

# transform returns a ragged list of rows.
RAGGED_OUTPUT = GOOD.replace(
    'return concept_routine(grid, "vertical")',
    'out = concept_routine(grid, "vertical").tolist()\n    out[0].append(1)\n    return out',
)

# generate_input returns an over-sized grid.
HUGE_INPUT = GOOD.replace("rng.randint(3, 7), rng.randint(3, 7)", "31, rng.randint(3, 7)")

# every output is one color.
ONE_COLOR_OUTPUT = GOOD.replace(
    'return concept_routine(grid, "vertical")',
    'out = concept_routine(grid, "vertical")\n    out[:, :] = 3\n    return out',
)

# the mirror of a symmetric input is the input itself.
SYMMETRIC_INPUT = GOOD.replace(
    "    grid[0][0] = rng.randint(1, 9)\n    grid[0][width - 1] = 0\n    return grid\n",
    "    grid[0][0] = rng.randint(1, 9)\n    return [row + row[::-1] for row in grid]\n",
)

# generate_input loops forever.
LOOPS = GOOD.replace(
    "def generate_input(rng):\n", "def generate_input(rng):\n    while True:\n        pass\n"
)

# generate_input always returns the same grid.
CONSTANT_INPUT = GOOD.replace(
    "def generate_input(rng):\n", "def generate_input(rng):\n    return [[1, 0], [0, 0]]\n"
)

# transform raises.
RAISES = GOOD.replace(
    'return concept_routine(grid, "vertical")', 'return concept_routine(grid, "sideways")[5]'
)

# a module without generate_input.
MISSING_FUNCTION = GOOD.replace("def generate_input(rng):", "def make_input(rng):")

# the concept is an intermediate routine: it returns a number the transform uses.
COUNTS_COLORS = """
import numpy as np


def concept_routine(grid):
    return int(np.count_nonzero(np.asarray(grid)))


def generate_input(rng):
    width = rng.randint(3, 8)
    grid = [[0] * width for _ in range(3)]
    for column in rng.sample(range(width), rng.randint(1, width - 1)):
        grid[0][column] = rng.randint(1, 9)
    return grid


def transform(grid):
    out = np.asarray(grid).copy()
    out[2, : concept_routine(grid)] = 2
    return out
"""

# the same, with the count computed but not used.
COUNTS_UNUSED = COUNTS_COLORS.replace(
    "out[2, : concept_routine(grid)] = 2",
    "concept_routine(grid)\n    out[2, : int(np.count_nonzero(out))] = 2",
)

# the substitute's empty list crashes transform, but the value really matters: the
# crash-then-swap rule must still accept it.
INDEXES_HONESTLY = """
import numpy as np


def concept_routine(grid):
    return sorted({int(v) for v in np.asarray(grid).flat if v != 0})


def generate_input(rng):
    width = rng.randint(3, 8)
    grid = [[0] * width for _ in range(3)]
    grid[0][rng.randrange(width)] = rng.randint(1, 9)
    return grid


def transform(grid):
    out = np.asarray(grid).copy()
    out[2, :] = concept_routine(grid)[0]
    return out
"""
