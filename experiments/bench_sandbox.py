"""What the kernel layer costs: the ``bwrap`` sandbox vs the ``process`` sandbox, side by side.

A "verification" is one typical ARC program run on 4 grids (3 train inputs and 1 test input)
through the ARC harness (``np`` bound, arguments passed through ``np.array``). Both sandboxes
run the same programs in one process; each repetition measures both, alternating which goes
first, after the workers are warm (their start is not timed). Reported per sandbox and
thread count: medians over repetitions of programs per second and of the per-program
latency (wall time of one ``Sandbox.run``), and the ratio bwrap / process.

``--floor`` measures instead what one program costs at the least and what a pre-forked
child or ``posix_spawn`` could take off it: the latency of ``Sandbox.run`` of a program
that returns its argument (one input; the whole round trip: framing, a fresh directory,
fork, child set-up, exec, reply, reaping), then, in an interpreter warmed like a zygote
(numpy and scipy.ndimage imported, ``gc.freeze()``), ``fork`` + ``_exit`` + ``waitpid``
(what a pre-forked child would move off the critical path, at most), the wake-up of a
pre-forked child blocked on a pipe (what it would still cost), and ``posix_spawn`` of a
fresh interpreter with and without numpy (what spawning instead of forking costs).

``--against CHECKOUT`` compares this checkout with another one (say a worktree of main),
side by side in one run: each repetition runs the measurement once with each checkout's
``arcmemo`` (in a fresh process, alternating which goes first) and the table gives the
medians and the ratio this / other per sandbox.

Usage: ``python experiments/bench_sandbox.py [--programs 60] [--repeats 5] [--threads 1 2]
[--json FILE] [--floor] [--against CHECKOUT]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
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


IDENTITY = Program(source="def f(x):\n    return x\n", entry="f")

WARM_PROCESS = r"""
import gc, json, os, statistics, subprocess, sys, time
import numpy, scipy.ndimage  # what a zygote imports before it serves
gc.freeze()
n = int(sys.argv[1])

def median_ms(samples):
    return round(1000 * statistics.median(samples), 3)

forks = []
for _ in range(n):
    began = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    forks.append(time.perf_counter() - began)

wakes = []
for _ in range(n):
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.read(request_r, 1)
        os.write(reply_w, b"r")
        os._exit(0)
    time.sleep(0.002)  # the spare child is waiting before the request comes
    began = time.perf_counter()
    os.write(request_w, b"q")
    os.read(reply_r, 1)
    wakes.append(time.perf_counter() - began)
    os.waitpid(pid, 0)
    for fd in (request_r, request_w, reply_r, reply_w):
        os.close(fd)

def spawn(code, count):
    samples = []
    for _ in range(count):
        began = time.perf_counter()
        pid = os.posix_spawn(sys.executable, [sys.executable, "-I", "-B", "-c", code], {})
        os.waitpid(pid, 0)
        samples.append(time.perf_counter() - began)
    return samples

json.dump({
    "fork_exit_wait_ms": median_ms(forks),
    "prefork_wake_ms": median_ms(wakes),
    "spawn_python_ms": median_ms(spawn("pass", max(5, n // 10))),
    "spawn_python_numpy_ms": median_ms(spawn("import numpy", max(5, n // 10))),
}, sys.stdout)
"""


def floor(calls: int, out: str | None = None) -> None:
    """The per-program floor of each sandbox and the costs a pre-fork or spawn would change."""
    rows = {}
    for kind in KINDS:
        box = SANDBOXES.create(SANDBOXES.spec(kind, {"max_workers": 1}))
        try:
            box.run(IDENTITY, [[0]])  # warm (not timed)
            samples = []
            for k in range(calls):
                began = time.perf_counter()
                box.run(IDENTITY, [[k]])
                samples.append(time.perf_counter() - began)
        finally:
            box.close()
        rows[kind] = round(1000 * statistics.median(samples), 3)
    done = subprocess.run(
        [sys.executable, "-I", "-c", WARM_PROCESS, str(calls)],
        check=True,
        capture_output=True,
        text=True,
    )
    warm = json.loads(done.stdout)
    print(f"per-program floor, medians of {calls} (ms)")
    print("| measure | ms |")
    print("|---|---|")
    print(f"| bwrap `Sandbox.run`, identity program, 1 input | {rows['bwrap']} |")
    print(f"| process `Sandbox.run`, identity program, 1 input | {rows['process']} |")
    print(f"| warm interpreter: fork + _exit + waitpid | {warm['fork_exit_wait_ms']} |")
    print(f"| warm interpreter: wake a pre-forked child | {warm['prefork_wake_ms']} |")
    print(f"| posix_spawn python -I -B -c pass | {warm['spawn_python_ms']} |")
    print(f"| posix_spawn python -I -B -c 'import numpy' | {warm['spawn_python_numpy_ms']} |")
    if out:
        with open(out, "w") as handle:
            json.dump({"rows": [{f"{k}_ms_per_program": v for k, v in rows.items()}]}, handle)


def against(args: argparse.Namespace) -> None:
    """The same measurement with this checkout and ``args.against``, alternating."""
    roots = {
        "this": os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "other": os.path.abspath(args.against),
    }
    runs: dict[str, list[list[dict]]] = {label: [] for label in roots}
    with tempfile.TemporaryDirectory() as scratch:
        for repeat in range(args.repeats):
            order = list(roots) if repeat % 2 == 0 else list(roots)[::-1]
            for label in order:
                out = os.path.join(scratch, f"{label}-{repeat}.json")
                command = [sys.executable, os.path.abspath(__file__), "--repeats", "1"]
                command += ["--programs", str(args.programs), "--seed", str(args.seed)]
                command += ["--threads", *map(str, args.threads), "--json", out]
                command += ["--floor"] if args.floor else []
                # The checkout first; whatever else PYTHONPATH held (dependencies) after it.
                paths = [roots[label], *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
                env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
                subprocess.run(command, check=True, env=env, capture_output=True)
                with open(out) as handle:
                    runs[label].append(json.load(handle)["rows"])
    print(f"this: {roots['this']}\nother: {roots['other']}")
    what = "identity program, 1 input (--floor)" if args.floor else "typical program, 4 grids"
    print(f"ms per program ({what}), medians of {args.repeats} alternating runs")
    print("| threads | sandbox | this ms | other ms | this / other |")
    print("|---|---|---|---|---|")
    for index, threads in enumerate([1] if args.floor else args.threads):
        for kind in KINDS:
            key = f"{kind}_ms_per_program"
            mine = statistics.median(rows[index][key] for rows in runs["this"])
            theirs = statistics.median(rows[index][key] for rows in runs["other"])
            print(f"| {threads} | {kind} | {mine:.2f} | {theirs:.2f} | {mine / theirs:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=60, help="programs per measurement")
    parser.add_argument("--repeats", type=int, default=5, help="measurements per sandbox")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--json", help="also write the measurements to this file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--floor", action="store_true", help="measure the per-program floor")
    parser.add_argument("--against", help="another checkout to compare with, side by side")
    args = parser.parse_args()
    if args.against:
        against(args)
        return
    if args.floor:
        floor(max(20, args.programs), args.json)
        return

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
