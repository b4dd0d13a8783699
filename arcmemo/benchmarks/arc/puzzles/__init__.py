"""Helper puzzles: a generator program per concept, kept only when the concept is load-bearing.

:mod:`~arcmemo.benchmarks.arc.puzzles.generate` asks a model for a generator module per
concept, :mod:`~arcmemo.benchmarks.arc.puzzles.verify` runs it in the sandbox through a
trusted harness and checks the puzzles, :mod:`~arcmemo.benchmarks.arc.puzzles.store` writes
them as ARC task folders and :mod:`~arcmemo.benchmarks.arc.puzzles.recheck` re-checks a
folder.
"""

from arcmemo.benchmarks.arc.puzzles.verify import (
    CheckResult,
    PuzzleConfig,
    VerificationReport,
    VerifiedPuzzle,
    verify_module,
)

__all__ = [
    "CheckResult",
    "PuzzleConfig",
    "VerificationReport",
    "VerifiedPuzzle",
    "verify_module",
]
