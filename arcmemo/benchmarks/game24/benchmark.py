"""Game of 24 as a benchmark: ``arcmemo run game24``.

Each task is one puzzle of :mod:`~arcmemo.benchmarks.game24.puzzles` (1,362, in ascending
order of their numbers; ``--limit``, ``--tasks 3-3-8-8`` and ``--order-seed`` pick and
shuffle them; ``--benchmark-arg sample=100`` runs a seeded random sample). The solver writes
an expression after ``Answer:``; the exact checker
(:mod:`~arcmemo.benchmarks.game24.checker`) is the puzzle's verifier, as ARC's train pairs
are: an expression it accepts is verified (the ``train`` write signal confirms it), and a
refused one earns a feedback round that names what was wrong. The solution the puzzle list
holds is never shown: any expression that makes 24 is right.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.benchmarks.base import BENCHMARKS, BenchmarkDataError, select_tasks
from arcmemo.benchmarks.game24.checker import check_expression
from arcmemo.benchmarks.game24.puzzles import PUZZLE_COUNT, TARGET, load, puzzle_id
from arcmemo.benchmarks.jsonl.benchmark import TextBenchmark
from arcmemo.benchmarks.jsonl.checkers import Verdict
from arcmemo.benchmarks.jsonl.data import TextProblem

SPLIT = "all"


class Game24Puzzle(TextProblem):
    """One puzzle: its four numbers (``answer`` holds one solution, never shown)."""

    numbers: tuple[int, ...] = Field(description="The numbers to use, each exactly once.")


def puzzle(numbers: tuple[int, ...], solution: str | None = None) -> Game24Puzzle:
    """The task of the puzzle ``numbers``."""
    listed = ", ".join(map(str, numbers))
    return Game24Puzzle(
        id=puzzle_id(numbers),
        problem=f"Use the numbers {listed} to make {TARGET}.",
        answer=solution,
        numbers=numbers,
    )


class Game24Options(BaseModel):
    """Options of the ``game24`` benchmark (``--benchmark-arg sample=100``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sample: int | None = Field(
        default=None,
        ge=1,
        le=PUZZLE_COUNT,
        description="Run a random sample of this many puzzles (drawn with seed, kept in the "
        "list's order) instead of all of them.",
    )
    seed: int = Field(default=0, description="The seed of the sample.")


@BENCHMARKS.register("game24", options=Game24Options)
class Game24Benchmark(TextBenchmark):
    """Game of 24: four numbers from 1 to 13, each used once with + - * / to make 24."""

    def __init__(self, options: Game24Options | None = None, **kwargs: Any) -> None:
        super().__init__(options or Game24Options(), **kwargs)

    domain = "game24"
    templates = ("game24/system", "game24/concepts", "game24/solve", "game24/retry")
    task_noun = "puzzles"
    scores_name = "Game of 24 scores"
    default_split = SPLIT
    needs_task_choice = False

    def load(
        self,
        *,
        split: str | None,
        data: str | None,
        task_ids: Sequence[str] | None,
        limit: int | None,
    ) -> list[TextProblem]:
        if data:
            raise BenchmarkDataError("game24 has its own puzzles: leave out --data")
        if split not in (None, SPLIT):
            raise BenchmarkDataError(f"game24 has one split, {SPLIT!r} (got {split!r})")
        puzzles: list[TextProblem] = [puzzle(numbers, solution) for numbers, solution in load()]
        assert isinstance(self.options, Game24Options)
        if self.options.sample is not None:
            drawn = random.Random(self.options.seed).sample(
                range(len(puzzles)), self.options.sample
            )
            puzzles = [puzzles[index] for index in sorted(drawn)]
        return select_tasks(puzzles, task_ids, limit)

    def find_tasks(self, task_ids: Sequence[str]) -> list[TextProblem]:
        return self.load(split=None, data=None, task_ids=task_ids, limit=None)

    def solve_variables(self, task: TextProblem) -> dict[str, Any]:
        return {"numbers": _numbers(task), "target": TARGET}

    def verdict(self, task: TextProblem, answer: str) -> Verdict:
        return check_expression(_numbers(task), answer)

    def task_content(self, task: TextProblem) -> Any:
        # The puzzle is its numbers: the stored solution is one of many and not the task.
        return {"id": task.id, "numbers": list(_numbers(task))}

    @classmethod
    def split_help(cls) -> str:
        return f"{SPLIT}: the 1,362 puzzles of four numbers 1..13 that make {TARGET}"


def _numbers(task: TextProblem) -> tuple[int, ...]:
    if not isinstance(task, Game24Puzzle):
        raise TypeError(f"game24 checks its own puzzles, not {type(task).__name__}")
    return task.numbers
