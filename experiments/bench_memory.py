"""Memory at scale: load, add, save (and save again after an edit), render each view,
stats, diff, resolve, a run of 16 and 48 tasks and an online run of 16, timed on synthetic
memories of growing size, for two checkouts side by side. ``stats``, ``show full`` and the
runs are whole ``arcmemo`` commands (which pause the collector while they load and render);
the other rows are Python API calls (which leave it alone unless the caller enters
``arcmemo.collector_pauses()``).

    python experiments/bench_memory.py --old /tmp/mem-old            # 300, 3,000, 30,000
    python experiments/bench_memory.py --sizes 300,3000 --timeout 60 --jobs 4

The memories come from :func:`arcmemo.memory.synthetic.synthetic_memory` of this checkout
and are written to JSON once, so both checkouts read the same files. Every measurement
runs in its own process (``PYTHONPATH`` = the checkout), so a slow one can be stopped at
``--timeout`` and is reported as "> N s". Renders are timed cold: each repetition renders
a fresh copy of the loaded memory (nothing cached from an earlier render), freed only
after the timing (freeing is not the render's cost, and a checkout that keeps the copy
alive would skip it). A process's time is the median of its ``--repeat`` runs (one run
when the first takes over 2 s); each measurement is made in ``--rounds`` processes, the
two checkouts taking turns (old first in every other round), and the table gives the best
of them with the worst in brackets: on a shared machine the same code moves by a quarter
from one process to the next, and the best is what the code costs without that
interference. The selection view
is rendered under ``--memory-budget`` (the issue's 17,000), the solve view with eight
selected concepts under the selectors' default solve budget where the checkout has one.
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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OPERATIONS = (
    "load", "add", "save", "save again", "render full", "render compressed",
    "render selection", "render solve", "task view", "stats", "show full", "diff", "resolve",
    "run 16", "run 48", "online 16",
)  # fmt: skip
SELECTED = 8
# Names a selector might answer: exact, misspelled, and unknown ones.
_ANSWER_SLOTS = 10


def _median_time(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
        if times[0] > 2.0:
            break
    return statistics.median(times), result


def _answer(memory: Any) -> list[str]:
    names = [c.name for c in memory.concepts[:: max(len(memory.concepts) // 4, 1)]][:4]
    typos = [n[:-2] + n[-1] + n[-2] for n in names[:3]]  # last two letters swapped
    return (names + typos + ["teleport every object", "lesson 99", "paint the sky"])[:_ANSWER_SLOTS]


def worker(operation: str, path: Path, other: Path, repeat: int) -> dict[str, Any]:
    """One measurement in this process (the checkout under test is on ``sys.path``)."""
    from arcmemo.core.tokens import estimate_tokens
    from arcmemo.memory.schema import Concept, Memory, Parameter

    if operation == "load":
        seconds, _ = _median_time(lambda: Memory.load(path), repeat)
        return {"seconds": seconds}
    if operation.startswith(("run ", "online ")):
        kind, tasks = operation.split()
        return {"seconds": _run_seconds(int(tasks), path, repeat, online=kind == "online")}
    memory = Memory.load(path)
    selected = [c.name for c in memory.concepts[:: max(len(memory.concepts) // SELECTED, 1)]]
    if operation == "add":
        counter = iter(range(1_000_000))

        def add() -> None:
            number = next(counter)
            memory.add(
                Concept(
                    name=f"bench added routine {number}",
                    kind="routine",
                    routine_subtype="intermediate",
                    parameters=[Parameter(name="rule", type="selection criteria")],
                ),
                task_id=f"bench-{number}",
            )

        seconds, _ = _median_time(add, repeat)
        return {"seconds": seconds}
    if operation == "save":
        with tempfile.TemporaryDirectory() as folder:
            seconds, _ = _median_time(lambda: memory.save(Path(folder) / "m.json"), repeat)
        return {"seconds": seconds}
    if operation == "save again":  # as an online run saves after each batch: a few edits
        edited = iter(memory.concepts)

        def save_edited(target: Path) -> None:
            next(edited).cues.append("a cue written by the batch")
            memory.save(target)

        with tempfile.TemporaryDirectory() as folder:
            memory.save(Path(folder) / "m.json")
            seconds, _ = _median_time(lambda: save_edited(Path(folder) / "m.json"), repeat)
        return {"seconds": seconds}
    if operation.startswith("render "):
        view = operation.removeprefix("render ")
        options: dict[str, Any] = {}
        if view == "selection":
            options["budget_tokens"] = int(os.environ.get("BENCH_MEMORY_BUDGET", "17000"))
        if view == "solve":
            from arcmemo.memory import render

            options["selected"] = selected
            options["budget_tokens"] = getattr(render, "SOLVE_BUDGET_TOKENS", None)
        copies = [memory.model_copy(deep=True) for _ in range(repeat)]
        # A rendered copy is freed after the timing, not inside it: freeing 30,000 copied
        # concepts costs a third of a render, and a checkout whose caches kept the copy's
        # concept list alive would not pay it there at all.
        rendered: list[Any] = []

        def render_copy() -> Any:
            rendered.append(copies.pop())
            return rendered[-1].render(view, **options)

        seconds, text = _median_time(render_copy, repeat)
        return {"seconds": seconds, "tokens": estimate_tokens(text)}
    if operation == "task view":
        return {"seconds": _task_view_seconds(memory, selected, repeat)}
    if operation in ("stats", "show full"):
        # The whole command, from the root group (which owns the process: it may pause the
        # collector, arcmemo.core.bulk), as a user runs it.
        from click.testing import CliRunner

        from arcmemo.cli.main import cli

        args = ["memory", "stats", str(path)]
        if operation == "show full":
            args = ["memory", "show", str(path), "--view", "full"]

        def command() -> None:
            result = CliRunner().invoke(cli, args)
            if result.exit_code != 0:
                raise RuntimeError(result.output)

        seconds, _ = _median_time(command, repeat)
        return {"seconds": seconds}
    if operation == "diff":
        from arcmemo.memory.diff import memory_diff

        changed = Memory.load(other)
        seconds, lines = _median_time(lambda: memory_diff(memory, changed), repeat)
        return {"seconds": seconds, "lines": len(lines)}
    if operation == "resolve":
        from arcmemo.selection.llm import resolve_names

        answer = _answer(memory)
        seconds, (resolved, unknown, _) = _median_time(
            lambda: resolve_names(answer, memory), repeat
        )
        return {"seconds": seconds, "resolved": len(resolved), "unknown": len(unknown)}
    raise SystemExit(f"unknown operation {operation!r}")


# The scripted model of the run rows: a selection answer naming six concepts of the view
# it was shown (and one misspelling, for fuzzy resolution), then a wrong program.
SELECTING_MODEL = """import re

WRONG = "```python\\ndef transform(grid):\\n    return grid[::-1]\\n```\\n"


def respond(messages):
    text = messages[-1].content
    if "### Answer format" in text:
        names = re.findall(r"^- concept: (.+)$", text, flags=re.M)[:6]
        names.append(names[0][:-2] + names[0][-1] + names[0][-2])
        return "```yaml\\n" + "".join(f"- {n}\\n" for n in names) + "```\\n"
    return WRONG
"""


def _run_seconds(tasks: int, path: Path, repeat: int, *, online: bool = False) -> float:
    """Median wall time of ``arcmemo run`` in this process: the first ``tasks`` evaluation
    tasks, the LLM selector under the memory budget, one attempt, no retries, no cache;
    ``online``: with ``--update online`` in batches of 4 (a snapshot and a save of the
    memory after each, selection statistics and attribution; the scripted programs are
    wrong, so nothing is abstracted)."""
    from arcmemo.cli.main import cli

    times = []
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "selecting.py"
        script.write_text(SELECTING_MODEL, encoding="utf-8")
        os.environ["ARCMEMO_CACHE_DIR"] = str(Path(folder) / "cache")
        for number in range(repeat):
            args = ["run", "arc-agi-1", "--split", "evaluation", "--limit", str(tasks)]
            args += ["--memory", str(path), "--select", "llm", "--attempts", "1"]
            args += ["--memory-budget", os.environ.get("BENCH_MEMORY_BUDGET", "17000")]
            args += ["--feedback-rounds", "0", "--model", f"scripted:{script}", "--no-cache"]
            args += ["--out", str(Path(folder) / f"run-{number}")]
            if online:
                args += ["--update", "online", "--update-every", "4"]
                args += ["--memory-out", str(Path(folder) / f"memory-{number}.json")]
            start = time.perf_counter()
            cli.main(args, standalone_mode=False)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def _task_view_seconds(memory: Any, selected: list[str], repeat: int) -> float:
    """Median time of what a task that owns concepts adds to its first prompt: its view
    without them (the leakage guard) and that view's selection and solve renders, after
    the memory's own were rendered (as in a run)."""
    from arcmemo.memory.evidence import active
    from arcmemo.run.solve_prompt import hide_own_concepts

    budget = int(os.environ.get("BENCH_MEMORY_BUDGET", "17000"))
    owners = memory.concepts[:: max(len(memory.concepts) // 10, 1)][:10]
    for number, concept in enumerate(owners):
        concept.provenance.sources = [f"bench-task-{number}"]
    memory.render("selection", budget_tokens=budget)
    tasks = iter(range(len(owners)))

    def one_task() -> None:
        view = hide_own_concepts(active(memory), f"bench-task-{next(tasks)}")
        view.render("selection", budget_tokens=budget)
        view.render("solve", selected=selected, budget_tokens=8000)

    return _median_time(one_task, min(repeat, len(owners)))[0]


def _changed(memory: Any) -> Any:
    """A later version for ``diff``: 1% of concepts extended, 10 added, 5 deleted."""
    from arcmemo.memory.schema import Concept

    later = memory.model_copy(deep=True)
    for concept in later.concepts[::100]:
        concept.cues = [*concept.cues, "a cue learned later"]
    for concept in later.concepts[-5:]:
        later.delete(concept.name)
    for number in range(10):
        later.add(Concept(name=f"later structure {number}", kind="structure"))
    return later


def _measure(tree: Path, operation: str, files: tuple[Path, Path], args: Any) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", operation, "--file", str(files[0])]
    command += ["--other", str(files[1]), "--repeat", str(args.repeat)]
    env = {**os.environ, "PYTHONPATH": str(tree), "BENCH_MEMORY_BUDGET": str(args.memory_budget)}
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=args.timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"timeout": args.timeout}
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _seconds(result: dict[str, Any]) -> str:
    if not result:
        return ""
    if "timeout" in result:
        return f"> {result['timeout']:g} s"
    if "error" in result:
        return "error"
    text = _time(result["seconds"])
    return f"{text} ({_time(result['worst'])})" if "worst" in result else text


def _time(value: float) -> str:
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def _ratio(old: dict[str, Any], new: dict[str, Any]) -> str:
    if "seconds" not in new:
        return ""
    if "timeout" in old:
        return f"> {old['timeout'] / max(new['seconds'], 1e-9):,.0f}x"
    if "seconds" not in old:
        return ""
    return f"{old['seconds'] / max(new['seconds'], 1e-9):,.1f}x"


def _detail(result: dict[str, Any]) -> str:
    if "tokens" in result:
        return f"{result['tokens']:,}"
    if "unknown" in result:
        return f"{result['resolved']} resolved, {result['unknown']} unknown"
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300,3000,30000")
    parser.add_argument("--old", type=Path, help="Checkout to compare with (its root).")
    parser.add_argument("--timeout", type=float, default=120.0, help="Per measurement, s.")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="Processes per measurement.")
    parser.add_argument("--jobs", type=int, default=1, help="Measurements run at once.")
    parser.add_argument("--memory-budget", type=int, default=17000)
    parser.add_argument("--only", help="Comma-separated operations (default: all).")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--other", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.file, args.other, args.repeat)))
        return
    sys.path.insert(0, str(ROOT))
    from arcmemo.memory.synthetic import synthetic_memory

    operations = args.only.split(",") if args.only else list(OPERATIONS)
    trees = [("new", ROOT)] + ([("old", args.old.resolve())] if args.old else [])
    with tempfile.TemporaryDirectory() as folder:
        jobs = []
        for size in (int(s) for s in args.sizes.split(",")):
            memory = synthetic_memory(size)
            files = (Path(folder) / f"m{size}.json", Path(folder) / f"m{size}-later.json")
            memory.save(files[0])
            _changed(memory).save(files[1])
            jobs += [(size, *job, files) for job in _schedule(operations, trees, args.rounds)]
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda job: _measure(job[3], job[1], job[4], args), jobs))
    rounds: dict[tuple[int, str], dict[str, list[dict[str, Any]]]] = {}
    for (size, op, label, _, _), result in zip(jobs, results, strict=True):
        rounds.setdefault((size, op), {}).setdefault(label, []).append(result)
    table = {
        key: {label: _combined(got) for label, got in row.items()} for key, row in rounds.items()
    }
    print("| concepts | operation | old | new | old / new | old output | new output |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for size in {size for size, _ in table}:
        runs = table.get((size, "run 16")), table.get((size, "run 48"))
        if runs[0] and runs[1]:  # what one more task costs, start-up left out
            table[(size, "run, per task")] = {
                label: _per_task(runs[0][label], runs[1].get(label, {})) for label in runs[0]
            }
    for (size, op), row in sorted(table.items(), key=lambda item: item[0][0]):
        old, new = row.get("old", {}), row.get("new", {})
        print(
            f"| {size:,} | {op} | {_seconds(old) if old else ''} | {_seconds(new)} | "
            f"{_ratio(old, new) if old else ''} | {_detail(old)} | {_detail(new)} |"
        )


def _schedule(
    operations: list[str], trees: list[tuple[str, Path]], rounds: int
) -> list[tuple[str, str, Path]]:
    """(operation, label, tree) for every process to run, round after round, the trees
    taking turns to go first (so a slow stretch of the machine falls on both)."""
    jobs = []
    for turn in range(rounds):
        order = trees if turn % 2 == 0 else trees[::-1]
        jobs += [(op, label, tree) for op in operations for label, tree in order]
    return jobs


def _combined(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One measurement's rounds: the best time and the worst, or the first failure (a
    round that timed out or failed makes the measurement one that did)."""
    failed = next((r for r in results if "seconds" not in r), None)
    if failed is not None:
        return failed
    times = [r["seconds"] for r in results]
    return {**results[0], "seconds": min(times), "worst": max(times)}


def _per_task(short: dict[str, Any], long: dict[str, Any]) -> dict[str, Any]:
    """What one more task of a run costs: the best of 48 tasks less the best of 16."""
    if "seconds" not in short or "seconds" not in long:
        return {}
    return {"seconds": (long["seconds"] - short["seconds"]) / 32}


if __name__ == "__main__":
    main()
