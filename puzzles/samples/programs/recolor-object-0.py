"""Recolor object: every grey shape takes the color numbered by its size (1-4 cells)."""

import numpy as np


def concept_routine(grid, object, scheme):
    """Copy the grid and paint the object's pixels with the color the scheme gives."""
    out = np.array(grid)
    if callable(scheme):
        new_color = scheme(object)
        recolor = {color: new_color for _, color in object}
    else:
        recolor = scheme
    for (row, col), color in object:
        out[row, col] = recolor.get(color, color)
    return out


def _objects(grid):
    """4-connected groups of equal non-zero cells, as lists of ((row, col), color)."""
    g = np.asarray(grid)
    seen = np.zeros(g.shape, dtype=bool)
    found = []
    for r in range(g.shape[0]):
        for c in range(g.shape[1]):
            if g[r, c] == 0 or seen[r, c]:
                continue
            color, stack, pixels = int(g[r, c]), [(r, c)], []
            seen[r, c] = True
            while stack:
                y, x = stack.pop()
                pixels.append(((y, x), color))
                for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    ny, nx = y + dy, x + dx
                    if (
                        0 <= ny < g.shape[0]
                        and 0 <= nx < g.shape[1]
                        and not seen[ny, nx]
                        and g[ny, nx] == color
                    ):
                        seen[ny, nx] = True
                        stack.append((ny, nx))
            found.append(sorted(pixels))
    return found


def _free(grid, row, col):
    height, width = len(grid), len(grid[0])
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            y, x = row + dy, col + dx
            if 0 <= y < height and 0 <= x < width and grid[y][x] != 0:
                return False
    return True


def generate_input(rng):
    height, width = rng.randint(6, 12), rng.randint(6, 12)
    grid = [[0] * width for _ in range(height)]
    wanted, placed = rng.randint(3, 6), 0
    for _ in range(200):
        if placed >= wanted:
            break
        size = rng.randint(1, 4)
        row, col = rng.randrange(height), rng.randrange(width)
        if not _free(grid, row, col):
            continue
        shape = [(row, col)]
        while len(shape) < size:
            y, x = rng.choice(shape)
            dy, dx = rng.choice(((1, 0), (-1, 0), (0, 1), (0, -1)))
            y, x = y + dy, x + dx
            if 0 <= y < height and 0 <= x < width and (y, x) not in shape and _free(grid, y, x):
                shape.append((y, x))
            elif rng.random() < 0.2:
                break
        for y, x in shape:
            grid[y][x] = 5
        placed += 1
    if placed == 0:
        grid[0][0] = 5
    return grid


def transform(grid):
    out = np.array(grid)
    for shape in _objects(grid):
        out = concept_routine(out, shape, lambda pixels: len(pixels))
    return out
