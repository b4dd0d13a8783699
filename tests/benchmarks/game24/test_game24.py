"""``arcmemo run game24``: the shipped puzzles are our search's, the exact checker accepts a
solution and names what is wrong with any other, and a scripted run scores as designed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arcmemo.benchmarks.game24.benchmark import Game24Benchmark, puzzle
from arcmemo.benchmarks.game24.checker import MAX_EXPRESSION_CHARS, check_expression
from arcmemo.benchmarks.game24.puzzles import PUZZLE_COUNT, generate, load, render

ROOT = Path(__file__).resolve().parents[3]


def refusal(numbers: tuple[int, ...], answer: str) -> str:
    verdict = check_expression(numbers, answer)
    assert not verdict.correct, answer
    return verdict.feedback


def test_a_correct_expression_is_accepted_in_exact_arithmetic() -> None:
    # 8 / (3 - 8/3) is 24 only with fractions: in floats it is 23.999999999999996.
    for answer in ("8 / (3 - 8 / 3)", "8/(3-8/3) = 24", "24 = 8 ÷ (3 − 8 ÷ 3)",
                   "\\left(8 \\div (3 - 8 \\div 3)\\right)"):  # fmt: skip
        assert check_expression((3, 3, 8, 8), answer).correct, answer
    assert check_expression((1, 4, 6, 13), "(13 - 1) * (6 - 4)").correct


def test_reuse_skip_division_by_zero_and_other_operators_are_refused_by_name() -> None:
    assert refusal((3, 3, 8, 8), "8 * 3 * (8 / 8)") == (
        "8 is used 3 times, but the puzzle has it twice"
    )
    assert refusal((1, 2, 3, 4), "(1 + 2 + 3) * 4 * 1") == (
        "1 is used 2 times, but the puzzle has it once"
    )
    assert refusal((1, 2, 3, 4), "2 * 3 * 4") == (
        "the expression does not use 1: use each number exactly once"
    )
    assert refusal((3, 3, 8, 8), "3 / (8 - 8) * 3") == "the expression divides by zero"
    assert refusal((2, 3, 4, 5), "2 ** 3 * (5 - 4) * 3") == (
        "the operator ** (power) is not allowed: use only + - * /"
    )
    assert "// (floor division)" in refusal((2, 3, 4, 5), "(5 // 2) * 3 * 4")
    assert "sign" in refusal((1, 2, 3, 4), "-1 + 1 * 2 * 3 * 4")
    assert refusal((1, 2, 3, 4), "1 + 2 + 3 + 4") == "the expression equals 10, not 24"
    assert (
        refusal((1, 2, 3, 4), "1 / 2 + 3 + 4") == "the expression equals 15/2 (a fraction), not 24"
    )
    assert refusal((1, 2, 3, 4), "12 * 2") == "12 is not among the puzzle's numbers"


def test_hostile_text_is_refused_without_running_it() -> None:
    for answer in ('__import__("os").system("true")', "(lambda: 24)()", "24.0", "2e1 + 4",
                   "0x18", "1 2 3 4", "(1 + 2"):  # fmt: skip
        assert refusal((1, 2, 3, 4), answer)
    long = "(" * 150 + "1" + ")" * 150
    assert "longer than" in refusal((1, 2, 3, 4), long)
    nested = "1*(" * 35 + "1" + ")" * 35
    assert len(nested) <= MAX_EXPRESSION_CHARS
    assert "nested more than" in refusal((1, 1, 1, 1), nested)
    assert refusal((1, 2, 3, 4), "")


def test_the_shipped_puzzles_are_in_order_and_each_listed_solution_checks() -> None:
    puzzles = load()
    assert len(puzzles) == PUZZLE_COUNT == 1362
    numbers = [n for n, _ in puzzles]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert numbers[0] == (1, 1, 1, 8) and (3, 3, 8, 8) in numbers
    assert (1, 1, 1, 1) not in numbers  # cannot make 24
    assert all(check_expression(n, solution).correct for n, solution in puzzles)


@pytest.mark.slow
def test_the_shipped_file_is_what_our_search_writes() -> None:
    text = (ROOT / "arcmemo" / "benchmarks" / "game24" / "puzzles.txt").read_text()
    assert render(generate()) == text


def test_the_prompt_shows_the_numbers_never_the_stored_solution() -> None:
    benchmark = Game24Benchmark()
    (task,) = benchmark.load(split=None, data=None, task_ids=["3-3-8-8"], limit=None)
    text = "\n".join(m.content for m in benchmark.prompt(task, concepts="", previous=None))
    assert "Numbers: 3, 3, 8, 8" in text and task.answer and task.answer not in text
    assert benchmark.describe(puzzle((3, 3, 8, 8))) == "Use the numbers 3, 3, 8, 8 to make 24."


@pytest.mark.slow
def test_a_scripted_run_scores_as_designed_with_a_feedback_round(tmp_path: Path) -> None:
    # The first five puzzles: 1 1 1 8, 1 1 1 11, 1 1 1 12, 1 1 1 13, 1 1 2 6.
    script = tmp_path / "s.json"
    script.write_text(json.dumps({
        # 1 1 1 8: a reused 1 refused, then right after the feedback round names it.
        "re:(?s)Numbers: 1, 1, 1, 8\\b.*1 is used 4 times": "Answer: (1 + 1 + 1) * 8",
        "Numbers: 1, 1, 1, 8\n": "Answer: 8 * (1 + 1 + 1 + 1) - 8",
        "Numbers: 1, 1, 1, 11": "(1 + 1) * (11 + 1)",  # last line, no Answer: read
        "Numbers: 1, 1, 1, 12": "Answer: 12 * 2",  # not the puzzle's numbers
        "Numbers: 1, 1, 1, 13": "Answer: 13 / (1 - 1) + 1",  # divides by zero
        "Numbers: 1, 1, 2, 6": "Answer: (1 + 1) * 2 * 6",
    }), encoding="utf-8")  # fmt: skip
    common = [sys.executable, "-m", "arcmemo", "run", "game24", "--limit", "5", "--model",
              f"scripted:{script}"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*args: str) -> dict[str, object]:
        done = subprocess.run([*common, *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120, env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return dict(json.loads((tmp_path / args[-1] / "summary.json").read_text()))

    plain = run("--out", "plain")
    assert plain["n_tasks"] == 5 and plain["pass@1"] == pytest.approx(2 / 5)
    results = [json.loads(line) for line in (tmp_path / "plain" / "results.jsonl").open()]
    errors = {r["task_id"]: r["attempts"][0]["steps"][-1]["checks"][0]["error"] for r in results}
    assert errors["1-1-1-12"] == "2 is not among the puzzle's numbers"
    assert errors["1-1-1-13"] == "the expression divides by zero"
    rounds = run("--feedback-rounds", "1", "--out", "rounds")
    assert rounds["pass@1"] == pytest.approx(3 / 5)
    table = subprocess.run(
        [sys.executable, "-m", "arcmemo", "table", "plain", "rounds", "--label", "no rounds",
         "--label", "one round", "--paired"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert table.returncode == 0, table.stderr
    rows = [line for line in table.stdout.splitlines() if "round" in line and "|" in line]
    assert "40.00" in rows[0] and "60.00" in rows[1], table.stdout
    assert "Game of 24 scores in percent over 5 puzzles" in table.stdout
    assert "per-puzzle pass@1" in table.stdout
