"""Rotate grid: the output is the input turned a quarter turn clockwise."""

import numpy as np

ANGLES = (90, 180, 270)


def concept_routine(grid, angle):
    """Turn the whole grid clockwise by `angle` degrees (a multiple of 90)."""
    if angle % 90:
        raise ValueError(f"angle {angle!r} is not a multiple of 90")
    return np.rot90(np.asarray(grid), -(angle // 90) % 4).copy()


def generate_input(rng):
    height, width = rng.randint(3, 8), rng.randint(3, 8)
    grid = [[0] * width for _ in range(height)]
    for _ in range(rng.randint(3, height * width // 2)):
        grid[rng.randrange(height)][rng.randrange(width)] = rng.randint(1, 9)
    # One marked corner and three empty ones: no turn maps the grid onto itself.
    grid[0][0] = rng.randint(1, 9)
    grid[0][width - 1] = grid[height - 1][0] = grid[height - 1][width - 1] = 0
    return grid


def transform(grid):
    return concept_routine(grid, 90)


def variants(grid):
    """The concept applied alone: the grid turned by each angle (rival rules)."""
    return [concept_routine(grid, angle) for angle in ANGLES]
