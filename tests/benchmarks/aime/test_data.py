"""AIME: Loading problem files and looking up splits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from arcmemo.benchmarks.aime.data import AimeDataError, AimeProblem, load_problems, split_path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "aime"

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


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


ROWS = [
    {"id": "a", "problem": "p1", "answer": 1},
    {"id": "b", "problem": "p2", "answer": "002"},
]


def test_json_lines_in_a_json_file_as_dataset_to_json_writes_them(tmp_path: Path) -> None:
    problems = load_problems(_write_jsonl(tmp_path / "data.json", ROWS))
    assert [(p.id, p.answer) for p in problems] == [("a", 1), ("b", 2)]


def test_a_folder_of_files_loads_in_name_order_and_catches_duplicates_across_files(
    tmp_path: Path,
) -> None:
    _write_jsonl(tmp_path / "b.jsonl", ROWS[1:])
    (tmp_path / "a.json").write_text(json.dumps(ROWS[:1]))
    (tmp_path / "notes.md").write_text("ignored")
    assert [p.id for p in load_problems(tmp_path)] == ["a", "b"]
    _write_jsonl(tmp_path / "c.jsonl", ROWS[:1])
    with pytest.raises(
        AimeDataError, match=r"c\.jsonl, line 1: duplicate id 'a' \(first at .*a\.json"
    ):
        load_problems(tmp_path)


def test_parquet_is_read_or_names_the_missing_package(tmp_path: Path) -> None:
    path = tmp_path / "data.parquet"
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ModuleNotFoundError:
        path.write_bytes(b"PAR1" + b"\0" * 16)
        with pytest.raises(AimeDataError, match="needs the pyarrow package: pip install pyarrow"):
            load_problems(path)
        return
    # A Parquet column has one type: the answers as text, as the datasets on the Hub keep them.
    rows = [{**row, "answer": str(row["answer"])} for row in ROWS]
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert [p.id for p in load_problems(path)] == ["a", "b"]


def test_undecodable_deep_or_huge_input_is_a_one_line_error(tmp_path: Path) -> None:
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(AimeDataError, match=r"not UTF-8 text \(byte 0\)"):
        load_problems(binary)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(AimeDataError, match="nested too deeply"):
        load_problems(deep)
    huge = _write_jsonl(
        tmp_path / "huge.jsonl", [{"id": "x", "problem": "p", "answer": "9" * 5000}]
    )
    with pytest.raises(AimeDataError, match=r"must be an integer 0\.\.999"):
        load_problems(huge)
