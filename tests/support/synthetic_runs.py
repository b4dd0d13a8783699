"""Synthetic ARC runs of any size, for the report's scale test and experiments/bench_report.py.

Shaped like a real o4-mini run with retries: 3-5 train pairs and 1-2 test inputs per task,
grids of 3x3 up to 30x30; 2 attempts of up to 3 rounds, each with a reasoning text and a
program, train-pair feedback (wrong grids or a traceback) and test outputs; about a third of
the tasks solved at the first try, some after a retry. Seeded: the same size gives the same
run.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.core.records import Attempt, PairCheck, Selection, Step, TaskResult
from arcmemo.core.tokens import Usage
from arcmemo.models.accounting import UsageSummary
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.summary import build_summary

Grid = list[list[int]]

# Completions are sentences of words drawn at random from this text: about as compressible
# as English prose (a template repeated with a few numbers changed would pack far better).
_TEXT = (
    "looking at the train pairs the output keeps input background and recolors each object "
    "by its size largest becomes blue smallest red objects that touch border are left alone "
    "grid has same shape as in every pair so transformation is cell wise after labelling "
    "connected components let me check there objects one matches region expected rows "
    "columns count colors mirror rotate flip tile pattern repeat copy corner cells fill gap "
    "between lines horizontal vertical diagonal symmetric axis center move shift down up "
    "left right until hits wall stop draw line from dot to edge frame outline inside outside "
    "hole enclosed area most frequent color least noise remove keep only biggest crop "
    "bounding box scale factor two three upsample downsample overlay mask combine halves "
    "logical and or xor separator column row split compare sizes sort order gravity falls"
)
WORDS = _TEXT.split(" ")
PROGRAM = """def transform(grid):
    out = grid.copy()
    labels, count = ndimage.label(grid > 0)
    sizes = [int((labels == k).sum()) for k in range(1, count + 1)]
    if not sizes:
        return out
    for k, size in enumerate(sizes, start=1):
        mask = labels == k
        rows, cols = np.nonzero(mask)
        if rows.min() == 0 or cols.min() == 0:
            continue  # objects on the border keep their color
        if size == max(sizes):
            out[mask] = {big}
        elif size == min(sizes):
            out[mask] = {small}
    return np.rot90(out, {turns}) if {turns} else out
"""
TRACEBACK = (
    'Traceback (most recent call last):\n  File "<program>", line {line}, in transform\n'
    "IndexError: index {index} is out of bounds for axis 0 with size {size}"
)
CONCEPTS = ["recolor by size", "connected components", "border objects", "rotate grid"]


def _grid(rng: random.Random, height: int, width: int) -> Grid:
    return [[rng.choice((0, 0, 0, rng.randint(1, 9))) for _ in range(width)] for _ in range(height)]


def _spoiled(rng: random.Random, grid: Grid) -> Grid:
    """``grid`` with a few cells changed (a program that is almost right)."""
    out = [row[:] for row in grid]
    for _ in range(rng.randint(1, max(1, len(grid) * len(grid[0]) // 8))):
        r, c = rng.randrange(len(out)), rng.randrange(len(out[0]))
        out[r][c] = (out[r][c] + 1) % 10
    return out


def _task(rng: random.Random) -> dict[str, list[dict[str, Grid]]]:
    pairs = []
    for _ in range(rng.randint(3, 5) + rng.choice((1, 1, 1, 1, 2))):
        height, width = rng.randint(3, 30), rng.randint(3, 30)
        same_shape = rng.random() < 0.7
        out_h, out_w = (height, width) if same_shape else (rng.randint(1, 30), rng.randint(1, 30))
        pairs.append({"input": _grid(rng, height, width), "output": _grid(rng, out_h, out_w)})
    n_tests = 2 if len(pairs) > 5 or rng.random() < 0.15 else 1
    return {"train": pairs[:-n_tests], "test": pairs[-n_tests:]}


def _step(
    rng: random.Random, task: dict[str, list[dict[str, Grid]]], round_: int, right: bool
) -> Step:
    program = PROGRAM.format(big=rng.randint(1, 9), small=rng.randint(1, 9), turns=round_)
    prose = " ".join(
        " ".join(rng.choices(WORDS, k=rng.randint(8, 24))).capitalize() + "."
        for _ in range(rng.randint(10, 30))
    )
    checks = []
    for index, pair in enumerate(task["train"]):
        if right or rng.random() < 0.3:
            checks.append(PairCheck(index=index, correct=True, output=pair["output"]))
        elif rng.random() < 0.2:
            error = TRACEBACK.format(line=rng.randint(3, 14), index=31, size=30)
            checks.append(
                PairCheck(index=index, correct=False, error=error, error_kind="exception")
            )
        else:
            checks.append(
                PairCheck(index=index, correct=False, output=_spoiled(rng, pair["output"]))
            )
    tests = [pair["output"] if right else _spoiled(rng, pair["output"]) for pair in task["test"]]
    return Step(
        round=round_,
        completion=f"{prose}\n\n```python\n{program}```\n",
        candidate=program,
        checks=checks,
        verified=all(c.correct for c in checks),
        prediction=tests,
        correct=[right] * len(tests),
        concepts=CONCEPTS[: rng.randint(1, len(CONCEPTS))],
        usage=Usage(
            prompt_tokens=rng.randint(3000, 9000), completion_tokens=rng.randint(500, 8000)
        ),
    )


def _result(rng: random.Random, task_id: str, task: dict[str, list[dict[str, Grid]]]) -> TaskResult:
    fate = rng.random()  # solved at once (1/3), after a retry (1/6), or not at all
    attempts = []
    for index in range(2):
        steps = []
        for round_ in range(3):
            right = fate < 1 / 3 or (fate < 1 / 2 and round_ == 1)
            steps.append(_step(rng, task, round_, right))
            if steps[-1].verified:
                break
        attempts.append(Attempt(index=index, steps=steps, correct=steps[-1].correct or []))
    solved = any(all(a.correct) for a in attempts)
    prompt = sum(s.usage.prompt_tokens for a in attempts for s in a.steps)
    completion = sum(s.usage.completion_tokens for a in attempts for s in a.steps)
    return TaskResult(
        task_id=task_id,
        solved=solved,
        score=1.0 if solved else 0.0,
        attempts=attempts,
        selection=Selection(
            selector="llm",
            selected=CONCEPTS[:3],
            trace="I pick these:\n- " + "\n- ".join(CONCEPTS[:3]),
        ),
        tokens=Usage(prompt_tokens=prompt, completion_tokens=completion),
    )


def write_run(base: Path, n_tasks: int, *, seed: int = 0, memory: Path | None = None) -> Path:
    """A finished synthetic ARC run of ``n_tasks`` under ``base``: its tasks in ``base/data``
    and its run directory ``base/run`` (returned); ``memory``: the memory file it read (the
    report shows its entries)."""
    rng = random.Random(seed)
    data = base / "data"
    data.mkdir(parents=True, exist_ok=True)
    results = []
    for number in range(n_tasks):
        task_id = f"{number:08x}"
        task = _task(rng)
        (data / f"{task_id}.json").write_text(json.dumps(task))
        results.append(_result(rng, task_id, task))
    config = RunConfig(
        benchmark="arc-agi-1",
        data=str(data),
        model="scripted:inline",
        attempts=2,
        feedback_rounds=2,
        out=base / "run",
        memory=memory,
    )
    writer = RunWriter(config.out)
    writer.start(config)
    writer.append_results(results)
    writer.write_task_order([r.task_id for r in results])
    arc = BENCHMARKS.create("arc-agi-1")
    writer.write_summary(build_summary(config, arc, results, UsageSummary(), 0.0))
    return config.out
