"""What retrieval by behaviour costs per task at 300, 3,000 and 30,000 library functions.

A synthetic library (written here, no model) of one-grid functions of four shapes (a numpy
roll, a recolouring, a crop to the non-zero cells, a Python double loop over the cells)
is ranked by :func:`arcmemo.selection.behaviour.rank_by_behaviour` on one task of 3 train
pairs of 10x10 grids, in the sandbox, with a budget high enough to run everything. Per
library size: wall seconds per task, functions run, functions per second, and the share
run within the default budget (``BehaviourOptions().budget_s``). The sandbox's workers are
warm before timing (their start is not counted).

Usage: ``python experiments/behaviour_cost.py [--sizes 300 3000 30000] [--sandbox bwrap]
[--chunk 500] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from arcmemo.memory.schema import Concept, LibraryFunction, Memory
from arcmemo.sandbox import SANDBOXES, Sandbox
from arcmemo.selection.behaviour import BehaviourOptions, rank_by_behaviour

_SHAPES = (
    "return np.roll(grid, {k}, axis={axis})",
    "out = grid.copy()\n    out[out == {a}] = {b}\n    return out",
    "r, c = np.nonzero(grid == {a})\n    if len(r) == 0:\n        return grid\n"
    "    return grid[r.min():r.max() + 1, c.min():c.max() + 1]",
    "out = [[0] * len(grid[0]) for _ in grid]\n    for i in range(len(grid)):\n"
    "        for j in range(len(grid[0])):\n"
    "            out[i][j] = int(grid[(i + {k}) % len(grid)][j]) % {m}\n    return out",
)


def synthetic_memory(size: int, seed: int = 0) -> Memory:
    """``size`` concepts with one synthetic grid function each."""
    rng = random.Random(seed)
    concepts = []
    for index in range(size):
        shape = _SHAPES[index % len(_SHAPES)]
        body = shape.format(
            k=rng.randint(1, 5), axis=rng.randint(0, 1), a=rng.randint(1, 9), b=rng.randint(0, 9),
            m=rng.randint(2, 10),
        )  # fmt: skip
        name = f"f_{index}"
        source = (
            f'import numpy as np\n\n\ndef {name}(grid):\n    """Synthetic function {index}."""\n'
            f"    {body}\n"
        )
        function = LibraryFunction(name=name, source=source, signature="(grid: Grid) -> Grid")
        concepts.append(Concept(name=f"routine {index}", kind="routine", functions=[function]))
    return Memory(domain="arc", concepts=concepts)


def task(seed: int = 1) -> list[tuple[list[list[int]], list[list[int]]]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(3):
        grid = [[rng.choice([0, 0, 0, 1, 2, 3]) for _ in range(10)] for _ in range(10)]
        pairs.append((grid, [row[::-1] for row in grid]))
    return pairs


def measure(sandbox: Sandbox, size: int, chunk: int, budget_s: float) -> dict[str, float]:
    memory = synthetic_memory(size)
    examples = task()
    started = time.perf_counter()
    ranking = rank_by_behaviour(
        memory, examples, sandbox, task_id=None, budget_s=budget_s, call_timeout_s=1.0, chunk=chunk
    )
    seconds = time.perf_counter() - started
    return {
        "functions": size,
        "run": ranking.run,
        "seconds": round(seconds, 3),
        "functions_per_s": round(ranking.run / seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 3000, 30000])
    parser.add_argument("--sandbox", default="bwrap")
    parser.add_argument("--chunk", type=int, default=BehaviourOptions().chunk)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    default_budget = BehaviourOptions().budget_s
    sandbox = SANDBOXES.create(SANDBOXES.spec(args.sandbox, {"max_workers": args.workers}))
    rows = []
    try:
        measure(sandbox, 50, args.chunk, 600.0)  # warm the workers
        for size in args.sizes:
            full = measure(sandbox, size, args.chunk, 3600.0)
            bounded = measure(sandbox, size, args.chunk, default_budget)
            full["run_within_default_budget"] = bounded["run"]
            full["bounded_seconds"] = bounded["seconds"]
            rows.append(full)
            print(json.dumps(full), flush=True)
    finally:
        sandbox.close()
    print(
        f"\n{'functions':>10} {'s/task':>8} {'fn/s':>8} "
        f"{'run in ' + format(default_budget, 'g') + ' s':>14} {'bounded s':>10}"
    )
    for row in rows:
        print(
            f"{row['functions']:>10,} {row['seconds']:>8.2f} {row['functions_per_s']:>8.1f} "
            f"{row['run_within_default_budget']:>14,} {row['bounded_seconds']:>10.2f}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
