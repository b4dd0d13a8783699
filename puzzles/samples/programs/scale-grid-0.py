"""Scale grid: every cell of the input becomes a 2x2 block of its color."""

import numpy as np

FACTORS = (2, 3)


def concept_routine(grid, factor):
    """Blow every cell up into a `factor` x `factor` block of its color."""
    g = np.asarray(grid)
    return np.kron(g, np.ones((factor, factor), dtype=g.dtype))


def generate_input(rng):
    height, width = rng.randint(2, 5), rng.randint(2, 5)
    grid = [[rng.choice([0, 0, rng.randint(1, 9)]) for _ in range(width)] for _ in range(height)]
    grid[0][0] = rng.randint(1, 9)
    grid[height - 1][width - 1] = 0
    return grid


def transform(grid):
    return concept_routine(grid, 2)


def variants(grid):
    """The concept applied alone: the grid scaled by each factor (rival rules)."""
    return [concept_routine(grid, factor) for factor in FACTORS]
