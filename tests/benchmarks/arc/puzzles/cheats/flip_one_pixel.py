"""Claims "recolor object", but the real rule is a left-right flip; the (honest) recolor
only changes one pixel of the flipped grid."""

import numpy as np


def concept_routine(grid, object, scheme):
    out = np.array(grid)
    for (row, col), color in object:
        out[row, col] = scheme.get(color, color)
    return out


def generate_input(rng):
    height, width = rng.randint(5, 9), rng.randint(5, 9)
    grid = [
        [rng.randint(1, 9) if rng.random() < 0.6 else 0 for _ in range(width)]
        for _ in range(height)
    ]
    grid[0][0] = rng.randint(1, 9)
    grid[0][width - 1] = 0
    return grid


def transform(grid):
    out = np.asarray(grid)[:, ::-1].copy()
    row, col = (int(v) for v in np.argwhere(out != 0)[0])
    color = int(out[row, col])
    return concept_routine(out, [((row, col), color)], {color: color % 9 + 1})
