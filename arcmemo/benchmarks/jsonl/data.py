"""The user's own problem files: JSON Lines (one object a line) or Parquet, each record with
``id``, ``problem`` and optionally ``answer``.

Every record is read and checked before a run makes any call: a malformed one is a one-line
error naming the file and the line (JSONL) or row (Parquet). Ids are unique within a file; an
answer is kept as text (a number or a list is written as JSON), since what counts as right
is the checker's to say.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.benchmarks.base import BenchmarkDataError
from arcmemo.benchmarks.parquet import is_parquet, parquet_records

# Bounds on what one record may hold: a problem file is untrusted text.
MAX_LINE_CHARS = 1_000_000
MAX_ID_CHARS = 200


class TextProblem(BaseModel):
    """One problem of a JSONL file (or one free-text problem given through the Python API)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=MAX_ID_CHARS, description="Unique within its file.")
    problem: str = Field(min_length=1, description="The problem as the solver sees it.")
    answer: str | None = Field(
        default=None, description="The reference answer (never shown to the solver)."
    )
    source: str = Field(default="", description="The file it was read from.")


class JsonlDataError(BenchmarkDataError):
    """A problem file that cannot be used; the message names the file and the line."""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def problem_from_record(record: Any, *, path: Path, where: str) -> TextProblem:
    """The problem ``record`` holds (``where``: its line or row), or a located error."""
    place = f"{path}, {where}"
    if not isinstance(record, dict):
        raise JsonlDataError(f"{place}: expected a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - {"id", "problem", "answer"})
    if "id" not in record or "problem" not in record:
        missing = [key for key in ("id", "problem") if key not in record]
        raise JsonlDataError(f"{place}: missing field {', '.join(map(repr, missing))}")
    task_id, problem = record["id"], record["problem"]
    if isinstance(task_id, bool) or not isinstance(task_id, (str, int)):
        raise JsonlDataError(f"{place}: 'id' must be a string or an integer")
    task_id = str(task_id).strip()
    if not task_id or len(task_id) > MAX_ID_CHARS or any(c in task_id for c in "/\\\n\r\0"):
        raise JsonlDataError(
            f"{place}: 'id' must be 1..{MAX_ID_CHARS} characters without slashes or newlines"
        )
    if not isinstance(problem, str) or not problem.strip():
        raise JsonlDataError(f"{place}: 'problem' must be a non-empty string")
    if unknown:
        raise JsonlDataError(
            f"{place}: unknown field {', '.join(map(repr, unknown))} "
            "(a record has id, problem and optionally answer)"
        )
    answer = record.get("answer")
    return TextProblem(
        id=task_id,
        problem=problem,
        answer=None if answer is None else _text(answer),
        source=str(path),
    )


def load_text_problems(path: Path) -> list[TextProblem]:
    """Every problem of ``path`` in file order (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise JsonlDataError(f"{path}: no such file")
    with path.open("rb") as handle:
        head = handle.read(4)
    if is_parquet(path, head):
        records = parquet_records(path, JsonlDataError)
    else:
        records = _jsonl_records(path)
    problems: list[TextProblem] = []
    first: dict[str, str] = {}
    for where, record in records:
        problem = problem_from_record(record, path=path, where=where)
        if problem.id in first:
            raise JsonlDataError(
                f"{path}, {where}: duplicate id {problem.id!r} (first at {first[problem.id]})"
            )
        first[problem.id] = where
        problems.append(problem)
    if not problems:
        raise JsonlDataError(f"{path}: holds no problems")
    return problems


def _jsonl_records(path: Path) -> list[tuple[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise JsonlDataError(f"{path}: not UTF-8 text (byte {error.start})") from None
    records: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            raise JsonlDataError(f"{path}, line {number}: longer than {MAX_LINE_CHARS} characters")
        try:
            records.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as error:
            raise JsonlDataError(f"{path}, line {number}: invalid JSON ({error.msg})") from None
        except RecursionError:
            raise JsonlDataError(f"{path}, line {number}: JSON nested too deeply") from None
    return records
