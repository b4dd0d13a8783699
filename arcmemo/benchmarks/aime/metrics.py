"""AIME grading (exact integer match) and run metrics: pass@1 (mean over samples), unbiased
pass@k for every k, maj@n, each with its std over problems (computed by
:mod:`arcmemo.benchmarks.sampled`, an answer voting as itself)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.benchmarks import sampled
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
    top = sampled.majority(answers)
    return None if top is None else int(top)  # type: ignore[call-overload]


def samples(reference: int | None, answers: Sequence[int | None]) -> list[sampled.Sample]:
    """Each answer as a sample: it votes as itself and is right when it is the reference."""
    return [(answer, answer is not None and answer == reference) for answer in answers]


def problem_metrics(reference: int, answers: Sequence[int | None], n: int) -> dict[str, float]:
    """One problem's ``pass@k`` (k = 1..n) and ``maj@n`` from its answers, the samples
    beyond ``len(answers)`` counted as giving no answer (see :mod:`~arcmemo.benchmarks.
    sampled` for the definitions)."""
    return sampled.problem_metrics(samples(reference, answers), n)


class AimeMetrics(sampled.SampledMetrics):
    """The AIME part of ``summary.json`` (:func:`aime_metrics`)."""


def aime_metrics(
    per_task_answers: Sequence[tuple[int, Sequence[int | None]]],
) -> dict[str, Any]:
    """Score an AIME run from ``(reference answer, sample answers in order)`` per problem:
    :func:`arcmemo.benchmarks.sampled.sampled_metrics`' keys (``pass@1`` .. ``pass@n``,
    ``maj@n``, ``score``, ``n_solved``, ``no_answer_rate`` counting samples without an
    integer answer, ``by_metric`` with each metric's std over problems)."""
    return sampled.sampled_metrics([samples(ref, answers) for ref, answers in per_task_answers])
