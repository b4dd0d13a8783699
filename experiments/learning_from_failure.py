"""Contrastive abstraction end to end on a designed scripted run (no API key, the real
pipeline): an online ARC run over two tasks. The first task gets two attempts, one that
passes its train pairs and one that fails; the second task's scripted solver writes the
right program only when its prompt shows the contrastive pitfall (a designed dependence:
this measures the plumbing, that the pitfall reaches the later prompt and the run counts
the solve, not that a real model learns from it). Run with and without ``contrast=true``;
the script prints each run's solved tasks, model calls by stage and the memory's pitfalls.

    python experiments/learning_from_failure.py
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from arcmemo.benchmarks.arc import format_grid, load_split
from arcmemo.core.registry import ComponentSpec
from arcmemo.memory.schema import Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.models import ModelClient, ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.pipeline import run_benchmark

# ARC-AGI-1 training tasks: a left-right mirror, then an upside-down one.
FIRST, LATER = "67a3c6ac", "68b16354"
MIRROR_LR = "def transform(grid):\n    return np.fliplr(grid)\n"
MIRROR_UD = "def transform(grid):\n    return np.flipud(grid)\n"
IDENTITY = "def transform(grid):\n    return grid\n"
PITFALL = "returning the input unchanged when every example output differs from its input"
CONTRAST = f"""```yaml
concepts:
  - name: mirror the grid
    kind: routine
    routine_subtype: grid manipulation
    description: reflect the whole grid along one axis
    cues: [the output has the input's size and colors, reordered]
pitfall:
  situation: "{PITFALL}"
  suggestion: find the mirror axis from the examples instead of returning the grid unchanged
  guards: mirror the grid
```"""


class Script:
    """Answers by stage, told from the prompt; counts calls per stage."""

    def __init__(self) -> None:
        tasks = {t.id: t for t in load_split("training")}
        self.grids = {tid: format_grid(tasks[tid].train[0].input) for tid in (FIRST, LATER)}
        self.calls: dict[str, int] = {}
        self.first_tries = 0

    def _count(self, stage: str) -> None:
        self.calls[stage] = self.calls.get(stage, 0) + 1

    def __call__(self, messages: list[Any]) -> str:
        prompt = messages[0].content if messages[0].role == "user" else messages[-1].content
        text = "\n".join(m.content for m in messages)
        if "one passed the check, one failed it" in prompt:
            self._count("contrast")
            return CONTRAST
        if "Rewrite the solution as short pseudocode" in prompt:
            self._count("pseudocode")
            return "<summary>a rule</summary>\n<pseudocode>\napply the rule\n</pseudocode>"
        if "Abstract the reusable concepts" in prompt:
            self._count("concepts")
            return "```yaml\n- name: reflect grid\n```"
        self._count("solve")
        if f"\n{self.grids[FIRST]}\n" in text:
            self.first_tries += 1
            body = MIRROR_LR if self.first_tries % 2 else IDENTITY
        else:
            body = MIRROR_UD if PITFALL in text else IDENTITY
        return f"```python\n{body}```"


def contrast_run(folder: Path, contrast: bool) -> dict[str, Any]:
    script = Script()
    memory_path = folder / "memory.json"
    load_seed("arc").save(memory_path)
    config = RunConfig(
        benchmark="arc-agi-1",
        split="training",
        tasks=[FIRST, LATER],
        model="scripted:solver",
        attempts=2,
        feedback_rounds=0,
        out=folder / "run",
        memory=memory_path,
        memory_out=folder / "final.json",
        selector="all",
        update="online",
        update_every=1,
        memory_format=ComponentSpec(name="ps", options={"contrast": contrast}),
    )
    client = ModelClient(ScriptedProvider.from_script(script, model="scripted"))
    asyncio.run(run_benchmark(config, models={"solver": client, "aux": client}))
    results = {r.task_id: r.solved for r in RunDirectory(folder / "run").ordered_results()}
    final = Memory.load(folder / "final.json")
    return {
        "contrast": contrast,
        "solved": results,
        "model_calls": script.calls,
        "pitfalls": [
            {"situation": les.situation, "guards": les.guards}
            for les in final.lessons
            if les.kind == "pitfall"
        ],
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["ARCMEMO_CACHE_DIR"] = str(Path(scratch) / "cache")
        out: dict[str, Any] = {"contrast": []}
        for contrast in (False, True):
            folder = Path(scratch) / f"contrast-{contrast}"
            folder.mkdir()
            out["contrast"].append(contrast_run(folder, contrast))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
