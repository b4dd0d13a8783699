"""Leave-one-out retrieval over the BARC seeds: behaviour vs TF-IDF embedding, side by side.

For each seed task T, the memory holds the library of the other seeds; the question is
where each method ranks the concepts whose functions T's own program actually uses (its
helpers that the build matched to a library function, ``BuildReport.names``). Ranked:

* ``behaviour``: :func:`arcmemo.selection.behaviour.rank_by_behaviour` (every one-grid
  function run on T's train inputs in the sandbox, concepts by closeness to the outputs);
* ``embedding``: today's ``--select embedding`` (TF-IDF cosine between T's problem text,
  ``ArcBenchmark.describe``, and each concept's text, ``selection.embedding.entry_texts``).

* ``usage`` (a reference, not a selector): concepts by how many other seeds their code came
  from, the prior a method must beat when a few helpers serve most seeds.

A task counts when at least one of its functions is in its leave-one-out library; its
rank is that of the best-scored concept owning one of them, ties counted against it (the
number of concepts scored at least as high); a score of 0 (a behaviour nowhere near the
outputs, a function that takes more than a grid, no shared word) is a miss at every k.

The library is built once from all seeds (:func:`arcmemo.library.build_library`, as
``arcmemo library build`` does) and T's leave-one-out memory is derived from it: T leaves
every function's ``sources``, the functions only T contributed go (and those calling them,
the leakage guard of ``available_functions``), and so do the concepts only T wrote
(``hide_own_concepts``). This equals building from the other seeds up to the build's
dedupe choices (a function two seeds shared keeps T's copy of the code and T's recorded
tests), and costs one build instead of one per seed.

Usage: ``python experiments/library_loo.py --seeds DIR --work DIR [--limit N]
[--budget-s 20]`` where DIR holds ``arcmemo seeds import-barc`` output (``<task id>.py``);
``--work`` keeps the built memory and its report (reused when present) and writes
``loo.jsonl`` (one line per task) and ``loo-summary.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.library import BuildReport, available_functions, build_library
from arcmemo.memory.edits import TrackedList
from arcmemo.memory.ontology import Memory
from arcmemo.models.embedding import TfidfEmbedder
from arcmemo.sandbox import SANDBOXES, Sandbox
from arcmemo.selection.behaviour import rank_by_behaviour
from arcmemo.selection.embedding import entry_texts
from arcmemo.solve_prompt import hide_own_concepts

KS = (1, 5, 20)
METHODS = ("behaviour", "embedding", "usage")


def built(seeds: Path, work: Path, benchmark: ArcBenchmark, sandbox: Sandbox) -> BuildReport:
    """The library of every seed in ``work/library.json`` (built once) and its report."""
    memory_path, report_path = work / "library.json", work / "library-build.json"
    if memory_path.exists() and report_path.exists():
        return BuildReport.model_validate_json(report_path.read_text())
    programs = {path.stem: path.read_text() for path in sorted(seeds.glob("*.py"))}
    tasks = benchmark.find_tasks(list(programs))
    pairs = {task.id: benchmark.examples(task) for task in tasks}
    memory = Memory(domain="arc")
    started = time.perf_counter()
    report = build_library(
        programs, pairs, memory, sandbox, entry_points=type(benchmark).entry_points
    )
    print(f"built {report.functions} functions in {time.perf_counter() - started:.0f} s")
    memory.save(memory_path)
    report_path.write_text(report.model_dump_json(indent=2))
    return report


def leave_out(memory: Memory, task_id: str) -> Memory:
    """``memory`` as if built without ``task_id``'s program (see the module docstring)."""
    loo = memory.model_copy(deep=True)
    for concept in loo.concepts:
        for function in concept.functions:
            others = [s for s in function.sources if s != task_id]
            if others:
                function.sources = TrackedList(others)
    allowed = set(available_functions(loo, [task_id]))
    for concept in loo.concepts:
        concept.functions = TrackedList(f for f in concept.functions if f.name in allowed)
    return hide_own_concepts(loo, task_id)


def rank_of(scores: dict[str, float], wanted: set[str]) -> int | None:
    """The rank of the best-scored of ``wanted``, ties counted against it (the number of
    concepts scored at least as high); None when it scores 0 or is not scored."""
    best = max((scores.get(cid, 0.0) for cid in wanted), default=0.0)
    if best <= 0:
        return None
    return sum(1 for score in scores.values() if score >= best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--budget-s", type=float, default=20.0)
    parser.add_argument("--sandbox", default="bwrap")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    benchmark = ArcBenchmark()
    sandbox = SANDBOXES.create(SANDBOXES.spec(args.sandbox, {"max_workers": 2}))
    embedder = TfidfEmbedder()
    rows: list[dict[str, Any]] = []
    try:
        report = built(args.seeds, args.work, benchmark, sandbox)
        memory = Memory.load(args.work / "library.json")
        task_ids = sorted(report.names)[: args.limit]
        tasks = {t.id: t for t in benchmark.find_tasks(task_ids)}
        for task_id in task_ids:
            loo = leave_out(memory, task_id)
            owner = {f.name: c.id for c in loo.concepts for f in c.functions}
            targets = {owner[n] for n in report.names[task_id].values() if n in owner}
            if not targets:
                continue
            task = tasks[task_id]
            ranking = rank_by_behaviour(
                loo,
                benchmark.examples(task),
                sandbox,
                task_id=task_id,
                budget_s=args.budget_s,
                call_timeout_s=1.0,
                chunk=500,
            )
            texts = entry_texts(loo)
            by_name = {c.name: c.id for c in loo.concepts}
            nearest = asyncio.run(embedder.nearest(benchmark.describe(task), texts, len(texts)))
            # The prior without the task: how many other seeds a concept's code came from.
            usage = {
                c.id: float(len({s for f in c.functions for s in f.sources})) for c in loo.concepts
            }
            row = {
                "task": task_id,
                "targets": sorted(targets),
                "concepts": len(loo.concepts),
                "grid_functions": ranking.candidates,
                "behaviour_rank": rank_of(dict(ranking.scores), targets),
                "embedding_rank": rank_of({by_name.get(n, n): v for n, v in nearest}, targets),
                "usage_rank": rank_of(usage, targets),
                "behaviour_seconds": round(ranking.seconds, 2),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        sandbox.close()
        benchmark.close()
    summary: dict[str, Any] = {"tasks": len(rows)}
    for method in METHODS:
        ranks = [r[f"{method}_rank"] for r in rows]
        summary[method] = {
            f"top{k}": round(sum(1 for r in ranks if r is not None and r <= k) / len(rows), 3)
            if rows
            else None
            for k in KS
        }
        summary[method]["ranked"] = sum(r is not None for r in ranks)
    seconds = [r["behaviour_seconds"] for r in rows]
    summary["behaviour_seconds_mean"] = round(sum(seconds) / len(seconds), 2) if seconds else None
    (args.work / "loo.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (args.work / "loo-summary.json").write_text(json.dumps(summary, indent=2))
    print(f"\n{'method':<10} " + " ".join(f"{'top-' + str(k):>7}" for k in KS) + "  ranked")
    for method in METHODS:
        line = summary[method]
        print(
            f"{method:<10} "
            + " ".join(f"{line[f'top{k}']:>7.1%}" for k in KS)
            + f"  {line['ranked']}/{len(rows)}"
        )


if __name__ == "__main__":
    main()
