"""AIME: integer answers, extracted from ``\\boxed{}``; pass@k and maj@k scoring.

The pure pieces (loader, extractor, metrics) are in :mod:`arcmemo.benchmarks.aime_parts`;
this module fits them to the benchmark interface. AIME has no visible examples, so there is
no verification signal and no retry with feedback.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arcmemo import prompting
from arcmemo.benchmarks.aime_parts import (
    AimeDataError,
    AimeProblem,
    aime_metrics,
    extract_answer,
    load_problems,
    split_path,
)
from arcmemo.benchmarks.base import (
    Attempt,
    Benchmark,
    Step,
    TaskGrade,
    TaskResult,
    register_benchmark,
    select_tasks,
    solve_messages,
)
from arcmemo.models.base import Message


@register_benchmark("aime")
class AimeBenchmark(Benchmark[AimeProblem]):
    """AIME problems with integer answers 0..999."""

    name = "aime"
    domain = "aime"
    default_retries = 0
    default_update_signal = "consistency"  # no visible examples to verify against

    def load(
        self,
        *,
        split: str | None,
        data: str | None,
        task_ids: Sequence[str] | None,
        limit: int | None,
    ) -> list[AimeProblem]:
        if data:
            path = Path(data)
        elif split:
            path = split_path(split)
        else:
            raise AimeDataError("give --data FILE or --split YEAR (with ARCMEMO_DATA_DIR set)")
        return select_tasks(load_problems(path), task_ids, limit)

    def task_id(self, task: AimeProblem) -> str:
        return task.id

    def describe(self, task: AimeProblem) -> str:
        return task.problem

    def prompt(self, task: AimeProblem, *, concepts: str, previous: Step | None) -> list[Message]:
        return solve_messages(
            "aime", concepts, prompting.render("aime/solve", problem=task.problem)
        )

    def check(self, task: AimeProblem, completion: str) -> Step:
        extracted = extract_answer(completion)
        return Step(
            round=0,
            completion=completion,
            candidate=extracted.raw,
            parse_error=None
            if extracted.value is not None
            else (
                "no final answer found"
                if extracted.raw is None
                else f"answer {extracted.raw!r} is not an integer 0-999"
            ),
            verified=None,
            prediction=extracted.value,
        )

    def grade(self, task: AimeProblem, attempts: list[Attempt]) -> TaskGrade:
        answers: list[int | None] = []
        for attempt in attempts:
            for step in attempt.steps:
                step.correct = [step.prediction is not None and step.prediction == task.answer]
            final = attempt.steps[-1] if attempt.steps else None
            attempt.correct = final.correct or [False] if final else [False]
            answers.append(final.prediction if final else None)
        metrics = aime_metrics([(task.answer, answers)])
        return TaskGrade(
            solved=bool(metrics["pass@k"]),
            score=float(metrics["avg@k"]),
            metrics={
                "answers": answers,
                "answer": task.answer,
                "majority_correct": bool(metrics["maj@k"]),
            },
        )

    def summarize(self, results: list[TaskResult], attempts: int) -> dict[str, Any]:
        per_task = [
            (r.metrics["answer"], r.metrics["answers"]) for r in results if "answer" in r.metrics
        ]
        return aime_metrics(per_task)
