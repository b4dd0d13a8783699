"""What the kernel layer costs: the ``bwrap`` sandbox vs the ``process`` sandbox, side by side.

A "verification" is one typical ARC program run on 4 grids (3 train inputs and 1 test input)
through the ARC harness (``np`` bound, arguments passed through ``np.array``). Both sandboxes
run the same programs in one process; each repetition measures both, alternating which goes
first, after the workers are warm (their start is not timed). Reported per sandbox and
thread count: medians over repetitions of programs per second and of the per-program
latency (wall time of one ``Sandbox.run``), and the ratio bwrap / process.

Usage: ``python experiments/bench_sandbox.py [--programs 60] [--repeats 5] [--threads 1 2]
[--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from arcmemo.sandbox import SANDBOXES, Program, Sandbox

PROGRAMS = {
    "numpy": """
def transform(grid):
    out = grid.copy()
    height, width = grid.shape
    # let every colored cell drip down one row, then mirror the grid
    for r in range(1, height):
        for c in range(width):
            if grid[r, c] == 0 and grid[r - 1, c] != 0:
                out[r, c] = grid[r - 1, c]
    colors, counts = np.unique(out[out != 0], return_counts=True)
    if len(colors):
        out[out == colors[np.argmax(counts)]] = 5
    return np.fliplr(out)
""",
    "scipy": """
from collections import namedtuple
from scipy import ndimage

Obj = namedtuple("Obj", "label size")

def transform(grid):
    labels, count = ndimage.label(grid > 0)
    objs = [Obj(k, int((labels == k).sum())) for k in range(1, count + 1)]
    out = grid.copy()
    for obj in objs:
        if obj.size > 2:
            out[labels == obj.label] = 4
    return out
""",
}
HARNESS = (
    "def _arcmemo_transform(grid):\n    import numpy\n    return transform(numpy.array(grid))\n"
)
KINDS = ("bwrap", "process")


def make_grids(rng: random.Random, count: int) -> list[list[list[int]]]:
    grids = []
    for _ in range(count):
        height, width = rng.randint(8, 20), rng.randint(8, 20)
        grids.append(
            [[rng.choice([0, 0, 0, 1, 2, 3]) for _ in range(width)] for _ in range(height)]
        )
    return grids


def measure(sandbox: Sandbox, jobs: list[tuple[Program, list[Any]]], threads: int) -> dict:
    latencies: list[float] = []

    def verify(job: tuple[Program, list[Any]]) -> list[object]:
        program, grids = job
        began = time.perf_counter()
        results = sandbox.run(program, [[grid] for grid in grids])
        latencies.append(time.perf_counter() - began)
        return [r.value if r.ok else r.error_kind for r in results]

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        outputs = list(pool.map(verify, jobs))
    elapsed = time.perf_counter() - started
    return {
        "programs_per_s": len(jobs) / elapsed,
        "ms_per_program": 1000 * statistics.median(latencies),
        "outputs": outputs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=60, help="programs per measurement")
    parser.add_argument("--repeats", type=int, default=5, help="measurements per sandbox")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--json", help="also write the measurements to this file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    programs = [
        Program(
            source=source, entry="_arcmemo_transform", harness=HARNESS, bindings={"np": "numpy"}
        )
        for source in PROGRAMS.values()
    ]
    jobs = [(programs[k % len(programs)], make_grids(rng, 4)) for k in range(args.programs)]
    rows = []
    for threads in args.threads:
        boxes = {
            kind: SANDBOXES.create(SANDBOXES.spec(kind, {"max_workers": threads})) for kind in KINDS
        }
        samples: dict[str, list[dict]] = {kind: [] for kind in KINDS}
        try:
            for kind in KINDS:  # warm every worker (not timed)
                measure(boxes[kind], jobs[: 2 * threads], threads)
            for repeat in range(args.repeats):
                order = KINDS if repeat % 2 == 0 else KINDS[::-1]
                for kind in order:
                    samples[kind].append(measure(boxes[kind], jobs, threads))
        finally:
            for box in boxes.values():
                box.close()
        if any(s["outputs"] != samples["process"][0]["outputs"] for k in KINDS for s in samples[k]):
            raise SystemExit("the two sandboxes disagree on the outputs")
        row: dict[str, Any] = {"threads": threads, "programs": args.programs}
        for kind in KINDS:
            row[f"{kind}_programs_per_s"] = round(
                statistics.median(s["programs_per_s"] for s in samples[kind]), 2
            )
            row[f"{kind}_ms_per_program"] = round(
                statistics.median(s["ms_per_program"] for s in samples[kind]), 2
            )
        row["throughput_ratio"] = round(
            row["bwrap_programs_per_s"] / row["process_programs_per_s"], 3
        )
        row["latency_ratio"] = round(row["bwrap_ms_per_program"] / row["process_ms_per_program"], 3)
        rows.append(row)

    print(
        f"{'threads':>7}{'bwrap prog/s':>14}{'process prog/s':>16}{'ratio':>7}"
        f"{'bwrap ms':>10}{'process ms':>12}{'ratio':>7}"
    )
    for row in rows:
        print(
            f"{row['threads']:>7}{row['bwrap_programs_per_s']:>14}{row['process_programs_per_s']:>16}"
            f"{row['throughput_ratio']:>7}{row['bwrap_ms_per_program']:>10}"
            f"{row['process_ms_per_program']:>12}{row['latency_ratio']:>7}"
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(
                {"python": sys.version.split()[0], "repeats": args.repeats, "rows": rows},
                handle,
                indent=2,
            )


if __name__ == "__main__":
    main()
