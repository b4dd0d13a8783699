"""AIME: Answer extraction."""

from __future__ import annotations

from pathlib import Path

import pytest

from arcmemo.benchmarks.aime.answers import ExtractedAnswer, extract_answer, parse_integer
from arcmemo.benchmarks.aime.data import load_problems
from arcmemo.benchmarks.aime.metrics import grade_answer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "aime"

# ------------------------------------------------------------------------------------------
# Answer extraction


@pytest.mark.parametrize(
    ("text", "raw", "value", "method"),
    [
        ("So the total is $\\boxed{204}$.", "204", 204, "boxed"),
        ("\\boxed{$73$}", "$73$", 73, "boxed"),
        ("\\boxed{\\$16}", "\\$16", 16, "boxed"),
        ("First \\boxed{12}, but recheck: \\boxed{21}.", "21", 21, "boxed"),
        ("\\boxed{016}", "016", 16, "boxed"),
        ("\\boxed{000}", "000", 0, "boxed"),
        ("\\boxed{\\text{16}}", "\\text{16}", 16, "boxed"),
        ("\\boxed{{16}}", "{16}", 16, "boxed"),
        ("\\boxed{\\textbf{073}}", "\\textbf{073}", 73, "boxed"),
        ("\\boxed {  42 }", "42", 42, "boxed"),
        ("\\fbox{42}", "42", 42, "boxed"),
        ("$\\boxed 42$", "42", 42, "boxed"),
        ("\\boxed{30^\\circ}", "30^\\circ", 30, "boxed"),
        ("\\boxed{30^{\\circ}}", "30^{\\circ}", 30, "boxed"),
        ("\\boxed{45°}", "45°", 45, "boxed"),
        ("\\boxed{17.}", "17.", 17, "boxed"),
        ("\\boxed{204 \\text{ minutes}}", "204 \\text{ minutes}", 204, "boxed"),
        ("\\boxed{m+n=73}", "m+n=73", 73, "boxed"),
        ("\\boxed{\\boxed{5}}", "5", 5, "boxed"),
        ("\\boxed{1000}", "1000", None, "boxed"),
        ("\\boxed{1,000}", "1,000", None, "boxed"),
        ("\\boxed{-5}", "-5", None, "boxed"),
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}", None, "boxed"),
        ("\\boxed{3.5}", "3.5", None, "boxed"),
        ("\\boxed{12, 13}", "12, 13", None, "boxed"),
        ("\\boxed{a=5, b=3}", "a=5, b=3", None, "boxed"),
        ("\\boxed{}", "", None, "boxed"),
        # A non-integer last box is not replaced by an earlier integer one.
        ("\\boxed{7} ... \\boxed{\\sqrt{2}}", "\\sqrt{2}", None, "boxed"),
        # A truncated (unclosed) last box is skipped.
        ("\\boxed{16} then \\boxed{1", "16", 16, "boxed"),
        # The box wins over a later phrase.
        ("\\boxed{9}\nFinal answer: 10", "9", 9, "boxed"),
        ("Final answer: 016", "016", 16, "phrase"),
        ("**Final Answer:** 73", "73", 73, "phrase"),
        ("**Final Answer**\n\n73", "73", 73, "phrase"),
        ("The final answer is $\\mathbf{204}$.", "\\mathbf{204}", 204, "phrase"),
        ("Thus the answer is 73.", "73", 73, "phrase"),
        ("the answer is \\(73\\).", "\\(73\\)", 73, "phrase"),
        ("Answer: 42", "42", 42, "phrase"),
        ("**Answer:** **42**", "42", 42, "phrase"),
        ("the answer is 12. Wait. The answer is 21, done", "21", 21, "phrase"),
        ("The answer is that we count twice. Answer: 8", "8", 8, "phrase"),
        ("so the answer is 1,000.", "1,000", None, "phrase"),
        ("the answer is -3", "-3", None, "phrase"),
        ("There are 12 cases and 30 ways in total.", None, None, "none"),
        ("", None, None, "none"),
        ("I could not answer this.", None, None, "none"),
    ],
)
def test_extract_answer(text: str, raw: str | None, value: int | None, method: str) -> None:
    assert extract_answer(text) == ExtractedAnswer(raw=raw, value=value, method=method)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("1,000", 1000),
        ("1{,}000", 1000),
        ("1\\,000", 1000),
        ("12,345", 12345),
        ("-5", -5),
        ("- 5", -5),
        ("+16", 16),
        ("16.0", 16),
        ("x = 5", 5),
        ("50\\%", 50),
        ("\\left(7\\right)", None),
        ("\\displaystyle 7", 7),
        ("3x", None),
        ("16 17", None),
        ("1,2", None),
        ("2^{10}", None),
    ],
)
def test_parse_integer(raw: str, value: int | None) -> None:
    assert parse_integer(raw) == value


def test_grade_answer() -> None:
    assert grade_answer(extract_answer("\\boxed{016}"), 16).correct
    wrong = grade_answer(extract_answer("\\boxed{15}"), 16)
    assert (wrong.answer, wrong.correct) == (15, False)
    missing = grade_answer(extract_answer("no idea"), 0)
    assert (missing.answer, missing.correct) == (None, False)


def test_a_year_of_answers_survives_boxing_and_loading() -> None:
    # 30 problems in the layout of a year file (answers from 0 to 841, some under 10 and
    # under 100, so leading zeros matter)
    problems = load_problems(FIXTURES / "aime_2099.jsonl")
    assert len(problems) == 30
    for problem in problems:
        for formatted in (f"{problem.answer}", f"{problem.answer:03d}"):
            extracted = extract_answer(f"Therefore $\\boxed{{{formatted}}}$.")
            assert extracted.value == problem.answer, (problem.id, extracted)


def test_a_completion_with_thousands_of_digits_is_no_answer_not_a_crash() -> None:
    extracted = extract_answer("\\boxed{" + "7" * 5000 + "}")
    assert extracted.value is None and extracted.raw is not None
