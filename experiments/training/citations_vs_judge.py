"""Are a solver's citations trustworthy? For a finished run with ``--cite``, compare the
attribution its citations give with the attribution judge's.

Per task and shown concept, two verdicts (helpful / unused / harmful, the rules of
``arcmemo.memory.attribution``): one from the solver's own list (``arcmemo memory attribute
--by citations``), one from the judge model's opinion of the same solution (``--by judge``,
one call per task; answers come from the response cache when it holds them). The script
prints how often they agree, a table of verdict pairs, and the disagreements. Citations that
named an entry the prompt did not show are counted apart (they are never credited).

    python experiments/training/citations_vs_judge.py RUN --judge-model PROVIDER:MODEL
        [--memory FILE] [--json OUT]

RUN is the run directory; FILE the memory whose concepts the run showed (default: the
run's ``--memory``). Nothing is written but ``--json``'s file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.core.records import TaskResult
from arcmemo.memory.attribution import VERDICTS, attribute_task
from arcmemo.memory.citations import attribute_by_citations
from arcmemo.memory.judge import judge_usage
from arcmemo.memory.schema import Memory
from arcmemo.models.client import open_model
from arcmemo.models.retry import ModelCallError
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.sandbox.text import clean_text
from arcmemo.signals.base import WRITE_SIGNALS

SHOWN_DISAGREEMENTS = 20


async def judge_all(
    spec: str, memory: Memory, results: list[TaskResult], signal: Any, domain: str
) -> dict[str, dict[str, bool] | None]:
    """The judge's opinions per task (None: its call failed or its answer was unusable)."""
    judge = open_model(spec)

    async def one(result: TaskResult) -> dict[str, bool] | None:
        try:
            confirmed = signal.confirmed_step(result)
            return await judge_usage(judge, memory, result, confirmed, domain=domain)
        except ModelCallError:
            return None

    try:
        opinions = await asyncio.gather(*(one(r) for r in results))
    finally:
        await judge.aclose()
    return {r.task_id: o for r, o in zip(results, opinions, strict=True)}


def compare(run: Path, judge_model: str, memory_path: Path | None) -> dict[str, Any]:
    """The comparison as a JSON-ready record."""
    rundir = RunDirectory(run)
    config = rundir.require_config()
    if not config.cite:
        raise SystemExit(f"{run}: the run did not ask its solver to cite (--cite)")
    path = memory_path or config.memory
    if path is None:
        raise SystemExit(f"{run}: the run read no memory; name one with --memory")
    memory = Memory.load(path)
    if config.write_signal is None:
        raise SystemExit(f"{run}: config.json names no write signal")
    signal = WRITE_SIGNALS.create(config.write_signal)
    benchmark = BENCHMARKS.get(config.benchmark.name).factory
    results = [r for r in rundir.ordered_results() if r.error is None]
    opinions = asyncio.run(
        judge_all(judge_model, memory, results, signal, benchmark.domain)  # type: ignore[attr-defined]
    )
    pairs: Counter[tuple[str, str]] = Counter()
    disagreements: list[dict[str, str]] = []
    judge_failed = 0
    for result in results:
        judged = opinions[result.task_id]
        if judged is None:
            judge_failed += 1
            continue
        confirmed = signal.confirmed_step(result)
        by_citation = attribute_by_citations(memory, result, confirmed)
        ignore = benchmark.entry_points  # type: ignore[attr-defined]
        by_judge = attribute_task(memory, result, confirmed, judged, ignore=ignore)
        judge_verdicts = {v.concept_id: v.verdict for v in by_judge.verdicts}
        for verdict in by_citation.verdicts:
            other = judge_verdicts.get(verdict.concept_id)
            if other is None:
                continue
            pairs[(verdict.verdict, other)] += 1
            if verdict.verdict != other:
                disagreements.append(
                    {
                        "task": result.task_id,
                        "concept": verdict.name,
                        "citations": verdict.verdict,
                        "judge": other,
                    }
                )
    unshown = sum(len(s.cited_unshown) for r in results for a in r.attempts for s in a.steps)
    compared = sum(pairs.values())
    agree = sum(n for (a, b), n in pairs.items() if a == b)
    return {
        "run": str(run),
        "judge_model": judge_model,
        "tasks": len(results),
        "judge_failed": judge_failed,
        "compared": compared,
        "agree": agree,
        "disagree": compared - agree,
        "pairs": {f"{a}/{b}": n for (a, b), n in sorted(pairs.items())},
        "cited_unshown": unshown,
        "disagreements": disagreements,
    }


def render(record: dict[str, Any]) -> str:
    """The comparison for a terminal."""
    compared = record["compared"]
    share = f" ({record['agree'] / compared:.0%})" if compared else ""
    lines = [
        f"{record['tasks']} tasks ({record['judge_failed']} without a usable judge answer); "
        f"{compared} (task, concept) verdicts compared: {record['agree']} agree{share}, "
        f"{record['disagree']} disagree",
        f"citations of entries not shown (never credited): {record['cited_unshown']}",
        "",
        "citations \\ judge " + "".join(f"{v:>9}" for v in VERDICTS),
    ]
    for mine in VERDICTS:
        counts = "".join(f"{record['pairs'].get(f'{mine}/{v}', 0):>9}" for v in VERDICTS)
        lines.append(f"{mine:<17} {counts}")
    shown = record["disagreements"][:SHOWN_DISAGREEMENTS]
    if shown:
        lines += ["", "disagreements (task: concept: citations vs judge):"]
        lines += [
            clean_text(f"  {d['task']}: {d['concept']}: {d['citations']} vs {d['judge']}")
            for d in shown
        ]
        if len(record["disagreements"]) > len(shown):
            lines.append(f"  ... and {len(record['disagreements']) - len(shown)} more")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--judge-model", required=True, metavar="PROVIDER:MODEL")
    parser.add_argument("--memory", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="Also write the record here.")
    args = parser.parse_args(argv)
    record = compare(args.run, args.judge_model, args.memory)
    print(render(record))
    if args.json is not None:
        args.json.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
