"""Trusted property tests of ``concept_routine``, appended to the harness in the sandbox.

Like ``_harness.py`` this file is never imported by arcmemo: it is read as text and run
after the model's module (every name starts with ``_arcmemo_``). The parent decides which
properties a concept must have (``properties.py`` beside this file); here each one is
tested on a real call of the routine: its grid argument ``grid`` (a numpy array), its result
``result`` (a valid grid, as an array) and, for the properties that apply the routine again,
``again(new_grid)``, which calls the real routine with the same other arguments and
``new_grid`` in place of the grid argument.

Every test returns None when the call has the property, else one line saying how it fails.
"""

import numpy as _arcmemo_np_p


def _arcmemo_colors(g):
    values, counts = _arcmemo_np_p.unique(g, return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts, strict=True)}


def _arcmemo_same(a, b) -> bool:
    return a.shape == b.shape and bool((a == b).all())


def _arcmemo_prop_involution(grid, result, again):
    twice = again(result)
    if twice is None or not _arcmemo_same(_arcmemo_np_p.asarray(twice), grid):
        return "applied twice it does not give back its input (a reflection is an involution)"
    return None


def _arcmemo_prop_same_colors(grid, result, again):
    if _arcmemo_colors(grid) != _arcmemo_colors(result):
        return (
            f"it changes the colors' cell counts from {_arcmemo_colors(grid)} to "
            f"{_arcmemo_colors(result)} (it should only move cells)"
        )
    return None


def _arcmemo_prop_order_four(grid, result, again):
    current = result
    for _ in range(3):
        current = again(current)
        if current is None:
            return "applying it again failed"
        current = _arcmemo_np_p.asarray(current)
    if not _arcmemo_same(current, grid):
        return "applied four times it does not give back its input (a quarter turn has order 4)"
    return None


def _arcmemo_prop_keeps_shapes(grid, result, again):
    if result.shape != grid.shape:
        return f"it changes the grid's size from {grid.shape} to {result.shape}"
    if not ((result != 0) == (grid != 0)).all():
        return "it changes which cells are non-background (a recolor keeps every shape)"
    return None


def _arcmemo_prop_translated(grid, result, again):
    if result.shape != grid.shape:
        return f"it changes the grid's size from {grid.shape} to {result.shape}"
    before, after = _arcmemo_colors(grid[grid != 0]), _arcmemo_colors(result[result != 0])
    if any(count > before.get(color, 0) for color, count in after.items()):
        return "it adds colored cells that were not in its input (a move keeps each shape)"
    painted = [tuple(p) for p in _arcmemo_np_p.argwhere((result != grid) & (result != 0))]
    if not painted:
        return None
    height, width = grid.shape
    first = painted[0]
    for source in _arcmemo_np_p.argwhere(grid == result[first]):
        dr, dc = first[0] - int(source[0]), first[1] - int(source[1])
        if (dr, dc) == (0, 0):
            continue
        if all(
            0 <= r - dr < height and 0 <= c - dc < width and grid[r - dr, c - dc] == result[r, c]
            for r, c in painted
        ):
            return None
    return "the cells it paints are not its input's cells shifted by one offset"


def _arcmemo_prop_collinear(grid, result, again):
    if result.shape != grid.shape:
        return f"it changes the grid's size from {grid.shape} to {result.shape}"
    cells = [(int(r), int(c)) for r, c in _arcmemo_np_p.argwhere(result != grid)]
    if len(cells) < 2:
        return None
    if len({int(result[p]) for p in cells}) > 1:
        return "it paints cells of more than one color (a line has one color)"
    keys = (lambda p: p[0], lambda p: p[1], lambda p: p[0] - p[1], lambda p: p[0] + p[1])
    if not any(len({key(p) for p in cells}) == 1 for key in keys):
        return "the cells it paints are not on one row, column or diagonal (a line is collinear)"
    return None


def _arcmemo_prop_subgrid(grid, result, again):
    h, w = result.shape
    height, width = grid.shape
    for top in range(height - h + 1):
        for left in range(width - w + 1):
            if _arcmemo_same(grid[top : top + h, left : left + w], result):
                return None
    return "its output is not a window of its input (a crop returns a subgrid)"


def _arcmemo_prop_scaled(grid, result, again):
    height, width = grid.shape
    if result.shape[0] % height or result.shape[1] % width:
        return f"its output size {result.shape} is not a multiple of its input size {grid.shape}"
    fy, fx = result.shape[0] // height, result.shape[1] // width
    if not _arcmemo_same(_arcmemo_np_p.kron(grid, _arcmemo_np_p.ones((fy, fx), dtype=int)), result):
        return "its output is not its input with every cell blown up into a block"
    return None


def _arcmemo_prop_fills_enclosed(grid, result, again):
    if result.shape != grid.shape:
        return f"it changes the grid's size from {grid.shape} to {result.shape}"
    changed = result != grid
    if (changed & (grid != 0)).any():
        return "it changes non-background cells (a fill only paints background cells)"
    if len({int(v) for v in result[changed]}) > 1:
        return "it paints with more than one color"
    height, width = grid.shape
    outside = _arcmemo_np_p.zeros(grid.shape, dtype=bool)
    stack = [
        (r, c)
        for r in range(height)
        for c in range(width)
        if (r in (0, height - 1) or c in (0, width - 1)) and grid[r, c] == 0
    ]
    for r, c in stack:
        outside[r, c] = True
    while stack:
        r, c = stack.pop()
        for y, x in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if 0 <= y < height and 0 <= x < width and not outside[y, x] and grid[y, x] == 0:
                outside[y, x] = True
                stack.append((y, x))
    if (changed & outside).any():
        return "it paints background cells that reach the border (they are not enclosed)"
    return None


_ARCMEMO_PROPERTIES = {
    "involution": _arcmemo_prop_involution,
    "same_colors": _arcmemo_prop_same_colors,
    "order_four": _arcmemo_prop_order_four,
    "keeps_shapes": _arcmemo_prop_keeps_shapes,
    "translated": _arcmemo_prop_translated,
    "collinear": _arcmemo_prop_collinear,
    "subgrid": _arcmemo_prop_subgrid,
    "scaled": _arcmemo_prop_scaled,
    "fills_enclosed": _arcmemo_prop_fills_enclosed,
}
