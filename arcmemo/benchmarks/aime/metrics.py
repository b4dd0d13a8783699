"""AIME grading and run metrics (exact integer match)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.benchmarks.aime.answers import ExtractedAnswer


class AttemptGrade(BaseModel):
    """One attempt's parsed answer and whether it matches the reference."""

    model_config = ConfigDict(frozen=True)

    answer: int | None = Field(description="The parsed integer answer; None when none was found.")
    correct: bool = Field(description="True when the answer equals the reference answer.")


def grade_answer(extracted: ExtractedAnswer, reference: int) -> AttemptGrade:
    """Grade one attempt by exact integer match; no answer is never correct."""
    return AttemptGrade(
        answer=extracted.value, correct=extracted.value is not None and extracted.value == reference
    )


def majority_answer(answers: Sequence[int | None]) -> int | None:
    """The most frequent non-None answer; ties go to the one that appeared first."""
    counts = Counter(answer for answer in answers if answer is not None)
    if not counts:
        return None
    # Counter keeps first-insertion order and max() returns the first maximal item.
    return max(counts, key=lambda answer: counts[answer])


def aime_metrics(
    per_task_answers: Sequence[tuple[int, Sequence[int | None]]],
) -> dict[str, float | int]:
    """Score AIME runs from ``(reference answer, attempt answers in order)`` per task.

    Keys (rates are fractions 0..1; tasks weigh equally; a task with no attempts is wrong):

    - ``n_tasks``: number of tasks.
    - ``k``: the largest number of attempts of any task.
    - ``pass@1``: fraction of tasks whose first attempt is right.
    - ``avg@k``: per task, the fraction of its attempts that are right, averaged over tasks
      (pass@1 averaged over the k samples).
    - ``pass@k``: fraction of tasks with at least one right attempt.
    - ``maj@k``: fraction of tasks whose majority answer (among attempts that gave an answer;
      ties broken by first occurrence) is right; a task with no answers is wrong.
    - ``n_solved``: number of tasks with at least one right attempt (pass@k as a count).
    - ``score``: the headline number, equal to ``avg@k``.
    - ``no_answer_rate``: fraction of all attempts that produced no integer answer, so that
      extraction failures can be told apart from wrong answers.
    """
    n_tasks = len(per_task_answers)
    first_right = any_right = majority_right = 0
    mean_sum = 0.0
    n_attempts = n_missing = k = 0
    for reference, answers in per_task_answers:
        right = [answer is not None and answer == reference for answer in answers]
        k = max(k, len(answers))
        n_attempts += len(answers)
        n_missing += sum(answer is None for answer in answers)
        if right:
            first_right += right[0]
            any_right += any(right)
            mean_sum += sum(right) / len(right)
        majority = majority_answer(answers)
        majority_right += majority is not None and majority == reference

    def rate(count: float) -> float:
        return count / n_tasks if n_tasks else 0.0

    return {
        "n_tasks": n_tasks,
        "k": k,
        "pass@1": rate(first_right),
        "avg@k": rate(mean_sum),
        "pass@k": rate(any_right),
        "maj@k": rate(majority_right),
        "n_solved": any_right,
        "score": rate(mean_sum),
        "no_answer_rate": n_missing / n_attempts if n_attempts else 0.0,
    }
