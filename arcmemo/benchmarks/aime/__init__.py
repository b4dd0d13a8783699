"""AIME: integer answers 0..999 extracted from the completion; no visible examples.

Modules: :mod:`~arcmemo.benchmarks.aime.data` (problem files),
:mod:`~arcmemo.benchmarks.aime.answers` (answer extraction),
:mod:`~arcmemo.benchmarks.aime.metrics` (pass@k, maj@k; their table is
:mod:`arcmemo.benchmarks.sampled`'s),
:mod:`~arcmemo.benchmarks.aime.report` (answers in the report) and
:mod:`~arcmemo.benchmarks.aime.benchmark` (the registered benchmark).
"""

from arcmemo.benchmarks.aime.answers import ExtractedAnswer, extract_answer
from arcmemo.benchmarks.aime.benchmark import AimeBenchmark
from arcmemo.benchmarks.aime.data import AimeDataError, AimeProblem, load_problems, split_path
from arcmemo.benchmarks.aime.metrics import aime_metrics

__all__ = [
    "AimeBenchmark",
    "AimeDataError",
    "AimeProblem",
    "ExtractedAnswer",
    "aime_metrics",
    "extract_answer",
    "load_problems",
    "split_path",
]
