"""Size of an online run's directory and the time to load it for a report, side by side for
this checkout and another (``--old``), on synthetic memories.

The run is the ``online 16`` row of ``experiments/bench_memory.py``: the first 16 ARC
evaluation tasks, the LLM selector (scripted) under the memory budget, one attempt, no
retries, ``--update online`` in batches of 4 (a memory snapshot after each batch). Each
checkout runs in its own process (``PYTHONPATH`` set to it); both read the same memory file.

    python experiments/bench_rundir.py --old /path/to/other/checkout --sizes 3000,30000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def _bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def worker(memory: Path, out: Path) -> dict[str, Any]:
    """One online run of 16 tasks into ``out``; what it left and the report's load time."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_memory import SELECTING_MODEL

    from arcmemo.analysis.report.load import load_run
    from arcmemo.cli.main import cli

    script = out.parent / "selecting.py"
    script.write_text(SELECTING_MODEL, encoding="utf-8")
    args = ["run", "arc-agi-1", "--split", "evaluation", "--limit", "16"]
    args += ["--memory", str(memory), "--select", "llm", "--attempts", "1"]
    args += ["--memory-budget", "17000", "--feedback-rounds", "0", "--no-cache"]
    args += ["--model", f"scripted:{script}", "--out", str(out)]
    args += ["--update", "online", "--update-every", "4"]
    args += ["--memory-out", str(out.parent / "memory-out.json")]
    start = time.perf_counter()
    cli.main(args, standalone_mode=False)
    run_seconds = time.perf_counter() - start
    start = time.perf_counter()
    loaded = load_run(out)
    load_seconds = time.perf_counter() - start
    snapshots = sorted((out / "memory").glob("batch-*.json"))
    return {
        "run_s": run_seconds,
        "report_load_s": load_seconds,
        "dir_bytes": _bytes(out),
        "memory_dir_bytes": _bytes(out / "memory"),
        "snapshot_bytes": sum(p.stat().st_size for p in snapshots),
        "snapshots": len(snapshots),
        "final_entries": loaded.snapshot_sizes[-1] if loaded.snapshot_sizes else None,
    }


def _measure(checkout: Path, memory: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "PYTHONPATH": str(checkout), "ARCMEMO_CACHE_DIR": folder + "/cache"}
        command = [sys.executable, str(Path(__file__).resolve()), "--worker"]
        command += ["--memory", str(memory), "--out", str(Path(folder) / "run")]
        done = subprocess.run(
            command, cwd=checkout, env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"{checkout}: the run failed:\n{done.stderr[-3000:]}")
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _mb(value: int) -> str:
    return f"{value / 1e6:,.2f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3000,30000")
    parser.add_argument("--old", type=Path, help="Checkout to compare with (its root).")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--memory", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.memory, args.out)))
        return
    from arcmemo.memory.synthetic import synthetic_memory

    checkouts = {"this": HERE, **({"old": args.old.resolve()} if args.old else {})}
    print("| concepts | checkout | run dir | memory/ | snapshots | report load | run |")
    print("|---|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            memory = Path(folder) / "memory.json"
            synthetic_memory(size).save(memory)
            for name, checkout in checkouts.items():
                r = _measure(checkout, memory)
                print(
                    f"| {size:,} | {name} | {_mb(r['dir_bytes'])} | {_mb(r['memory_dir_bytes'])}"
                    f" | {r['snapshots']} ({_mb(r['snapshot_bytes'])}) | "
                    f"{r['report_load_s']:.2f} s | {r['run_s']:.1f} s |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
