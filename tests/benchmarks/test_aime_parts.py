"""Tests for the AIME loader, answer extraction and metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from arcmemo.benchmarks.aime_parts import (
    AimeDataError,
    AimeProblem,
    ExtractedAnswer,
    aime_metrics,
    extract_answer,
    grade_answer,
    load_problems,
    majority_answer,
    parse_integer,
    split_path,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "aime"
REAL_DATA = Path("/work/shared/data/aime")


# ------------------------------------------------------------------------------------------
# Loading


def test_load_jsonl_standard_fields() -> None:
    problems = load_problems(FIXTURES / "problems.jsonl")
    assert [p.id for p in problems] == ["toy-1", "toy-2", "toy-3"]
    assert [p.answer for p in problems] == [5, 16, 73]  # "016" read as 16
    assert problems[0].problem == "Find $2 + 3$."
    assert (problems[0].year, problems[0].contest, problems[0].number) == (2099, "I", 1)
    assert problems[2].contest == "II"
    assert all(p.source == str(FIXTURES / "problems.jsonl") for p in problems)


def test_load_json_with_alias_fields() -> None:
    problems = load_problems(FIXTURES / "aliases.json")
    assert [p.id for p in problems] == ["A-1", "7", "A-3", "A-4"]
    assert [p.problem for p in problems] == [
        "Find $1 + 1$.",
        "Find $3 \\cdot 3$.",
        "Find $4!$.",
        "Find $0 \\cdot 5$.",
    ]
    # Answer, final_answer, an integer-only solution, and answer preferred over a worked solution
    assert [p.answer for p in problems] == [2, 9, 24, 0]
    assert (problems[0].year, problems[0].contest, problems[0].number) == (2099, "I", 1)
    assert problems[1].year is None


def test_missing_ids_are_derived_from_file_stem_and_position() -> None:
    problems = load_problems(FIXTURES / "no_ids.json")
    assert [p.id for p in problems] == ["no_ids-1", "no_ids-2"]
    assert [p.answer for p in problems] == [13, 998]


def test_blank_lines_are_skipped_but_line_numbers_kept(tmp_path: Path) -> None:
    path = tmp_path / "gaps.jsonl"
    path.write_text('\n{"id": "a", "problem": "p", "answer": 1}\n\n{"id": "b", "problem": "q"}\n')
    with pytest.raises(AimeDataError, match=r"line 4: missing the answer field"):
        load_problems(path)


def test_missing_answer_names_file_line_field_and_aliases() -> None:
    path = FIXTURES / "missing_answer.jsonl"
    with pytest.raises(AimeDataError) as caught:
        load_problems(path)
    message = str(caught.value)
    assert str(path) in message
    assert "line 2" in message
    assert "missing the answer field" in message
    assert "answer, Answer, final_answer, solution" in message
    assert "fields present: id, problem" in message


def test_missing_problem_names_field_and_aliases(tmp_path: Path) -> None:
    path = tmp_path / "noproblem.json"
    records = [{"id": "a", "problem": "p", "answer": 1}, {"id": "b", "answer": 2}]
    path.write_text(json.dumps(records))
    with pytest.raises(AimeDataError) as caught:
        load_problems(path)
    message = str(caught.value)
    assert f"{path}, item [1]" in message
    assert "missing the problem field" in message
    assert "problem, question, Problem, Question, prompt" in message


def test_malformed_json_line_names_the_line() -> None:
    path = FIXTURES / "malformed_line.jsonl"
    with pytest.raises(AimeDataError, match=r"malformed_line\.jsonl, line 3: invalid JSON"):
        load_problems(path)


def test_worked_solution_is_not_taken_as_answer() -> None:
    with pytest.raises(AimeDataError) as caught:
        load_problems(FIXTURES / "solution_text.jsonl")
    message = str(caught.value)
    assert "line 1" in message
    assert "field 'solution' must be an integer 0..999" in message
    assert "worked solution" in message
    assert "answer, Answer, final_answer" in message


def test_out_of_range_answer_names_json_index() -> None:
    with pytest.raises(AimeDataError) as caught:
        load_problems(FIXTURES / "out_of_range.json")
    message = str(caught.value)
    assert "item [1]" in message
    assert "field 'answer' is 1000, outside the AIME range 0..999" in message


@pytest.mark.parametrize("bad", ["3.5", "abc", 3.5, True, "", [1], "\\boxed{3}"])
def test_non_integer_answer_is_an_error(tmp_path: Path, bad: object) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "x", "problem": "p", "answer": bad}) + "\n")
    with pytest.raises(AimeDataError, match=r"bad\.jsonl, line 1: field 'answer' must be an"):
        load_problems(path)


def test_negative_answer_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "neg.jsonl"
    path.write_text(json.dumps({"id": "x", "problem": "p", "answer": -1}) + "\n")
    with pytest.raises(AimeDataError, match="outside the AIME range"):
        load_problems(path)


def test_duplicate_ids_are_an_error() -> None:
    with pytest.raises(AimeDataError, match=r"line 2: duplicate id 'd-1' \(first at line 1\)"):
        load_problems(FIXTURES / "duplicate_ids.jsonl")


def test_json_object_without_problems_list_is_an_error() -> None:
    with pytest.raises(AimeDataError, match="'problems' list, got an object"):
        load_problems(FIXTURES / "not_a_list.json")


def test_record_that_is_not_an_object_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "list.jsonl"
    path.write_text("[1, 2]\n")
    with pytest.raises(AimeDataError, match="line 1: expected a JSON object, got a list"):
        load_problems(path)


def test_empty_file_and_unknown_suffix_and_missing_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(AimeDataError, match="contains no problems"):
        load_problems(empty)
    csv = tmp_path / "p.csv"
    csv.write_text("id,problem,answer\n")
    with pytest.raises(AimeDataError, match=r"unsupported file type '\.csv'"):
        load_problems(csv)
    with pytest.raises(FileNotFoundError, match=r"nope\.jsonl"):
        load_problems(tmp_path / "nope.jsonl")


def test_problem_model_rejects_out_of_range_answer() -> None:
    with pytest.raises(ValidationError):
        AimeProblem(id="a", problem="p", answer=1000, source="f")


# ------------------------------------------------------------------------------------------
# Split lookup


def test_split_path_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "aime_2024.jsonl").write_text("")
    monkeypatch.setenv("ARCMEMO_DATA_DIR", str(tmp_path))
    assert split_path("2024") == tmp_path / "aime_2024.jsonl"


def test_split_path_argument_wins_over_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "aime_2025.jsonl").write_text("")
    monkeypatch.setenv("ARCMEMO_DATA_DIR", str(tmp_path / "elsewhere"))
    assert split_path("2025", data_dir=tmp_path) == tmp_path / "aime_2025.jsonl"


def test_split_path_unset_env_names_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARCMEMO_DATA_DIR", raising=False)
    with pytest.raises(AimeDataError, match=r"set ARCMEMO_DATA_DIR .*aime_2024\.jsonl"):
        split_path("2024")


def test_split_path_missing_file_names_file_env_and_available(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "aime_2022.jsonl").write_text("")
    (tmp_path / "aime_2023.jsonl").write_text("")
    monkeypatch.setenv("ARCMEMO_DATA_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError) as caught:
        split_path("2024")
    message = str(caught.value)
    assert str(tmp_path / "aime_2024.jsonl") in message
    assert f"ARCMEMO_DATA_DIR={tmp_path}" in message
    assert "available splits: 2022, 2023" in message


def test_split_path_missing_folder_and_bad_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARCMEMO_DATA_DIR", str(tmp_path / "absent"))
    with pytest.raises(FileNotFoundError, match=r"absent .*ARCMEMO_DATA_DIR.* does not exist"):
        split_path("2024")
    with pytest.raises(AimeDataError, match="bad AIME split name"):
        split_path("../2024", data_dir=tmp_path)


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


@pytest.mark.skipif(not REAL_DATA.is_dir(), reason="real AIME data not present")
def test_real_answers_survive_boxing_and_loading() -> None:
    files = sorted(REAL_DATA.glob("aime_*.jsonl"))
    assert files
    for path in files:
        problems = load_problems(path)
        assert len(problems) == 30
        for problem in problems:
            for formatted in (f"{problem.answer}", f"{problem.answer:03d}"):
                extracted = extract_answer(f"Therefore $\\boxed{{{formatted}}}$.")
                assert extracted.value == problem.answer, (problem.id, extracted)


# ------------------------------------------------------------------------------------------
# Metrics


def test_majority_answer_ties_go_to_first_occurrence() -> None:
    assert majority_answer([5, 7, 7, 5]) == 5
    assert majority_answer([7, 5, 5, 7]) == 7
    assert majority_answer([None, 3, 4, 4]) == 4
    assert majority_answer([None, None]) is None
    assert majority_answer([]) is None


def test_aime_metrics_hand_computed() -> None:
    per_task = [
        (5, [5, 5, 1]),  # first right; 2/3 right; majority 5 right
        (7, [1, 7, 7]),  # first wrong; 2/3; majority 7 right
        (9, [2, 9, 2]),  # first wrong; 1/3; majority 2 wrong
        (4, [None, None, None]),  # no answers: wrong everywhere
        (3, [3, 8, 8]),  # first right; 1/3; majority 8 wrong
        (0, [0, None, 6]),  # first right; 1/3; tie 0 vs 6 -> 0 (first) right
    ]
    metrics = aime_metrics(per_task)
    assert metrics["n_tasks"] == 6
    assert metrics["k"] == 3
    assert metrics["pass@1"] == pytest.approx(3 / 6)
    assert metrics["avg@k"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 0 + 1 / 3 + 1 / 3) / 6)
    assert metrics["score"] == metrics["avg@k"]
    assert metrics["pass@k"] == pytest.approx(5 / 6)
    assert metrics["n_solved"] == 5
    assert metrics["maj@k"] == pytest.approx(3 / 6)
    assert metrics["no_answer_rate"] == pytest.approx(4 / 18)


def test_aime_metrics_tie_broken_by_first_occurrence() -> None:
    assert aime_metrics([(6, [6, 2, 2, 6])])["maj@k"] == 1.0
    assert aime_metrics([(6, [2, 6, 6, 2])])["maj@k"] == 0.0
    # None answers do not vote: 6 wins over the three Nones.
    assert aime_metrics([(6, [None, None, None, 6])])["maj@k"] == 1.0


def test_aime_metrics_single_attempt_and_empty() -> None:
    metrics = aime_metrics([(1, [1]), (2, [3])])
    assert (metrics["pass@1"], metrics["avg@k"], metrics["pass@k"], metrics["maj@k"]) == (
        0.5,
        0.5,
        0.5,
        0.5,
    )
    assert metrics["k"] == 1
    empty = aime_metrics([])
    assert empty["n_tasks"] == 0
    assert empty["score"] == 0.0
    assert empty["n_solved"] == 0


def test_aime_metrics_uneven_attempts_weigh_tasks_equally() -> None:
    metrics = aime_metrics([(1, [1]), (2, [2, 0, 0, 0]), (3, [])])
    assert metrics["k"] == 4
    assert metrics["avg@k"] == pytest.approx((1 + 1 / 4 + 0) / 3)
    assert metrics["pass@k"] == pytest.approx(2 / 3)
    assert metrics["pass@1"] == pytest.approx(2 / 3)
    assert metrics["maj@k"] == pytest.approx(1 / 3)
