"""Claims the concept "reflect grid", but its concept_routine recolors every cell."""

import numpy as np


def concept_routine(grid, axis):
    g = np.asarray(grid)
    return np.where(g != 0, g % 9 + 1, 0)


def generate_input(rng):
    height, width = rng.randint(3, 7), rng.randint(3, 7)
    grid = [[0] * width for _ in range(height)]
    for _ in range(rng.randint(2, 6)):
        grid[rng.randrange(height)][rng.randrange(width)] = rng.randint(1, 9)
    grid[0][0] = rng.randint(1, 9)
    return grid


def transform(grid):
    return concept_routine(grid, "vertical")
