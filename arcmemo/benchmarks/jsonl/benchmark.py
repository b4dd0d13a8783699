"""The user's own problems as a benchmark: ``arcmemo run jsonl --data FILE``.

A problem's answer is read from the response (:func:`~arcmemo.benchmarks.jsonl.checkers.
extract_answer`) and the ``checker`` option decides whether it is right. That checker is the
task's verifier, as ARC's train pairs are: a step it accepts is verified (the ``train`` write
signal confirms it), and a rejected one earns a feedback round that tells the solver the
checker's message (never the reference answer).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from arcmemo.benchmarks import sampled
from arcmemo.benchmarks.base import (
    BENCHMARKS,
    Benchmark,
    RunDefaults,
    select_tasks,
    solve_messages,
)
from arcmemo.benchmarks.jsonl.checkers import (
    BUILT_IN,
    CHECK_LIMITS,
    Checker,
    CheckerError,
    Verdict,
    extract_answer,
    parse_checker,
    verdict_of,
)
from arcmemo.benchmarks.jsonl.data import JsonlDataError, TextProblem, load_text_problems
from arcmemo.benchmarks.jsonl.metrics import TextMetrics, text_metrics, voting
from arcmemo.benchmarks.outputs import Convention, OrderRows, ScoredRun, Table
from arcmemo.core import prompting
from arcmemo.core.records import Attempt, CheckResult, Step, TaskGrade, TaskResult
from arcmemo.library.task import NO_LIBRARY, TaskLibrary
from arcmemo.models.base import Message


class JsonlOptions(BaseModel):
    """Options of the ``jsonl`` benchmark (``--benchmark-arg checker=...``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    checker: str = Field(
        default="exact",
        description="exact, numeric, choice, regex:PATTERN or python:MODULE:FUNCTION "
        "(a regex and user code run in the sandbox).",
    )

    @field_validator("checker")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in BUILT_IN and not value.startswith(("regex:", "python:")):
            raise ValueError("use exact, numeric, choice, regex:PATTERN or python:MODULE:FUNCTION")
        return value


class TextBenchmark(Benchmark[TextProblem]):
    """Problems as text, answers read from the response; a subclass fixes how they check."""

    name = "text"
    domain = "text"
    templates = ("text/system", "text/concepts", "text/solve", "text/retry")
    metrics_model = TextMetrics
    defaults = RunDefaults(feedback_rounds=0, write_signal="train", selector="llm")
    headline_metrics = (
        "n_samples",
        *(f"pass@{k}" for k in range(1, 9)),
        *(f"maj@{k}" for k in range(1, 9)),
    )
    task_noun = "problems"

    def load(
        self,
        *,
        split: str | None,
        data: str | None,
        task_ids: Sequence[str] | None,
        limit: int | None,
    ) -> list[TextProblem]:
        raise JsonlDataError(
            "text problems are given one at a time (the jsonl benchmark reads files)"
        )

    def task_id(self, task: TextProblem) -> str:
        return task.id

    def describe(self, task: TextProblem) -> str:
        return task.problem

    def prompt(
        self,
        task: TextProblem,
        *,
        concepts: str,
        previous: Step | None,
        library: TaskLibrary = NO_LIBRARY,
    ) -> list[Message]:
        text = prompting.render(f"{self.domain}/solve", **self.solve_variables(task))
        if previous is not None and self.wants_feedback(previous):
            text += "\n" + prompting.render(
                f"{self.domain}/retry", answer=previous.candidate, feedback=self.feedback(previous)
            )
        return solve_messages(self.domain, concepts, text)

    def solve_variables(self, task: TextProblem) -> dict[str, Any]:
        """What the solve template (``prompts/DOMAIN/solve.j2``) is given."""
        return {"problem": task.problem}

    def feedback(self, step: Step) -> str:
        """What a feedback round tells the solver about ``step``."""
        if step.parse_error:
            return step.parse_error
        return next((c.error for c in step.checks if c.error), "") or ""

    def verdict(self, task: TextProblem, answer: str) -> Verdict:
        """Whether ``answer`` is right for ``task`` (blocking; may run the sandbox)."""
        raise NotImplementedError

    def check(
        self, task: TextProblem, completion: str, library: TaskLibrary = NO_LIBRARY
    ) -> CheckResult:
        from arcmemo.core.records import PairCheck

        answer = extract_answer(completion)
        if answer is None:
            return CheckResult(parse_error="no final answer found", verified=False)
        verdict = self.verdict(task, answer)
        return CheckResult(
            candidate=answer,
            checks=[PairCheck(index=0, correct=verdict.correct, error=verdict.feedback or None)],
            verified=verdict.correct,
            prediction={"answer": answer, "correct": verdict.correct},
        )

    def judge(self, task: TextProblem, prediction: Any) -> list[bool]:
        return [isinstance(prediction, dict) and prediction.get("correct") is True]

    def grade(self, task: TextProblem, attempts: list[Attempt]) -> TaskGrade:
        samples = [_sample(a) for a in attempts]
        values = text_metrics([samples]) if samples else {}
        return TaskGrade(
            solved=any(correct for _, correct in samples),
            score=float(values.get("pass@1", 0.0)),
            metrics={"samples": [list(s) for s in samples]},
        )

    def summarize(self, results: list[TaskResult], attempts: int) -> dict[str, Any]:
        return text_metrics([_samples_of(r) for r in results if "samples" in r.metrics])

    # -- arcmemo table: pass@k and maj@n (arcmemo.benchmarks.sampled) ------------------------

    # What the table's notes call the scores.
    scores_name: ClassVar[str] = "Scores"

    def has_table(self, summary: dict[str, Any], *, convention: Convention = "text") -> bool:
        return sampled.has_table(summary)

    def table(
        self, runs: Sequence[ScoredRun], *, strict: bool, convention: Convention = "text"
    ) -> Table:
        return sampled.table(runs, title=self.scores_name, noun=self.task_noun)

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
        return sampled.task_values({r.task_id: voting(_samples_of(r)) for r in results})

    def paired_metric(self, *, strict: bool, convention: Convention = "text") -> str:
        return f"per-{self.task_noun.removesuffix('s')} pass@1"

    def paired_solved(self, *, attempts: int, strict: bool) -> str:
        return f"one of the {attempts} samples right"


def _samples_of(result: TaskResult) -> list[tuple[str | None, bool]]:
    return [(a, bool(c)) for a, c in result.metrics.get("samples") or []]


def _sample(attempt: Attempt) -> tuple[str | None, bool]:
    prediction = attempt.steps[-1].prediction if attempt.steps else None
    if not isinstance(prediction, dict):
        return None, False
    return prediction.get("answer"), prediction.get("correct") is True


@BENCHMARKS.register("jsonl", options=JsonlOptions)
class JsonlBenchmark(TextBenchmark):
    """Your own problems: a JSONL or Parquet file of id, problem and optional answer."""

    def __init__(self, options: JsonlOptions | None = None, **kwargs: Any) -> None:
        super().__init__(options or JsonlOptions(), **kwargs)
        self.checker: Checker | None = None

    def _checker(self) -> Checker:
        if self.checker is None:
            assert isinstance(self.options, JsonlOptions)
            self.checker = parse_checker(self.options.checker)
        return self.checker

    def load(
        self,
        *,
        split: str | None,
        data: str | None,
        task_ids: Sequence[str] | None,
        limit: int | None,
    ) -> list[TextProblem]:
        if not data:
            raise JsonlDataError("the jsonl benchmark reads --data FILE (JSONL or Parquet)")
        try:
            checker = self._checker()
        except CheckerError as error:
            raise JsonlDataError(str(error)) from None
        problems = load_text_problems(Path(data))
        if checker.needs_reference:
            unanswered = [p.id for p in problems if p.answer is None]
            if unanswered:
                raise JsonlDataError(
                    f"{data}: problem {unanswered[0]!r} has no answer, which checker "
                    f"{checker.spec!r} needs ({len(unanswered)} without one)"
                )
        return select_tasks(problems, task_ids, limit)

    def verdict(self, task: TextProblem, answer: str) -> Verdict:
        checker = self._checker()
        if checker.builtin is not None:
            return BUILT_IN[checker.builtin](answer, task.answer or "")
        (result,) = self.sandbox.get().run(
            checker.program(), [checker.arguments(answer, task.answer, task.problem)],
            limits=CHECK_LIMITS,
        )  # fmt: skip
        if not result.ok:
            return Verdict(False, f"the checker failed: {result.error_kind}")
        return verdict_of(result.value) or Verdict(False, "the checker returned no verdict")

    @classmethod
    def split_help(cls) -> str:
        return "none: give --data FILE"
