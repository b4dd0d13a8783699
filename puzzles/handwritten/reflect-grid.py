"""Reflect grid: the output is the input seen in a vertical mirror (left and right swap)."""

import numpy as np


AXES = ("horizontal", "vertical", "main diagonal", "anti diagonal")


def concept_routine(grid, axis):
    """Mirror the whole grid across an axis."""
    g = np.asarray(grid)
    if axis == "horizontal":
        return g[::-1, :].copy()
    if axis == "vertical":
        return g[:, ::-1].copy()
    if axis == "main diagonal":
        return g.T.copy()
    if axis == "anti diagonal":
        return g[::-1, ::-1].T.copy()
    raise ValueError(f"unknown axis {axis!r}")


def generate_input(rng):
    height, width = rng.randint(3, 9), rng.randint(3, 9)
    grid = [[0] * width for _ in range(height)]
    for _ in range(rng.randint(3, height * width // 2)):
        grid[rng.randrange(height)][rng.randrange(width)] = rng.randint(1, 9)
    # A marked top-left corner and an empty top-right corner: never symmetric.
    grid[0][0] = rng.randint(1, 9)
    grid[0][width - 1] = 0
    return grid


def transform(grid):
    return concept_routine(grid, "vertical")


def variants(grid):
    """The concept applied alone: the grid mirrored across each axis (rival rules)."""
    return [concept_routine(grid, axis) for axis in AXES]
