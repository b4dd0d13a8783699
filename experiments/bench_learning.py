"""Memory that learns what helps: size and selection-prompt tokens with and without
pruning and consolidation, and the share of solves attributed to selected concepts.

A scripted online run (the real pipeline: llm selector, bwrap-checked programs, ps
abstraction, continual writes and attribution) over the first TASKS ARC-AGI-1 evaluation
tasks, starting from the seed ontology. The scripted model is built to reproduce what the
paper's published memory shows:

* tasks come in FAMILIES; a family's abstraction writes its concept under one of three
  near-duplicate names ("split grid" / "split regions" / "split region grid"), so the memory
  grows duplicates;
* the selector names the task's family (every spelling) and two seed concepts (distractors
  that the solution never uses);
* a task is "solved" (its program passes the train pairs by lookup) unless its index is a
  multiple of FAIL_EVERY; every program carries a comment naming its family's idea, so
  attribution can find the family concept in it (and calls it harmful on a failed task).

The final memory is then measured four ways: as the run left it, after ``prune
--min-evidence N``, after ``consolidate``, and after both, each in both memory views (the
paper's, the default, and arcmemo's: the llm selector's ``view``). Numbers are what this script
prints; nothing is assumed. The concept/attribution design itself is documented in
arcmemo/memory/attribution.py, evidence.py and consolidate.py.

    python experiments/bench_learning.py [--tasks 30] [--min-evidence 3] [--update-every 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from arcmemo.benchmarks.arc import format_grid, load_split
from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.attribution import attribute_task, summarize
from arcmemo.memory.consolidate import apply_merges, propose_merges
from arcmemo.memory.evidence import active, prune
from arcmemo.memory.schema import Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.models import ModelClient, ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.pipeline import run_benchmark
from arcmemo.selection.base import SELECTORS
from arcmemo.selection.llm import LLMSelector
from arcmemo.signals.base import WRITE_SIGNALS

# (spellings, description, comment the solution carries)
FAMILIES = [
    (
        ["split grid", "split regions", "split region grid"],
        "divide the grid into regions separated by full divider lines of one color",
        "split the grid into regions at the divider lines",
    ),
    (
        ["recolor object", "recolor objects by size", "object recoloring"],
        "give each object a new color chosen by a property of the object",
        "recolor each object by its size",
    ),
    (
        ["fill enclosed area", "fill enclosed regions", "enclosed area filling"],
        "fill the background cells enclosed by a closed shape with a color",
        "fill the enclosed area inside each closed shape",
    ),
    (
        ["draw line between points", "draw lines between points", "line between points"],
        "draw a straight line of cells between two marked points",
        "draw a line between each pair of points",
    ),
]
DISTRACTORS = ["tile grid", "reflect grid", "extract objects", "rotate grid"]
SUMMARY = re.compile(r"rule of task (\w+)")
# What the selection prompts ask, the paper's (the default view) and arcmemo's.
SELECTION_MARKERS = (
    "decide which of them are relevant to this puzzle",
    "Choose the concepts that will help",
)


class ScriptedLearner:
    """The scripted solver, selector and abstractor of the bench (see the module doc)."""

    def __init__(self, task_ids: list[str], fail_every: int) -> None:
        tasks = {t.id: t for t in load_split("evaluation")}
        self.tasks = {i: tasks[i] for i in task_ids}
        self.index = {task_id: n for n, task_id in enumerate(task_ids)}
        self.fail_every = fail_every

    def _task(self, text: str) -> str:
        found = SUMMARY.search(text)
        if found:
            return found.group(1)
        for task_id, task in self.tasks.items():
            if f"\n{format_grid(task.train[0].input)}\n" in text:
                return task_id
        raise AssertionError("the bench's scripted model could not tell the task")

    def family(self, task_id: str) -> tuple[list[str], str, str]:
        return FAMILIES[self.index[task_id] % len(FAMILIES)]

    def program(self, task_id: str) -> str:
        comment = self.family(task_id)[2]
        if self.index[task_id] % self.fail_every == 0:
            return f"def transform(grid):\n    # {comment}\n    return grid\n"
        table = {str(p.input): p.output for p in self.tasks[task_id].train}
        return (
            f"TABLE = {table!r}\n"
            f"def transform(grid):\n    # {comment}\n"
            "    return TABLE.get(str(grid.tolist()), grid.tolist())\n"
        )

    def __call__(self, messages: list[Any]) -> str:
        prompt = next(m.content for m in messages if m.role == "user")
        task_id = self._task("\n\n".join(m.content for m in messages))
        n = self.index[task_id]
        names, description, comment = self.family(task_id)
        if any(marker in prompt for marker in SELECTION_MARKERS):
            chosen = [*names, DISTRACTORS[n % 4], DISTRACTORS[(n + 1) % 4]]
            return "```yaml\n" + "\n".join(f"- {name}" for name in chosen) + "\n```"
        if "Rewrite the solution as short pseudocode" in prompt:
            return (
                f"<summary>rule of task {task_id}</summary>\n<pseudocode>\n{comment}\n</pseudocode>"
            )
        if "Abstract the reusable concepts" in prompt:
            spelling = names[(n // len(FAMILIES)) % len(names)]
            return (
                "```yaml\n"
                f"- name: {spelling}\n  kind: routine\n  routine_subtype: grid manipulation\n"
                f"  description: {description}\n"
                f"  cues: [task {task_id} shows it: {comment}]\n"
                f"  implementation: [{comment}]\n```"
            )
        return f"The rule is clear.\n```python\n{self.program(task_id)}```\n"


# The memory views measured: the llm selector's default (the paper's), then arcmemo's.
VIEWS = ("paper", "arcmemo")


def measure(memory: Memory, problem: str) -> dict[str, int]:
    """Active concepts, retired ones, and per view the tokens of the selection view and of
    the selection prompt, as the llm selector shows them with that view."""
    measured = {
        "concepts": len(active(memory).concepts),
        "retired": sum(bool(c.retired) for c in memory.concepts),
    }
    for view in VIEWS:
        selector = SELECTORS.create(SELECTORS.spec("llm", {"view": view}))
        assert isinstance(selector, LLMSelector)
        prompt = "".join(asyncio.run(selector.preview(memory, problem, task_id="bench")))
        measured[f"{view} view"] = estimate_tokens(selector.selection_view(memory))
        measured[f"{view} prompt"] = estimate_tokens(prompt)
    return measured


async def maintained(memory: Memory, *, prune_at: int | None, consolidate: bool) -> Memory:
    copy = memory.model_copy(deep=True)
    if consolidate:
        apply_merges(copy, await propose_merges(copy))
    if prune_at is not None:
        prune(copy, prune_at)
    return copy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--min-evidence", type=int, default=3)
    parser.add_argument("--update-every", type=int, default=5)
    parser.add_argument("--fail-every", type=int, default=5)
    args = parser.parse_args()
    task_ids = sorted(t.id for t in load_split("evaluation"))[: args.tasks]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        os.environ["ARCMEMO_CACHE_DIR"] = str(root / "cache")
        seed = root / "seed.json"
        load_seed("arc").save(seed)
        learner = ScriptedLearner(task_ids, args.fail_every)
        config = RunConfig(
            benchmark="arc-agi-1",
            split="evaluation",
            tasks=task_ids,
            model="scripted:bench",
            attempts=1,
            feedback_rounds=0,
            out=root / "run",
            memory=seed,
            memory_out=root / "final.json",
            selector="llm",
            update="online",
            update_every=args.update_every,
        )
        started = time.perf_counter()
        client = ModelClient(ScriptedProvider.from_script(learner, model="bench"))
        asyncio.run(run_benchmark(config, models={"solver": client, "aux": client}))
        seconds = time.perf_counter() - started
        final = Memory.load(root / "final.json")
        results = RunDirectory(root / "run").ordered_results()
    signal = WRITE_SIGNALS.create("train")
    summary = summarize(
        [attribute_task(final, r, signal.confirmed_step(r)) for r in results if not r.error]
    )
    problem = f"(the selection prompt of one task, {task_ids[0]}, as the llm selector sends it)"
    seeded = load_seed("arc")
    rows = [("seed memory (before the run)", seeded)]
    for label, prune_at, consolidate in (
        (f"after {len(task_ids)} tasks, no maintenance", None, False),
        (f"+ prune --min-evidence {args.min_evidence}", args.min_evidence, False),
        ("+ consolidate", None, True),
        ("+ consolidate, then prune", args.min_evidence, True),
    ):
        kept = asyncio.run(maintained(final, prune_at=prune_at, consolidate=consolidate))
        rows.append((label, kept))
    print(
        f"scripted online run: {len(task_ids)} ARC-AGI-1 evaluation tasks, batches of "
        f"{args.update_every}, {seconds:.1f} s"
    )
    print(f"attribution: {summary.line()}")
    print()
    columns = [f"{view} selection {what}" for view in VIEWS for what in ("view", "prompt")]
    print("| memory | active concepts | retired | " + " | ".join(columns) + " |")
    print("|---|---:|---:|" + "---:|" * len(columns))
    base = measure(rows[1][1], problem)
    for label, memory in rows:
        m = measure(memory, problem)
        cells: list[object] = [label, m["concepts"], m["retired"]]
        for view in VIEWS:
            prompt, unmaintained = m[f"{view} prompt"], base[f"{view} prompt"]
            ratio = f" ({prompt / unmaintained:.2f}x)" if unmaintained else ""
            cells += [m[f"{view} view"], f"{prompt}{ratio}"]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    print(
        "\n(tokens: arcmemo's estimate; ratios against the unmaintained memory in the same "
        "view; the run itself selects in the paper's view, the llm selector's default)"
    )
    both = rows[-1][1]
    merges = [h for h in both.history if h.op == "consolidate"]
    print(f"merges: {'; '.join(str(h.changes[0]) + ' into ' + h.target for h in merges)}")
    print(f"retired: {', '.join(c.name for c in both.concepts if c.retired)}")


if __name__ == "__main__":
    main()
