"""Throughput of program verification: the sandbox vs one fresh interpreter per input.

A "verification" is one typical ARC program run on 4 grids (3 train inputs and 1 test input),
outputs validated. Both contenders run side by side in one process, on the same programs:

* ``sandbox``: ``LocalSandbox.run_transform`` (warm zygote, one forked child per program);
* ``fresh-python``: the published code's shape: a new ``python -c`` interpreter per input that
  imports numpy, runs the program and prints the output (2 s timeout each).

Usage: ``python experiments/bench_sandbox.py [--programs 40] [--threads 1 4] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from arcmemo.sandbox import get_sandbox, validate_grid

PROGRAM = """
import numpy as np

def transform(grid):
    g = np.array(grid)
    out = g.copy()
    height, width = g.shape
    # let every colored cell drip down one row, then mirror the grid
    for r in range(1, height):
        for c in range(width):
            if g[r, c] == 0 and g[r - 1, c] != 0:
                out[r, c] = g[r - 1, c]
    colors, counts = np.unique(out[out != 0], return_counts=True)
    if len(colors):
        out[out == colors[np.argmax(counts)]] = 5
    return np.fliplr(out)
"""

_FRESH_RUNNER = """
import json, sys
import numpy as np
source, grid = json.loads(sys.stdin.read())
namespace = {}
exec(source, namespace)
out = namespace["transform"](np.array(grid))
print(json.dumps(np.asarray(out).tolist()))
"""


def make_grids(rng: random.Random, count: int) -> list[list[list[int]]]:
    grids = []
    for _ in range(count):
        height, width = rng.randint(8, 20), rng.randint(8, 20)
        grids.append(
            [[rng.choice([0, 0, 0, 1, 2, 3]) for _ in range(width)] for _ in range(height)]
        )
    return grids


def verify_fresh(program: str, grids: list[list[list[int]]]) -> list[object]:
    outputs: list[object] = []
    for grid in grids:
        try:
            done = subprocess.run(
                [sys.executable, "-c", _FRESH_RUNNER],
                input=json.dumps([program, grid]),
                capture_output=True,
                text=True,
                timeout=2.0,
                env={},
            )
            outputs.append(validate_grid(json.loads(done.stdout)) if done.returncode == 0 else None)
        except (subprocess.TimeoutExpired, ValueError):
            outputs.append(None)
    return outputs


def measure(name: str, verify, jobs: list[list[list[list[int]]]], threads: int) -> dict:
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        results = list(pool.map(verify, jobs))
    elapsed = time.perf_counter() - started
    return {
        "contender": name,
        "threads": threads,
        "programs": len(jobs),
        "seconds": round(elapsed, 3),
        "programs_per_s": round(len(jobs) / elapsed, 2),
        "ms_per_program": round(1000 * elapsed / len(jobs), 2),
        "results": results,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=40, help="programs verified per run")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--json", help="also write the measurements to this file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    jobs = [make_grids(rng, 4) for _ in range(args.programs)]
    rows = []
    for threads in args.threads:
        sandbox = get_sandbox("local", max_workers=threads)
        try:
            sandbox.run_transform(PROGRAM, jobs[0])  # start the workers (not timed)

            def verify_sandbox(grids: list[list[list[int]]], box=sandbox) -> list[object]:
                return [r.value if r.ok else None for r in box.run_transform(PROGRAM, grids)]

            sandboxed = measure("sandbox", verify_sandbox, jobs, threads)
        finally:
            sandbox.close()
        fresh = measure("fresh-python", lambda grids: verify_fresh(PROGRAM, grids), jobs, threads)
        if sandboxed.pop("results") != fresh.pop("results"):
            raise SystemExit("the two contenders disagree on the outputs")
        sandboxed["speedup_vs_fresh"] = round(
            sandboxed["programs_per_s"] / fresh["programs_per_s"], 1
        )
        rows += [sandboxed, fresh]

    print(
        f"{'contender':<14}{'threads':>8}{'programs':>10}{'prog/s':>10}{'ms/prog':>10}{'speedup':>9}"
    )
    for row in rows:
        speedup = row.get("speedup_vs_fresh", "")
        print(
            f"{row['contender']:<14}{row['threads']:>8}{row['programs']:>10}"
            f"{row['programs_per_s']:>10}{row['ms_per_program']:>10}{speedup!s:>9}"
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"python": sys.version.split()[0], "rows": rows}, handle, indent=2)


if __name__ == "__main__":
    main()
