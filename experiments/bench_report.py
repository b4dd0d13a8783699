"""What ``arcmemo report`` costs at scale: the old report and the new, side by side.

Builds synthetic ARC runs (``tests/support/synthetic_runs.py``: 3-5 train pairs of up to 30x30,
2 attempts of up to 3 rounds with programs, reasoning text and train-pair feedback) of each
size, then for each code tree renders the report in a fresh process (render time: load and
render, as ``arcmemo report`` does; peak memory: the process's peak RSS, imports included)
and loads the page in headless Chromium (navigation to load event plus the first layout,
each load in a fresh browser). Each number is the median of ``--renders`` renders and
``--loads`` loads, the trees taking turns to go first.
The old tree is any checkout of the project, e.g. ``git worktree add /tmp/report-old a03e27a``.

With ``--concepts N`` the runs read a synthetic memory of N concepts
(:func:`arcmemo.memory.synthetic.synthetic_memory`), which the report's memory section
shows.

Usage: ``python experiments/bench_report.py [--sizes 400 4000] [--concepts 30000]
[--old /tmp/report-old] [--old-sizes 400] [--renders 3] [--loads 3] [--no-browser]
[--json FILE]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# Run in a fresh interpreter whose ``arcmemo`` is the tree under test (PYTHONPATH first).
RENDER = """
import json, resource, sys, time
from pathlib import Path
import arcmemo
from arcmemo.analysis.report import write_report
start = time.perf_counter()
write_report(Path(sys.argv[1]), Path(sys.argv[2]))
seconds = time.perf_counter() - start
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"render_s": seconds, "peak_mb": peak_kb / 1024, "module": arcmemo.__file__}))
"""


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def render(tree: Path, run: Path, out: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", RENDER, str(run), str(out)],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"rendering with {tree} failed:\n{done.stderr[-2000:]}")
    measured: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not measured.pop("module").startswith(str(tree)):
        raise SystemExit(f"{tree}: rendered with another tree's code")
    measured["page_mb"] = out.stat().st_size / 1e6
    return measured


def browser_load(chromium: ModuleType, page: Path, profile: Path) -> float:
    """Seconds from navigation to the load event and first layout of ``page``."""
    chromium.TIMEOUT_S = 900.0  # the old report takes minutes
    browser = chromium.Browser(chromium.find_chromium(), profile)
    try:
        start = time.perf_counter()
        browser.open(page.as_uri())
        browser.evaluate("document.body.getBoundingClientRect().height")
        return time.perf_counter() - start
    finally:
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[400, 4000])
    parser.add_argument("--old", type=Path, default=None, help="checkout of the old code")
    parser.add_argument(
        "--old-sizes", type=int, nargs="*", default=None, help="sizes to run OLD at (all)"
    )
    parser.add_argument("--renders", type=int, default=3, help="renders per tree (median)")
    parser.add_argument("--loads", type=int, default=3, help="browser loads per page (median)")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--concepts", type=int, default=0, help="concepts of the run's memory")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    support = ROOT / "tests" / "support"
    synthetic = _module("arcmemo_bench_synthetic", support / "synthetic_runs.py")
    chromium = _module("arcmemo_bench_chromium", support / "chromium.py")
    use_browser = not args.no_browser and chromium.find_chromium() is not None
    trees = [("new", ROOT)] + ([("old", args.old.resolve())] if args.old else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-report-") as scratch:
        base = Path(scratch)
        memory = None
        if args.concepts:
            from arcmemo.memory.synthetic import synthetic_memory

            memory = base / "memory.json"
            synthetic_memory(args.concepts).save(memory)
        for size in args.sizes:
            run = synthetic.write_run(base / f"n{size}", size, memory=memory)
            here = [
                (label, tree)
                for label, tree in trees
                if label == "new" or args.old_sizes is None or size in args.old_sizes
            ]
            renders: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in here}
            loads: dict[str, list[float]] = {label: [] for label, _ in here}
            # Side by side: the trees take turns going first, so a change in the machine's
            # load falls on both.
            for repeat in range(args.renders):
                for label, tree in here if repeat % 2 == 0 else here[::-1]:
                    page = base / f"n{size}-{label}.html"
                    renders[label].append(render(tree, run, page))
                    print(json.dumps({"tasks": size, "code": label, **renders[label][-1]}),
                          file=sys.stderr, flush=True)  # fmt: skip
            for repeat in range(args.loads if use_browser else 0):
                for label, _ in here if repeat % 2 == 0 else here[::-1]:
                    page = base / f"n{size}-{label}.html"
                    profile = base / f"profile-{label}-{size}-{repeat}"
                    loads[label].append(browser_load(chromium, page, profile))
            for label, _ in here:
                (base / f"n{size}-{label}.html").unlink()
                row: dict[str, Any] = {"tasks": size, "code": label}
                for key in ("render_s", "peak_mb", "page_mb"):
                    row[key] = statistics.median(r[key] for r in renders[label])
                if loads[label]:
                    row["load_s"] = statistics.median(loads[label])
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    print("| tasks | code | page (MB) | render (s) | peak memory (MB) | browser load (s) |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        load = f"{row['load_s']:.2f}" if "load_s" in row else "–"
        print(
            f"| {row['tasks']:,} | {row['code']} | {row['page_mb']:.1f} | {row['render_s']:.2f} "
            f"| {row['peak_mb']:.0f} | {load} |"
        )
    for size in args.sizes:
        new = next((r for r in rows if r["tasks"] == size and r["code"] == "new"), None)
        old = next((r for r in rows if r["tasks"] == size and r["code"] == "old"), None)
        if new and old:
            ratios = [f"page {old['page_mb'] / new['page_mb']:.2f}x smaller"]
            ratios.append(f"render {old['render_s'] / new['render_s']:.1f}x faster")
            ratios.append(f"memory {old['peak_mb'] / new['peak_mb']:.2f}x less")
            if "load_s" in new and "load_s" in old:
                ratios.append(f"load {old['load_s'] / new['load_s']:.1f}x faster")
            print(f"{size:,} tasks, new vs old: " + ", ".join(ratios))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
