"""Is the concept the crux of a puzzle? Simpler explanations of its examples, scored.

A puzzle teaches its concept only if nothing else explains it. :func:`crux_problems`
scores every rival explanation on the puzzle's examples:

* the **trivial baselines** (:func:`baselines`): identity; a constant grid (each output's
  shape, filled with the most common color of the other outputs); each half of the input
  (top, bottom, left, right); the most common of the other examples' outputs;
* **every other concept of the memory applied alone**: the outputs of its reference
  routine (``puzzles/handwritten/<concept id>.py``; each parameter setting its
  ``variants(grid)`` lists is a separate rival, else its ``transform``), computed in the
  sandbox by :func:`arcmemo.benchmarks.arc.puzzles.verify.verify_module`.

A rival *reproduces* the puzzle when the cells it gets wrong, summed over all examples, are
at most ``tolerance`` of the cells the puzzle changes (an output of another shape than the
input counts all its cells as changed; a rival of the wrong shape gets every cell wrong).
With a tolerance of 0.1, a puzzle whose real rule is a flip and whose concept only changes
one pixel is explained by "reflect grid" alone and rejected.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from arcmemo.benchmarks.arc.grids import Grid

Candidates = list[Grid | None]
"""A rival's output for each example, in order (None where it failed)."""


class Rival(BaseModel):
    """One rival explanation of a puzzle and how close it came."""

    name: str = Field(description="'identity', 'top half', 'reflect grid (variant 2)', ...")
    wrong: int = Field(description="Cells it gets wrong, summed over the examples.")
    changed: int = Field(description="Cells the puzzle changes, summed over the examples.")


def _cells(grid: Grid) -> int:
    return len(grid) * len(grid[0])


def changed_cells(grid_in: Grid, grid_out: Grid) -> int:
    """Cells the puzzle changes: differing cells, or every output cell if the shape changes."""
    if len(grid_in) != len(grid_out) or len(grid_in[0]) != len(grid_out[0]):
        return _cells(grid_out)
    return sum(
        a != b
        for row_in, row_out in zip(grid_in, grid_out, strict=True)
        for a, b in zip(row_in, row_out, strict=True)
    )


def wrong_cells(candidate: Grid | None, grid_out: Grid) -> int:
    """Cells of ``grid_out`` that ``candidate`` gets wrong (all of them if the shape differs)."""
    if candidate is None or not candidate or len(candidate) != len(grid_out):
        return _cells(grid_out)
    if len(candidate[0]) != len(grid_out[0]):
        return _cells(grid_out)
    return changed_cells(candidate, grid_out)


def baselines(inputs: list[Grid], outputs: list[Grid]) -> dict[str, Candidates]:
    """The trivial rivals' outputs for every example. The constant and the most common
    output of example ``i`` are taken from the *other* examples' outputs (a baseline must
    not see the answer it is scored on)."""

    def others(index: int) -> list[Grid]:
        return [grid for j, grid in enumerate(outputs) if j != index]

    def constant(index: int) -> Grid | None:
        colors = Counter(cell for grid in others(index) for row in grid for cell in row)
        if not colors:
            return None
        color = colors.most_common(1)[0][0]
        return [[color] * len(outputs[index][0]) for _ in outputs[index]]

    def mode(index: int) -> Grid | None:
        rest = others(index)
        if not rest:
            return None
        key = Counter(repr(grid) for grid in rest).most_common(1)[0][0]
        return next(grid for grid in rest if repr(grid) == key)

    def half(grid: Grid, which: str) -> Grid | None:
        height, width = len(grid), len(grid[0])
        if (which in ("top", "bottom") and height < 2) or (
            which in ("left", "right") and width < 2
        ):
            return None
        if which == "top":
            return [list(row) for row in grid[: height // 2]]
        if which == "bottom":
            return [list(row) for row in grid[(height + 1) // 2 :]]
        if which == "left":
            return [list(row[: width // 2]) for row in grid]
        return [list(row[(width + 1) // 2 :]) for row in grid]

    rivals: dict[str, Candidates] = {
        "identity": [[list(row) for row in grid] for grid in inputs],
        "constant": [constant(i) for i in range(len(outputs))],
        "most common output": [mode(i) for i in range(len(outputs))],
    }
    for which in ("top", "bottom", "left", "right"):
        rivals[f"{which} half"] = [half(grid, which) for grid in inputs]
    return rivals


def score(name: str, candidates: Candidates, outputs: list[Grid], inputs: list[Grid]) -> Rival:
    """How close ``candidates`` come to the outputs."""
    wrong = sum(
        wrong_cells(candidates[i] if i < len(candidates) else None, out)
        for i, out in enumerate(outputs)
    )
    changed = sum(changed_cells(grid, out) for grid, out in zip(inputs, outputs, strict=True))
    return Rival(name=name, wrong=wrong, changed=changed)


def crux_problems(
    inputs: list[Grid],
    outputs: list[Grid],
    others: dict[str, Candidates],
    *,
    tolerance: float,
) -> tuple[list[str], str]:
    """The rivals that reproduce the puzzle (one line each) and a note of what was tried."""
    problems: list[str] = []
    rivals = {**baselines(inputs, outputs), **others}
    for name, candidates in rivals.items():
        rival = score(name, candidates, outputs, inputs)
        if rival.wrong <= tolerance * rival.changed:
            kind = "concept" if name in others else "baseline"
            problems.append(
                f"the {kind} {name!r} alone reproduces the outputs (it gets {rival.wrong} of "
                f"the {rival.changed} changed cells wrong, tolerance {tolerance:g}), so the "
                "target concept is not the crux of the puzzle"
            )
    concepts = sorted({name.split(" (variant")[0] for name in others})
    note = (
        f"{len(rivals) - len(others)} trivial baselines and "
        f"{len(others)} rival rules from {len(concepts)} other concept(s)"
        + (f" ({', '.join(concepts)})" if concepts else "")
        + " tried"
    )
    return problems, note
