"""Scores of a run over the user's problems: pass@k (unbiased, every k) and maj@n, each with
its std over problems (:mod:`arcmemo.benchmarks.sampled`); a sample is right when the checker
says so, and answers vote together for maj@n when their text is the same up to spacing and
case."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arcmemo.benchmarks import sampled

# One sample: its answer (None: none found) and whether the checker accepted it.
Sample = tuple[str | None, bool]


def answer_key(answer: str) -> str:
    """Answers that vote together for maj@n: the same text up to spacing and case."""
    return " ".join(answer.split()).lower()


def voting(samples: Sequence[Sample]) -> list[sampled.Sample]:
    """``samples`` with each answer replaced by the key it votes under."""
    return [(None if answer is None else answer_key(answer), right) for answer, right in samples]


class TextMetrics(sampled.SampledMetrics):
    """The part of ``summary.json`` a run over text problems writes."""


def text_metrics(per_task: Sequence[Sequence[Sample]]) -> dict[str, Any]:
    """A run's scores from each problem's samples in order (``score`` is pass@1)."""
    return sampled.sampled_metrics([voting(samples) for samples in per_task])
