"""Uses the concept only incidentally: the rule (shift every row down by one) ignores what
concept_routine returns, and the old ablation counted it as load-bearing only because
indexing the substitute's empty list raises."""

import numpy as np


def concept_routine(grid):
    return sorted({int(v) for v in np.asarray(grid).flat if v != 0})


def generate_input(rng):
    height, width = rng.randint(3, 7), rng.randint(3, 7)
    grid = [[0] * width for _ in range(height)]
    for _ in range(rng.randint(2, 6)):
        grid[rng.randrange(height)][rng.randrange(width)] = rng.randint(1, 9)
    grid[0][0] = rng.randint(1, 9)
    grid[height - 1][0] = 0
    return grid


def transform(grid):
    colors = concept_routine(grid)
    assert colors[0] >= 1
    return np.roll(np.asarray(grid), 1, axis=0)
