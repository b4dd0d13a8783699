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

Exact: T's library is built from the other seeds' programs alone
(:func:`arcmemo.library.build_from_traces`, as ``arcmemo library build`` builds). Every
seed is traced once (:func:`arcmemo.library.trace_programs`; a trace does not depend on
the other programs) and the folds share a :class:`arcmemo.library.CallCache`, so each
standalone call runs once over all folds. The functions T uses are named by one build from
all seeds (``BuildReport.names``: T's helpers and the other seeds' helpers with the same
code or behaviour); in T's fold they are the functions those other seeds' helpers became.

Usage: ``python experiments/library_loo.py --seeds DIR --work DIR [--limit N]
[--budget-s 20]`` where DIR holds ``arcmemo seeds import-barc`` output (``<task id>.py``);
``--work`` keeps the traces and the all-seeds build (reused when present) and writes
``loo.jsonl`` (one line per task) and ``loo-summary.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.library import BuildReport, CallCache, Trace, build_from_traces, trace_programs
from arcmemo.memory.schema import Memory
from arcmemo.models.embedding import TfidfEmbedder
from arcmemo.sandbox import SANDBOXES, Sandbox
from arcmemo.selection.behaviour import rank_by_behaviour
from arcmemo.selection.embedding import entry_texts

KS = (1, 5, 20)
METHODS = ("behaviour", "embedding", "usage")
TRACES = TypeAdapter(dict[str, Trace])


def traced(
    programs: dict[str, str], work: Path, benchmark: ArcBenchmark, sandbox: Sandbox
) -> dict[str, Trace]:
    """Every seed traced once on its task's examples, kept in ``work/traces.json``."""
    path = work / "traces.json"
    if path.exists():
        return TRACES.validate_json(path.read_bytes())
    tasks = benchmark.find_tasks(list(programs))
    pairs = {task.id: benchmark.examples(task) for task in tasks}
    started = time.perf_counter()
    traces = trace_programs(programs, pairs, sandbox, entry_points=type(benchmark).entry_points)
    print(f"traced {len(traces)} programs in {time.perf_counter() - started:.0f} s")
    path.write_bytes(TRACES.dump_json(traces))
    return traces


def build(
    programs: dict[str, str],
    traces: dict[str, Trace],
    sandbox: Sandbox,
    cache: CallCache,
    entry_points: frozenset[str],
) -> tuple[Memory, BuildReport]:
    """The library of ``programs`` alone, from their cached traces."""
    memory = Memory(domain="arc")
    report = build_from_traces(
        programs, traces, memory, sandbox, entry_points=entry_points, cache=cache
    )
    return memory, report


def used_in_fold(task_id: str, whole: BuildReport, fold: BuildReport) -> set[str]:
    """The functions of ``task_id``'s fold with the behaviour of a function its program
    uses: what the other seeds' helpers that shared a function with its helpers (in the
    build from all seeds) became in the fold."""
    wanted = set(whole.names.get(task_id, {}).values())
    return {
        fold.names[other][helper]
        for other, helpers in whole.names.items()
        if other != task_id
        for helper, name in helpers.items()
        if name in wanted and helper in fold.names.get(other, {})
    }


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
    cache = CallCache()
    entry_points = type(benchmark).entry_points
    try:
        programs = {path.stem: path.read_text() for path in sorted(args.seeds.glob("*.py"))}
        traces = traced(programs, args.work, benchmark, sandbox)
        started = time.perf_counter()
        _, whole = build(programs, traces, sandbox, cache, entry_points)
        print(
            f"built {whole.functions} functions from all seeds in "
            f"{time.perf_counter() - started:.0f} s"
        )
        task_ids = sorted(whole.names)[: args.limit]
        tasks = {t.id: t for t in benchmark.find_tasks(task_ids)}
        for task_id in task_ids:
            started = time.perf_counter()
            others = {task: source for task, source in programs.items() if task != task_id}
            loo, fold = build(others, traces, sandbox, cache, entry_points)
            build_seconds = time.perf_counter() - started
            owner = {f.name: c.id for c in loo.concepts for f in c.functions}
            targets = {owner[n] for n in used_in_fold(task_id, whole, fold) if n in owner}
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
                "functions": fold.functions,
                "build_seconds": round(build_seconds, 2),
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
    builds = [r["build_seconds"] for r in rows]
    summary["build_seconds_mean"] = round(sum(builds) / len(builds), 2) if builds else None
    summary["fold_functions"] = sorted({r["functions"] for r in rows})
    summary["standalone_calls"] = {"run": cache.misses, "from_cache": cache.hits}
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
