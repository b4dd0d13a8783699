"""The executable concept library built from verified programs, measured.

Builds a library from a folder of ``<task id>.py`` verified programs (``arcmemo seeds
import-barc`` writes the 160 BARC seeds so) into a fresh memory, re-runs every kept
function's recorded tests from the saved memory, refactors the programs to import the
library and re-verifies them on their tasks (train and test pairs), and prints one table:
helpers, candidates, functions with a recorded test, tests passing, functions used by three
or more programs, refactored programs passing, and the tokens of all programs before and
after (arcmemo's token estimate; the library functions they import counted once).

Usage: ``python experiments/library_build.py PROGRAMS_DIR [--data TASKS] [--out DIR]
[--json FILE]`` (tasks are found by id in ARC-AGI-1 unless ``--data`` names them).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.benchmarks.arc.data import load_path, load_split
from arcmemo.library import build_library, run_recorded_tests
from arcmemo.library.refactor import refactor_programs
from arcmemo.library.stats import REUSE_THRESHOLD, library_stats
from arcmemo.memory.schema import Memory
from arcmemo.memory.store import load_memory, save_memory
from arcmemo.sandbox import SANDBOXES


def measure(programs_dir: Path, data: Path | None, out: Path) -> dict[str, Any]:
    programs = {p.stem: p.read_text(encoding="utf-8") for p in sorted(programs_dir.glob("*.py"))}
    tasks = load_path(data) if data else load_split("training", wanted=set(programs))
    train = {t.id: [(p.input, p.output) for p in t.train] for t in tasks}
    every = {
        t.id: train[t.id] + list(zip(t.test_inputs, t.test_outputs or [], strict=False))
        for t in tasks
    }
    memory = Memory(domain="arc")
    path = out / "memory.json"
    entry_points = ArcBenchmark.entry_points
    with SANDBOXES.create("bwrap") as sandbox:
        began = time.perf_counter()
        report = build_library(programs, train, memory, sandbox, entry_points=entry_points)
        build_s = time.perf_counter() - began
        save_memory(memory, path)
        saved = load_memory(path)
        results = run_recorded_tests(saved, sandbox)
        began = time.perf_counter()
        refactor, kept = refactor_programs(
            programs, every, saved, sandbox, entry_points=entry_points
        )
        refactor_s = time.perf_counter() - began
    (out / "refactored").mkdir(exist_ok=True)
    for task_id, text in kept.items():
        (out / "refactored" / f"{task_id}.py").write_text(text, encoding="utf-8")
    stats = library_stats(saved)
    return {
        "programs": report.programs,
        "programs_with_helpers": report.programs - report.without_helpers,
        "helpers": report.helpers,
        "candidates": report.candidates,
        "candidates_recorded": report.recorded,
        "merged_by_behaviour": report.merged_by_behaviour,
        "dropped": len(report.dropped),
        "functions": report.functions,
        "functions_tested": report.functions_tested,
        "tests": sum(r.tests for r in results),
        "tests_passed": sum(r.passed for r in results),
        "reused": stats.reused,
        "refactored": sum(1 for p in refactor.programs if p.imports and p.passed),
        "passing": refactor.passing,
        "tokens_before": refactor.tokens_before,
        "tokens_after": refactor.tokens_after,
        "library_tokens": refactor.library_tokens,
        "build_s": round(build_s, 1),
        "refactor_s": round(refactor_s, 1),
        "top_reused": stats.top_reused,
    }


def table(m: dict[str, Any]) -> str:
    after = m["tokens_after"] + m["library_tokens"]
    rows = [
        ("programs (with helpers)", f"{m['programs']} ({m['programs_with_helpers']})"),
        ("helper defs traced", m["helpers"]),
        ("candidates after the AST dedupe", m["candidates"]),
        ("candidates with a recorded call", m["candidates_recorded"]),
        ("merged by behaviour", m["merged_by_behaviour"]),
        ("dropped (tests not reproduced, or a dropped callee)", m["dropped"]),
        ("functions kept", m["functions"]),
        ("functions with >= 1 recorded test", m["functions_tested"]),
        ("recorded tests passing standalone", f"{m['tests_passed']}/{m['tests']}"),
        (f"functions used by >= {REUSE_THRESHOLD} programs", m["reused"]),
        ("programs refactored to import the library", m["refactored"]),
        ("programs passing after the refactor", f"{m['passing']}/{m['programs']}"),
        ("tokens of all programs before", m["tokens_before"]),
        (
            "tokens after (+ the imported functions once)",
            f"{m['tokens_after']} (+{m['library_tokens']} = {after})",
        ),
        (
            "compression (before / after with the library)",
            f"{m['tokens_before'] / max(after, 1):.2f}x",
        ),
        ("build / refactor time", f"{m['build_s']} s / {m['refactor_s']} s"),
    ]
    lines = ["| measure | value |", "| --- | --- |"]
    lines += [f"| {label} | {value} |" for label, value in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("programs", type=Path, help="folder of <task id>.py programs")
    parser.add_argument("--data", type=Path, default=None, help="task file or folder")
    parser.add_argument("--out", type=Path, default=None, help="where the memory goes")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        measured = measure(args.programs, args.data, out)
    print(table(measured))
    if args.json:
        args.json.write_text(json.dumps(measured, indent=2) + "\n", encoding="utf-8")
    return 0 if measured["tests_passed"] == measured["tests"] else 1


if __name__ == "__main__":
    sys.exit(main())
