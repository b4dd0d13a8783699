"""AIME as a benchmark: the data, extraction and metrics modules fitted to the interface.

AIME has no visible examples, so a readable answer is never verified (``verified`` stays
None) and earns no retry: saying it was wrong would leak the label. The one thing the solver
may be told is what its own response shows: a response without a usable final answer (none
found, or not an integer 0..999) earns a feedback round (with ``--feedback-rounds``) that names the
answer it gave and says it was not accepted (``prompts/aime/retry.j2``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.benchmarks import sampled
from arcmemo.benchmarks.aime.answers import extract_answer
from arcmemo.benchmarks.aime.data import (
    DATA_DIR_ENV,
    AimeDataError,
    AimeProblem,
    EscapeDamage,
    load_problems,
    split_path,
)
from arcmemo.benchmarks.aime.metrics import AimeMetrics, aime_metrics, problem_metrics, samples
from arcmemo.benchmarks.base import (
    BENCHMARKS,
    Benchmark,
    DataOrigin,
    RunDefaults,
    select_tasks,
    solve_messages,
)
from arcmemo.benchmarks.outputs import Convention, Curve, OrderRows, ScoredRun, Table
from arcmemo.core import prompting
from arcmemo.core.records import Attempt, CheckResult, Step, TaskGrade, TaskResult
from arcmemo.library.task import NO_LIBRARY, TaskLibrary
from arcmemo.models.base import Message


class AimeOptions(BaseModel):
    """Options of the AIME benchmark (``--benchmark-arg k=v``)."""

    model_config = ConfigDict(extra="forbid")

    escape_damage: EscapeDamage = Field(
        default="repair",
        description="Problem text with JSON escape damage (a form feed where \\frac was "
        "meant, a backspace for \\boxed, a tab for \\times in math): repair it with a "
        "warning naming the problems, or refuse the file.",
    )


@BENCHMARKS.register("aime", options=AimeOptions)
class AimeBenchmark(Benchmark[AimeProblem]):
    """AIME problems with integer answers 0..999."""

    domain = "aime"
    templates = ("aime/system", "aime/concepts", "aime/solve", "aime/retry")
    metrics_model = AimeMetrics
    # No visible examples to verify against: no feedback rounds, and agreement confirms a write.
    defaults = RunDefaults(feedback_rounds=0, write_signal="consistency", selector="llm")
    # `arcmemo run` shows those present (k <= the number of samples; score is pass@1);
    # summary.json has every pass@k and, under by_metric, each metric's std over problems.
    headline_metrics = (
        "n_samples",
        *(f"pass@{k}" for k in range(1, 9)),
        *(f"maj@{k}" for k in range(1, 9)),
    )

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
            raise AimeDataError(
                "give --data FILE or --split YEAR (`arcmemo data fetch aime --split YEAR` "
                "downloads a year's problems)"
            )
        options = self.options
        damage = options.escape_damage if isinstance(options, AimeOptions) else "repair"
        problems = load_problems(path, escape_damage=damage, warn=self.data_warnings.append)
        return select_tasks(problems, task_ids, limit)

    def data_origin(self, *, split: str | None, data: str | None) -> DataOrigin:
        if not data and split:
            # The file under ARCMEMO_DATA_DIR, which another shell may not have set.
            return DataOrigin(path=str(split_path(split).resolve()))
        return super().data_origin(split=split, data=data)

    def task_id(self, task: AimeProblem) -> str:
        return task.id

    def describe(self, task: AimeProblem) -> str:
        return task.problem

    def prompt(
        self,
        task: AimeProblem,
        *,
        concepts: str,
        previous: Step | None,
        library: TaskLibrary = NO_LIBRARY,
    ) -> list[Message]:
        task_text = prompting.render("aime/solve", problem=task.problem)
        if previous is not None and self.wants_feedback(previous):
            task_text += "\n" + prompting.render("aime/retry", answer=previous.candidate)
        return solve_messages("aime", concepts, task_text)

    def wants_feedback(self, step: Step) -> bool:
        # Only an unusable answer: whether a usable one is right is the hidden label.
        return step.error is None and step.parse_error is not None

    def check(
        self, task: AimeProblem, completion: str, library: TaskLibrary = NO_LIBRARY
    ) -> CheckResult:
        extracted = extract_answer(completion)
        return CheckResult(
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

    def judge(self, task: AimeProblem, prediction: Any) -> list[bool]:
        return [prediction is not None and prediction == task.answer]

    def grade(self, task: AimeProblem, attempts: list[Attempt]) -> TaskGrade:
        answers = [a.steps[-1].prediction if a.steps else None for a in attempts]
        values = problem_metrics(task.answer, answers, len(answers)) if answers else {}
        return TaskGrade(
            solved=any(a is not None and a == task.answer for a in answers),
            score=values.get("pass@1", 0.0),
            metrics={
                "answers": answers,
                "answer": task.answer,
                "majority_correct": bool(values.get(f"maj@{len(answers)}", 0.0)),
            },
        )

    def summarize(self, results: list[TaskResult], attempts: int) -> dict[str, Any]:
        per_task = [
            (r.metrics["answer"], r.metrics["answers"]) for r in results if "answer" in r.metrics
        ]
        return aime_metrics(per_task)

    # -- the run report: answers (arcmemo.benchmarks.aime.report and its template) ------------

    report_metrics = (*headline_metrics, "no_answer_rate")

    def report_curves(self, summary: dict[str, Any], results: list[TaskResult]) -> list[Curve]:
        """pass@k for k = 1..n samples (the run's own metric; AIME has no oracle@k)."""
        values = summary if "pass@1" in summary else self.summarize(results, 0)
        n = int(values.get("n_samples") or 0)
        points = [(float(k), float(values[f"pass@{k}"])) for k in range(1, n + 1)
                  if values.get(f"pass@{k}") is not None]  # fmt: skip
        return [Curve("pass@k vs k", "k (samples)", "pass@k", points, y_max=1.0)]

    def report_template(self) -> str | None:
        from arcmemo.benchmarks.aime import report

        return report.template()

    # -- arcmemo table: pass@k and maj@n (arcmemo.benchmarks.sampled) ------------------------

    task_noun = "problems"

    # strict and convention never reach these: tables refuses them for AIME runs.
    def has_table(self, summary: dict[str, Any], *, convention: Convention = "text") -> bool:
        return sampled.has_table(summary)

    def table(
        self, runs: Sequence[ScoredRun], *, strict: bool, convention: Convention = "text"
    ) -> Table:
        return sampled.table(runs, title="AIME scores", noun=self.task_noun)

    def order_rows(
        self, runs: Sequence[ScoredRun], *, strict: bool, convention: Convention = "text"
    ) -> OrderRows:
        return sampled.order_rows(runs)

    def task_values(
        self,
        results: list[TaskResult],
        *,
        attempts: int,
        strict: bool,
        convention: Convention = "text",
    ) -> dict[str, tuple[float, bool]]:
        return sampled.task_values(
            {r.task_id: samples(r.metrics.get("answer"), r.metrics.get("answers") or [])
             for r in results}
        )  # fmt: skip

    def paired_metric(self, *, strict: bool, convention: Convention = "text") -> str:
        return "per-problem pass@1"

    def paired_solved(self, *, attempts: int, strict: bool) -> str:
        return f"one of the {attempts} samples right"

    @classmethod
    def split_help(cls) -> str:
        return (
            f"a year such as 2025 (aime_YEAR.jsonl under ${DATA_DIR_ENV}, else where "
            "`arcmemo data fetch aime --split YEAR` writes it)"
        )

    def report_task(self, task: AimeProblem | None, result: TaskResult) -> dict[str, Any]:
        from arcmemo.benchmarks.aime import report

        return report.task_view(task, result)
