"""``arcmemo run jsonl``: the user's own problems, scored by a checker, with the scripted
provider; a user checker is contained like model code; a malformed line is one error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arcmemo.benchmarks.jsonl.checkers import (
    check_choice,
    check_numeric,
    extract_answer,
    parse_checker,
)
from arcmemo.benchmarks.jsonl.data import JsonlDataError, load_text_problems
from arcmemo.benchmarks.jsonl.metrics import text_metrics

ROOT = Path(__file__).resolve().parents[3]
PROBLEMS = [
    {"id": "a", "problem": "What is 2+3?", "answer": 5},
    {"id": "b", "problem": "What is 10/4?", "answer": "2.5"},
    {"id": "c", "problem": "What is 7*6?", "answer": 42},
]


def write_problems(path: Path) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in PROBLEMS), encoding="utf-8")
    return path


def arcmemo(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arcmemo", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )  # fmt: skip


def test_answers_are_read_from_the_end_of_a_response() -> None:
    assert extract_answer("work\nAnswer: 42\nthanks") == "42"
    assert extract_answer("so \\boxed{\\frac{1}{2}} done") == "\\frac{1}{2}"
    assert extract_answer("one\ntwo\n") == "two"
    assert check_numeric("5/2", "2.5").correct and check_numeric("1,000", "1000").correct
    assert not check_numeric("seven", "7").correct
    assert check_choice("(B)", "b").correct and not check_choice("C.", "B").correct


def test_metrics_pass_at_k_and_majority() -> None:
    values = text_metrics([[("5", True), ("4", False)], [("1", False), ("1", False)]])
    assert values["pass@1"] == 0.25 and values["pass@2"] == 0.5
    assert values["maj@2"] == 0.5  # a tie goes to the first answer: "5", right


def test_a_malformed_line_is_one_error_naming_file_and_line(tmp_path: Path) -> None:
    data = tmp_path / "p.jsonl"
    data.write_text('{"id": "a", "problem": "x", "answer": 1}\n{"id": "b"\n', encoding="utf-8")
    with pytest.raises(JsonlDataError, match=r"p\.jsonl, line 2: invalid JSON"):
        load_text_problems(data)
    data.write_text('{"id": "a", "problem": "x", "answr": 1}\n', encoding="utf-8")
    with pytest.raises(JsonlDataError, match=r"line 1: unknown field 'answr'"):
        load_text_problems(data)
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["never asked"]), encoding="utf-8")
    data.write_text('{"id": "a", "problem": "x", "answer": 1}\nnot json\n', encoding="utf-8")
    done = arcmemo("run", "jsonl", "--data", str(data), "--model", f"scripted:{script}",
                   "--out", "run", cwd=tmp_path)  # fmt: skip
    assert done.returncode != 0
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("p.jsonl, line 2: invalid JSON (Expecting value)")
    )
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_a_numeric_run_scores_as_designed_with_a_feedback_round(tmp_path: Path) -> None:
    data = write_problems(tmp_path / "p.jsonl")
    script = tmp_path / "s.json"
    script.write_text(json.dumps({
        # c: wrong first, right after the checker's feedback round; b: a fraction.
        "re:(?s)What is 7\\*6.*not accepted": "Answer: 42",
        "What is 7*6": "Answer: 41",
        "What is 2+3": "Answer: 5",
        "What is 10/4": "It is 5/2.\nAnswer: 5/2",
    }), encoding="utf-8")  # fmt: skip
    common = ["run", "jsonl", "--data", str(data), "--benchmark-arg", "checker=numeric",
              "--model", f"scripted:{script}"]  # fmt: skip
    first = arcmemo(*common, "--out", "plain", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    summary = json.loads((tmp_path / "plain" / "summary.json").read_text())
    assert summary["pass@1"] == pytest.approx(2 / 3)
    again = arcmemo(*common, "--feedback-rounds", "1", "--out", "rounds", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    summary = json.loads((tmp_path / "rounds" / "summary.json").read_text())
    assert summary["pass@1"] == 1.0


@pytest.mark.slow
def test_a_python_checker_cannot_read_the_callers_files_or_environment(tmp_path: Path) -> None:
    data = write_problems(tmp_path / "p.jsonl")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET", encoding="utf-8")
    (tmp_path / "nosy.py").write_text(
        "import os\n"
        "def check(answer, reference, problem):\n"
        "    try:\n"
        f"        seen = open({str(secret)!r}).read()\n"
        "    except BaseException as error:\n"
        "        seen = type(error).__name__\n"
        "    return {'correct': answer == reference,\n"
        "            'feedback': seen + ' ' + str(os.environ.get('MY_SECRET'))}\n",
        encoding="utf-8",
    )
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"*": "Answer: 0"}), encoding="utf-8")
    done = arcmemo("run", "jsonl", "--data", str(data), "--benchmark-arg",
                   f"checker=python:{tmp_path / 'nosy.py'}:check", "--model",
                   f"scripted:{script}", "--sandbox", "bwrap", "--out", "run", cwd=tmp_path,
                   env={"MY_SECRET": "hunter2"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = (tmp_path / "run" / "results.jsonl").read_text()
    assert "TOPSECRET" not in results and "hunter2" not in results
    assert "None" in results  # the checker ran, and saw no MY_SECRET


def test_checker_specs_are_checked() -> None:
    assert parse_checker("regex:\\d+").pattern == "\\d+"
    with pytest.raises(ValueError, match="unknown checker"):
        parse_checker("fuzzy")
    with pytest.raises(ValueError, match="not a regular expression"):
        parse_checker("regex:(")
