"""Fill enclosed regions: the black cells inside closed outlines become yellow."""

from collections import deque

import numpy as np


def concept_routine(grid, color, connectivity):
    """Paint every background (0) cell that cannot reach the border with `color`."""
    g = np.array(grid)
    height, width = g.shape
    steps = [(1, 0), (-1, 0), (0, 1), (0, -1)]
    if connectivity == 8:
        steps += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
    outside = np.zeros(g.shape, dtype=bool)
    queue = deque()
    for r in range(height):
        for c in range(width):
            on_border = r in (0, height - 1) or c in (0, width - 1)
            if on_border and g[r, c] == 0:
                outside[r, c] = True
                queue.append((r, c))
    while queue:
        r, c = queue.popleft()
        for dr, dc in steps:
            y, x = r + dr, c + dc
            if 0 <= y < height and 0 <= x < width and not outside[y, x] and g[y, x] == 0:
                outside[y, x] = True
                queue.append((y, x))
    g[(g == 0) & ~outside] = color
    return g


def generate_input(rng):
    height, width = rng.randint(7, 14), rng.randint(7, 14)
    grid = [[0] * width for _ in range(height)]
    wanted, boxes = rng.randint(1, 3), 0
    for _ in range(100):
        if boxes >= wanted:
            break
        h, w = rng.randint(3, 6), rng.randint(3, 6)
        top, left = rng.randint(0, height - h), rng.randint(0, width - w)
        cells = [(top + y, left + x) for y in range(-1, h + 1) for x in range(-1, w + 1)]
        if any(0 <= y < height and 0 <= x < width and grid[y][x] for y, x in cells):
            continue
        color = rng.choice([1, 2, 3, 5, 6, 7, 8, 9])
        for y in range(h):
            for x in range(w):
                if y in (0, h - 1) or x in (0, w - 1):
                    grid[top + y][left + x] = color
        boxes += 1
    if boxes == 0:
        for y in range(3):
            for x in range(3):
                grid[y][x] = 0 if (y, x) == (1, 1) else 2
    return grid


def transform(grid):
    return concept_routine(grid, 4, 4)


def variants(grid):
    """The concept applied alone: enclosed background filled with each color, both ways."""
    return [concept_routine(grid, color, steps) for color in range(1, 10) for steps in (4, 8)]
