"""Synthetic 100-task ARC runs whose scores are rows of the ArcMemo paper's Tables 4 and 5
(o4-mini on ARC-AGI-1 val100, 3 runs, retry depths 0 to 2): the baseline and ArcMemo-PS.

Per setting and retry depth: how many one-test tasks are right in exactly which attempts
(``"02"``: attempts 0 and 2), and the two-test tasks as (attempts right on test input 1,
attempts right on test input 2); every other task is wrong. The counts were solved for from
the paper's run, pair and triple scores (plain and strict at once); the tests check them
with arcmemo's scoring.
"""

from __future__ import annotations

import json
from pathlib import Path

from arcmemo.benchmarks.arc import ArcBenchmark
from arcmemo.benchmarks.arc.scoring import task_score, task_solved
from arcmemo.core.records import Attempt, Step, TaskResult
from arcmemo.models.accounting import UsageSummary
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.summary import build_summary

N_TASKS = 100
ATTEMPTS = 3

Depth = tuple[dict[str, int], list[tuple[str, str]]]
SETTINGS: dict[str, list[Depth]] = {
    "baseline": [
        ({"0": 2, "1": 8, "2": 2, "01": 1, "02": 9, "12": 3, "012": 33}, [("", "2"), ("0", "01")]),
        ({"0": 9, "1": 1, "2": 4, "01": 0, "02": 3, "12": 9, "012": 45}, [("", "1")]),
        ({"0": 3, "1": 2, "2": 7, "01": 3, "02": 4, "12": 4, "012": 49}, [("12", "012")]),
    ],
    "ArcMemo-PS": [
        (
            {"0": 4, "1": 4, "2": 4, "01": 5, "02": 6, "12": 6, "012": 33},
            [("", "0"), ("01", "012")],
        ),
        (
            {"0": 4, "1": 7, "2": 4, "01": 6, "02": 4, "12": 2, "012": 44},
            [("", "2"), ("12", "012")],
        ),
        ({"0": 2, "1": 8, "2": 4, "01": 7, "02": 3, "12": 3, "012": 48}, [("", "02")]),
    ],
}

# The paper's rows as printed: run0 | run1 | run2 | k=1 | k=2 | k=3, per retry depth.
TABLE_4 = {
    "baseline": [
        "46.00 | 45.50 | 47.50 | 46.33 (1.04) | 55.17 (3.18) | 59.50",
        "57.00 | 55.50 | 61.00 | 57.83 (2.84) | 66.67 (3.82) | 71.50",
        "59.50 | 59.00 | 65.00 | 61.17 (3.33) | 69.00 (2.65) | 73.00",
    ],
    "ArcMemo-PS": [
        "49.50 | 49.00 | 49.50 | 49.33 (0.29) | 59.33 (0.29) | 63.50",
        "58.50 | 60.00 | 55.50 | 58.00 (2.29) | 67.33 (1.61) | 72.50",
        "60.50 | 66.00 | 58.50 | 61.67 (3.88) | 70.83 (3.06) | 75.50",
    ],
}
TABLE_5 = {
    "baseline": [
        "46.00 | 45.00 | 47.00 | 46.00 (1.00) | 54.67 (3.21) | 59.00",
        "57.00 | 55.00 | 61.00 | 57.67 (3.06) | 66.33 (4.04) | 71.00",
        "59.00 | 59.00 | 65.00 | 61.00 (3.46) | 69.00 (2.65) | 73.00",
    ],
    "ArcMemo-PS": [
        "49.00 | 49.00 | 49.00 | 49.00 (0.00) | 59.00 (0.00) | 63.00",
        "58.00 | 60.00 | 55.00 | 57.67 (2.52) | 67.00 (1.73) | 72.00",
        "60.00 | 66.00 | 58.00 | 61.33 (4.16) | 70.33 (3.06) | 75.00",
    ],
}


def _tasks_at(depth: Depth, two_test_slots: int) -> list[tuple[str, ...]]:
    """Per task, the attempts right on each test input. The first ``two_test_slots`` tasks
    have two test inputs at every depth (where this depth needs fewer, a wrong one)."""
    counts, two_test = depth
    tasks: list[tuple[str, ...]] = list(two_test)
    tasks += [("", "")] * (two_test_slots - len(two_test))
    tasks += [(right,) for right, count in counts.items() for _ in range(count)]
    return tasks + [("",)] * (N_TASKS - len(tasks))


def paper_results(setting: str) -> list[TaskResult]:
    """The setting's 100 task results: attempt ``a`` of task ``i`` has one step per retry
    depth, right on the test inputs whose attempt set holds ``a``."""
    depths = SETTINGS[setting]
    slots = max(len(two_test) for _, two_test in depths)
    per_depth = [_tasks_at(depth, slots) for depth in depths]
    results = []
    for index in range(N_TASKS):
        specs = [tasks[index] for tasks in per_depth]
        attempts = []
        for a in range(ATTEMPTS):
            rounds = [[str(a) in right for right in spec] for spec in specs]
            steps = [Step(round=r, completion="", correct=c) for r, c in enumerate(rounds)]
            attempts.append(Attempt(index=a, steps=steps, correct=rounds[-1]))
        final = [a.correct for a in attempts]
        results.append(
            TaskResult(
                task_id=f"task-{index:03d}",
                solved=task_solved(final),
                score=task_score(final),
                attempts=attempts,
            )
        )
    return results


def write_paper_run(path: Path, setting: str, *, summary: bool = True) -> Path:
    """A run directory of the setting (config, task order, results and, if ``summary``,
    summary.json as a run writes it)."""
    results = paper_results(setting)
    writer = RunWriter(path)
    config = RunConfig(
        benchmark="arc-agi-1",
        data="synthetic-val100",
        model="scripted:paper",
        attempts=ATTEMPTS,
        feedback_rounds=len(SETTINGS[setting]) - 1,
        out=path,
    )
    writer.start(config)
    writer.write_task_order([r.task_id for r in results])
    for result in results:
        writer.append_result(result)
    if summary:
        writer.write_summary(build_summary(config, ArcBenchmark(), results, UsageSummary(), 0.0))
    return path


def read_summary(path: Path) -> dict:
    return json.loads((path / "summary.json").read_text())
