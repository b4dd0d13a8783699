"""Hindsight programs over the BARC seeds and deliberately broken variants of them.

Each of the verified seed programs (``arcmemo seeds import-barc BARC_DIR --out DIR``) gets
broken variants made here, by wrapping its ``transform``: ``flipped axis`` (the output
upside down) and ``off by one`` (the output's columns shifted one to the right, wrapping).
A variant that fails its task's train pairs yet returns a valid grid for every train and
test input defines a hindsight task (its own outputs); one whose outputs equal the right
ones (a symmetric output) is not a failure and is counted apart. The library is then built
from the seeds and the hindsight programs together, as ``library build --hindsight`` does
(ids ``hindsight:<task>/<variant>``), and the script prints: variants run, hindsight tasks,
library functions in all and those that come only from hindsight programs (marked
``hindsight``); then from the hindsight programs alone (as for tasks a run left unsolved);
and the check that none of those claims its original task (no function's or
concept's source is a plain task id, no solution is written).

    python experiments/hindsight_barc.py SEEDS_DIR [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.benchmarks.arc.data import load_split
from arcmemo.library import build_library
from arcmemo.library.hindsight import PREFIX, hindsight_id, mark_hindsight, valid_grid
from arcmemo.library.model_refactor import run_outputs
from arcmemo.library.modules import memory_functions
from arcmemo.memory.schema import Memory
from arcmemo.sandbox import SANDBOXES

VARIANTS = {
    "flipped axis": "np.flipud(out)",
    "off by one": "np.roll(out, 1, axis=1)",
}


def broken(source: str, expression: str) -> str:
    """``source`` with its transform's output passed through ``expression`` (of ``out``)."""
    return (
        f"{source.rstrip()}\n\n\n_seed_transform = transform\n\n\n"
        f"def transform(grid):\n    out = np.array(_seed_transform(grid))\n"
        f"    return {expression}\n"
    )


def measure(seeds_dir: Path) -> dict[str, Any]:
    seeds = {p.stem: p.read_text(encoding="utf-8") for p in sorted(seeds_dir.glob("*.py"))}
    tasks = {t.id: t for t in load_split("training", wanted=set(seeds))}
    programs = dict(seeds)
    pairs: dict[str, list[Any]] = {t: [(p.input, p.output) for p in tasks[t].train] for t in seeds}
    counts = {name: {"run": 0, "hindsight": 0, "still right": 0, "invalid": 0} for name in VARIANTS}
    began = time.perf_counter()
    with SANDBOXES.create("bwrap") as sandbox:
        for task_id in seeds:
            task = tasks[task_id]
            inputs = [p.input for p in task.train] + list(task.test_inputs)
            wanted = [p.output for p in task.train]
            for name, expression in VARIANTS.items():
                source = broken(seeds[task_id], expression)
                got = run_outputs(sandbox, source, inputs)
                counts[name]["run"] += 1
                outputs = [value for _, value in got]
                if not all(ok and valid_grid(value) for ok, value in got):
                    counts[name]["invalid"] += 1
                elif outputs[: len(wanted)] == wanted:
                    counts[name]["still right"] += 1
                else:
                    counts[name]["hindsight"] += 1
                    slug = name.replace(" ", "-")
                    key = hindsight_id(f"{task_id}/{slug}")
                    programs[key] = source
                    pairs[key] = list(zip(inputs, outputs, strict=True))
        memory = Memory(domain="arc")
        report = build_library(
            programs, pairs, memory, sandbox, entry_points=ArcBenchmark.entry_points
        )
        only_hindsight = mark_hindsight(memory)
        # As for tasks a run left unsolved: the hindsight programs without their seeds.
        alone = Memory(domain="arc")
        hindsight_programs = {t: s for t, s in programs.items() if t.startswith(PREFIX)}
        alone_report = build_library(
            hindsight_programs, pairs, alone, sandbox, entry_points=ArcBenchmark.entry_points
        )
        alone_marked = mark_hindsight(alone)
    alone_functions = memory_functions(alone)
    functions = memory_functions(memory)
    hindsight_functions = [f for f in functions.values() if f.only_hindsight]
    plain = set(seeds)
    claims = [
        f"{f.name}: {s}" for f in hindsight_functions for s in f.sources if not s.startswith(PREFIX)
    ]
    claims += [f"{f.name}: {s}" for f in alone_functions.values() for s in f.sources if s in plain]
    for concept in [*memory.concepts, *alone.concepts]:
        if concept.functions and all(f.only_hindsight for f in concept.functions):
            claims += [f"{concept.name}: {s}" for s in concept.provenance.sources if s in plain]
    return {
        "seeds": len(seeds),
        "variants": counts,
        "hindsight_tasks": sum(c["hindsight"] for c in counts.values()),
        "programs_built": report.programs,
        "functions": report.functions,
        "functions_only_hindsight": only_hindsight,
        "functions_with_hindsight_sources": sum(bool(f.hindsight) for f in functions.values()),
        "hindsight_tests_passed": sum(len(f.tests) for f in hindsight_functions),
        "alone_functions": alone_report.functions,
        "alone_functions_marked": alone_marked,
        "alone_tests_passed": f"{alone_report.tests_passed}/{alone_report.tests}",
        "claims_of_the_original_task": claims,
        "solutions_written": len(memory.solutions) + len(alone.solutions),
        "seconds": round(time.perf_counter() - began, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seeds", type=Path, help="Folder of <task id>.py seed programs.")
    parser.add_argument("--json", type=Path, help="Also write the numbers here.")
    args = parser.parse_args()
    result = measure(args.seeds)
    print(f"seed programs             {result['seeds']}")
    for name, count in result["variants"].items():
        print(
            f"variant {name:<14}    {count['run']} run: {count['hindsight']} hindsight tasks, "
            f"{count['still right']} still right, {count['invalid']} without valid grids"
        )
    print(f"hindsight tasks           {result['hindsight_tasks']}")
    print(f"programs built            {result['programs_built']}")
    print(f"library functions         {result['functions']}")
    print(f"  only from hindsight     {result['functions_only_hindsight']}")
    print(f"  with a hindsight source {result['functions_with_hindsight_sources']}")
    print(f"hindsight programs alone  {result['alone_functions']} functions")
    print(f"  marked hindsight        {result['alone_functions_marked']}")
    print(f"  recorded tests passing  {result['alone_tests_passed']}")
    print(f"claims of the original    {len(result['claims_of_the_original_task'])}")
    print(f"solutions written         {result['solutions_written']}")
    print(f"seconds                   {result['seconds']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
