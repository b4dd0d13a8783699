"""The AIME benchmark class: loading, prompt, answer checking, grading and run metrics.

The pure pieces (loader details, extractor, metrics) are tested in ``test_aime_parts.py``;
these tests cover how the benchmark fits them to the runner's interface.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arcmemo.benchmarks.aime import AimeBenchmark, AimeDataError, AimeProblem, load_problems
from arcmemo.benchmarks.base import TaskSelectionError
from arcmemo.core.records import Attempt, Step, TaskGrade, TaskResult
from arcmemo.run.task_loop import judge_attempts

PROBLEMS = Path(__file__).resolve().parents[2] / "fixtures" / "aime" / "problems.jsonl"


@pytest.fixture
def aime() -> AimeBenchmark:
    return AimeBenchmark()


@pytest.fixture
def divisors() -> AimeProblem:
    return load_problems(PROBLEMS)[1]  # answer 16, stored as "016"


def test_load_from_data_file_with_ids_and_limit(aime: AimeBenchmark) -> None:
    loaded = aime.load(split=None, data=str(PROBLEMS), task_ids=None, limit=None)
    assert [p.id for p in loaded] == ["toy-1", "toy-2", "toy-3"]
    assert [p.answer for p in loaded] == [5, 16, 73]
    picked = aime.load(split=None, data=str(PROBLEMS), task_ids=["toy-3", "toy-1"], limit=1)
    assert [p.id for p in picked] == ["toy-3"]
    with pytest.raises(TaskSelectionError, match="toy-9"):
        aime.load(split=None, data=str(PROBLEMS), task_ids=["toy-9"], limit=None)


def test_split_is_found_in_the_data_dir(
    aime: AimeBenchmark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(PROBLEMS, tmp_path / "aime_2025.jsonl")
    monkeypatch.setenv("ARCMEMO_DATA_DIR", str(tmp_path))
    loaded = aime.load(split="2025", data=None, task_ids=None, limit=None)
    assert len(loaded) == 3 and loaded[0].source.endswith("aime_2025.jsonl")
    with pytest.raises(FileNotFoundError, match="available splits: 2025"):
        aime.load(split="2024", data=None, task_ids=None, limit=None)


def test_split_without_data_dir_and_no_input_are_clear_errors(
    aime: AimeBenchmark, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARCMEMO_DATA_DIR", raising=False)
    with pytest.raises(AimeDataError, match="ARCMEMO_DATA_DIR"):
        aime.load(split="2025", data=None, task_ids=None, limit=None)
    with pytest.raises(AimeDataError, match="--data"):
        aime.load(split=None, data=None, task_ids=None, limit=None)


def test_prompt_asks_for_a_boxed_integer_and_never_shows_the_answer(
    aime: AimeBenchmark, divisors: AimeProblem
) -> None:
    system, user = aime.prompt(divisors, concepts="", previous=None)
    assert "\\boxed{}" in system.content and "0 to 999" in system.content
    assert divisors.problem in user.content
    assert "16" not in system.content + user.content.replace("2^{15}", "")
    assert aime.describe(divisors) == divisors.problem


def test_prompt_puts_techniques_before_the_problem(
    aime: AimeBenchmark, divisors: AimeProblem
) -> None:
    _, techniques, user = aime.prompt(divisors, concepts="- count divisors", previous=None)
    assert "- count divisors" in techniques.content and techniques.cache_breakpoint
    assert divisors.problem in user.content and "count divisors" not in user.content


def test_only_an_unusable_answer_earns_feedback_and_it_names_the_answer_given(
    aime: AimeBenchmark, divisors: AimeProblem
) -> None:
    first = aime.prompt(divisors, concepts="", previous=None)
    wrong = Step(round=0, completion="", **dict(aime.check(divisors, "\\boxed{15}")))
    # A readable answer, right or wrong, is never judged before grading: no feedback.
    assert not aime.wants_feedback(wrong)
    assert aime.prompt(divisors, concepts="", previous=wrong) == first
    unusable = Step(round=0, completion="", **dict(aime.check(divisors, "\\boxed{2^4}")))
    assert aime.wants_feedback(unusable)
    *same, user = aime.prompt(divisors, concepts="", previous=unusable)
    assert same == first[:-1] and user.content.startswith(first[-1].content)
    retry = user.content[len(first[-1].content) :]
    assert retry.startswith("\n### Your previous attempt\n")
    assert "gave the final answer 2^4, which was not accepted" in retry
    assert "16" not in retry
    failed_call = Step(round=1, completion="", error="HTTP 500", error_kind="HTTP 500")
    assert not aime.wants_feedback(failed_call)


@pytest.mark.parametrize(
    ("completion", "raw", "value"),
    [
        ("So the count is \\boxed{16}.", "16", 16),
        ("Hence $\\boxed{$16$}$", "$16$", 16),
        ("First \\boxed{15}; checking again, \\boxed{16}", "16", 16),
        ("\\boxed{016}", "016", 16),
        ("All done.\n\n**Final Answer:** 016", "016", 16),
        ("Therefore the answer is 16.", "16", 16),
        ("\\boxed{15}", "15", 15),
    ],
)
def test_check_records_raw_and_parsed_answers(
    aime: AimeBenchmark, divisors: AimeProblem, completion: str, raw: str, value: int
) -> None:
    step = aime.check(divisors, completion)
    assert step.candidate == raw and step.prediction == value
    assert step.parse_error is None and step.verified is None


@pytest.mark.parametrize(
    ("completion", "raw", "reason"),
    [
        ("I could not finish the computation.", None, "no final answer"),
        ("\\boxed{1000}", "1000", "not an integer 0-999"),
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}", "not an integer 0-999"),
    ],
)
def test_check_no_answer_or_out_of_range(
    aime: AimeBenchmark, divisors: AimeProblem, completion: str, raw: str | None, reason: str
) -> None:
    step = aime.check(divisors, completion)
    assert step.candidate == raw and step.prediction is None
    assert step.parse_error and reason in step.parse_error


def _attempts(*answers: int | None) -> list[Attempt]:
    return [
        Attempt(index=i, steps=[Step(round=0, completion="", prediction=a)])
        for i, a in enumerate(answers)
    ]


def graded(aime: AimeBenchmark, problem: AimeProblem, attempts: list[Attempt]) -> TaskGrade:
    judge_attempts(aime, problem, attempts)
    return aime.grade(problem, attempts)


def test_grade_marks_attempts_and_scores_the_task(
    aime: AimeBenchmark, divisors: AimeProblem
) -> None:
    attempts = _attempts(None, 15, 16, 15)
    grade = graded(aime, divisors, attempts)
    assert [a.correct for a in attempts] == [[False], [False], [True], [False]]
    assert attempts[2].steps[0].correct == [True]
    assert grade.solved is True and grade.score == 0.25
    assert grade.metrics == {"answers": [None, 15, 16, 15], "answer": 16, "majority_correct": False}
    grade = graded(aime, divisors, _attempts(None, None))
    assert grade.solved is False and grade.score == 0.0


def test_summarize_hand_computed(aime: AimeBenchmark) -> None:
    problems = load_problems(PROBLEMS)  # answers 5, 16, 73
    answer_sets = [(5, 5, 6), (16, 15, 16), (None, 37, 73)]
    results = []
    for problem, answers in zip(problems, answer_sets, strict=True):
        attempts = _attempts(*answers)
        grade = graded(aime, problem, attempts)
        results.append(
            TaskResult(
                task_id=problem.id,
                solved=grade.solved,
                score=grade.score,
                attempts=attempts,
                metrics=grade.metrics,
            )
        )
    summary = aime.summarize(results, attempts=3)
    assert summary["n_tasks"] == 3 and summary["n_solved"] == 3
    assert summary["n_samples"] == 3
    assert summary["pass@1"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3) / 3)  # mean over samples
    assert summary["pass@2"] == pytest.approx((1 + 1 + 2 / 3) / 3)  # unbiased, from 3 samples
    assert summary["pass@3"] == 1.0
    assert summary["maj@3"] == pytest.approx(2 / 3)  # 37 and 73 tie; 37 came first
    assert summary["score"] == summary["pass@1"]
    # the run's score is the mean of the task scores
    assert summary["score"] == pytest.approx(sum(r.score for r in results) / 3)
    assert summary["no_answer_rate"] == pytest.approx(1 / 9)
