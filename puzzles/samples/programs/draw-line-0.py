"""Draw line: every colored pixel shoots a line of its color to the right edge."""

import numpy as np

STEPS = {
    "up": (-1, 0),
    "down": (1, 0),
    "left": (0, -1),
    "right": (0, 1),
    "up-left": (-1, -1),
    "up-right": (-1, 1),
    "down-left": (1, -1),
    "down-right": (1, 1),
}


def concept_routine(grid, start, direction, color, stop=None):
    """Copy the grid and paint from `start` towards `direction` until the edge or `stop`."""
    out = np.array(grid)
    dr, dc = STEPS[direction]
    r, c = start
    while 0 <= r < out.shape[0] and 0 <= c < out.shape[1]:
        if stop is not None and stop((r, c), out):
            break
        out[r, c] = color
        r, c = r + dr, c + dc
    return out


def generate_input(rng):
    height, width = rng.randint(5, 12), rng.randint(5, 12)
    grid = [[0] * width for _ in range(height)]
    rows = rng.sample(range(height), rng.randint(1, max(1, height // 2)))
    for row in rows:
        grid[row][rng.randrange(width - 1)] = rng.randint(1, 9)
    return grid


def transform(grid, direction="right"):
    out = np.array(grid)
    for r, c in np.argwhere(np.asarray(grid) != 0):
        out = concept_routine(out, (int(r), int(c)), direction, int(grid[r][c]))
    return out


def variants(grid):
    """The concept applied alone: a line from every colored pixel, in each direction."""
    return [transform(grid, direction) for direction in STEPS]
