"""AIME problem files: loading with field aliases and located errors.

Data files
    JSON Lines (one object a line; blank lines skipped) or JSON (a list of objects, or an object
    with a ``problems`` list). Field names accepted, first present wins:

    - id: ``id``, ``ID``, ``problem_id``, ``idx``, ``name``. When absent, the id is
      ``"<file stem>-<n>"`` with ``n`` the 1-based position of the record in the file.
    - problem: ``problem``, ``question``, ``Problem``, ``Question``, ``prompt``.
    - answer: ``answer``, ``Answer``, ``final_answer``, then ``solution`` (only when it holds a
      bare integer; a worked-solution text is reported as such). Integers and integer strings
      (``"016"``) are accepted; anything else, or a value outside 0..999, is an error.
    - optional: ``year``/``Year``, ``contest``/``Part`` (``"I"``/``"II"``),
      ``number``/``Problem Number``.

Splits
    ``split_path("2025")`` is ``$ARCMEMO_DATA_DIR/aime_2025.jsonl``, or, when that variable
    is unset, ``aime/aime_2025.jsonl`` in the user data folder, where
    ``arcmemo data fetch aime --split 2025`` writes it.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.benchmarks.aime.answers import MAX_ANSWER, MIN_ANSWER
from arcmemo.benchmarks.aime.escapes import repair_escapes
from arcmemo.benchmarks.base import BenchmarkDataError
from arcmemo.benchmarks.parquet import is_parquet, parquet_records
from arcmemo.core.resources import user_data_dir

DATA_DIR_ENV = "ARCMEMO_DATA_DIR"

ID_FIELDS = ("id", "ID", "problem_id", "idx", "name")
PROBLEM_FIELDS = ("problem", "question", "Problem", "Question", "prompt")
ANSWER_FIELDS = ("answer", "Answer", "final_answer", "solution")
YEAR_FIELDS = ("year", "Year")
CONTEST_FIELDS = ("contest", "Part")
NUMBER_FIELDS = ("number", "Problem Number")


class AimeProblem(BaseModel):
    """One AIME problem with its integer answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, description="Unique id within its file, e.g. '2025-II-15'.")
    problem: str = Field(min_length=1, description="Problem statement (LaTeX as published).")
    answer: int = Field(ge=MIN_ANSWER, le=MAX_ANSWER, description="The integer answer, 0..999.")
    source: str = Field(description="Path of the file the problem was loaded from.")
    year: int | None = Field(default=None, description="Competition year, when the file gives it.")
    contest: str | None = Field(default=None, description="'I' or 'II', when the file gives it.")
    number: int | None = Field(
        default=None, description="Problem number 1..15, when the file gives it."
    )


class AimeDataError(BenchmarkDataError):
    """A problem file is malformed; the message names the file, the record and the field."""


class AimeDataWarning(UserWarning):
    """Problem text that was repaired, or holds control characters (the message names the
    problems)."""


EscapeDamage = Literal["repair", "refuse"]


def load_problems(
    path: Path,
    *,
    escape_damage: EscapeDamage = "repair",
    warn: Callable[[str], None] | None = None,
) -> list[AimeProblem]:
    """Load AIME problems from a file or a folder of files (see the module docstring).

    A file holds JSON Lines or JSON whatever its suffix (``Dataset.to_json`` writes JSON
    Lines to ``.json``), or Parquet (needs ``pyarrow``). A folder: every ``.jsonl``,
    ``.json`` and ``.parquet`` file in it, in name order. Raises :class:`AimeDataError`
    naming the file, the line (JSONL) or index (JSON) and the field for malformed content,
    missing fields, bad answers, duplicate ids or no problems; ``FileNotFoundError`` when the
    path does not exist.

    Problem text with JSON escape damage (a form feed where ``\\frac`` was meant:
    :mod:`arcmemo.benchmarks.aime.escapes`) is repaired with an :class:`AimeDataWarning`
    naming the problems, or refused with ``escape_damage="refuse"``; other control
    characters are named in a warning (prompts drop them). ``warn`` takes each warning's
    line instead (a run records them as its own warnings).
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(f for f in path.iterdir() if f.suffix.lower() in _DATA_SUFFIXES)
        if not files:
            raise AimeDataError(f"{path}: no .jsonl, .json or .parquet files in this folder")
        records = [(f, where, record) for f in files for where, record in _file_records(f)]
    elif path.is_file():
        records = [(path, where, record) for where, record in _file_records(path)]
    else:
        raise FileNotFoundError(f"AIME data file {path} does not exist")
    if not records:
        raise AimeDataError(f"{path}: contains no problems")

    problems: list[AimeProblem] = []
    first_seen: dict[str, tuple[Path, str]] = {}
    positions: dict[Path, int] = {}
    for source, where, record in records:
        positions[source] = positions.get(source, 0) + 1
        problem = _problem_from_record(source, where, positions[source], record)
        if problem.id in first_seen:
            first_source, first_where = first_seen[problem.id]
            first = first_where if first_source == source else f"{first_source}, {first_where}"
            raise AimeDataError(
                f"{source}, {where}: duplicate id {problem.id!r} (first at {first})"
            )
        first_seen[problem.id] = (source, where)
        problems.append(problem)
    return _checked_text(path, problems, escape_damage, warn)


def _python_warning(line: str) -> None:
    # stacklevel: the caller of load_problems.
    warnings.warn(AimeDataWarning(line), stacklevel=4)


def _checked_text(
    path: Path,
    problems: list[AimeProblem],
    escape_damage: EscapeDamage,
    warn: Callable[[str], None] | None,
) -> list[AimeProblem]:
    """``problems`` with escape damage repaired (or refused), warning of what was done."""
    repaired, controls, checked = [], [], []
    for problem in problems:
        text, report = repair_escapes(problem.problem)
        if report.repairs:
            repaired.append(f"{problem.id} ({', '.join(dict.fromkeys(report.repairs))})")
            problem = problem.model_copy(update={"problem": text})
        if report.controls:
            controls.append(f"{problem.id} ({', '.join(report.controls)})")
        checked.append(problem)
    if repaired and escape_damage == "refuse":
        raise AimeDataError(
            f"{path}: JSON escape damage (a control character where a LaTeX command was meant) "
            f"in {len(repaired)} problems: {'; '.join(repaired)}"
        )
    warn = warn or _python_warning
    if repaired:
        warn(
            f"{path}: repaired JSON escape damage (a control character where a LaTeX "
            f"command was meant) in {len(repaired)} problems: {'; '.join(repaired)}"
        )
    if controls:
        warn(
            f"{path}: control characters (dropped from prompts) in {len(controls)} "
            f"problems: {'; '.join(controls)}"
        )
    return checked


_DATA_SUFFIXES = (".jsonl", ".json", ".parquet")


def _file_records(path: Path) -> list[tuple[str, Any]]:
    """(where, record) for each record of one file, JSON, JSON Lines or Parquet."""
    data = path.read_bytes()
    if is_parquet(path, data):
        return parquet_records(path, AimeDataError)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise AimeDataError(
            f"{path}: not UTF-8 text (byte {error.start}); expected JSON, JSON Lines or Parquet"
        ) from None
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl_records(path, text)
    if suffix not in (".json", ".txt", ""):
        raise AimeDataError(
            f"{path}: unsupported file type {path.suffix!r}; use JSON Lines, JSON or Parquet"
        )
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg == "Extra data":  # several JSON values: JSON Lines (Dataset.to_json)
            return _jsonl_records(path, text)
    except RecursionError:
        pass  # reported with its place by _json_records
    return _json_records(path, text)


def user_aime_dir() -> Path:
    """Where ``arcmemo data fetch aime`` writes and ``split_path`` looks without
    ``ARCMEMO_DATA_DIR``: ``aime/`` in the user data folder."""
    return user_data_dir() / "aime"


def split_path(split: str, data_dir: Path | None = None) -> Path:
    """Return the file of an AIME split: ``<data dir>/aime_<split>.jsonl``.

    The data folder is ``data_dir`` when given, else the ``ARCMEMO_DATA_DIR`` environment
    variable, else :func:`user_aime_dir`. Raises :class:`AimeDataError` when the split name
    is not a plain name or the user data folder lacks the split, and ``FileNotFoundError``
    (naming the folder, where it came from, and the splits that do exist) when the file is
    missing.
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", split):
        raise AimeDataError(f"bad AIME split name {split!r}; expected a plain name like '2025'")
    file_name = f"aime_{split}.jsonl"
    if data_dir is not None:
        folder, origin = Path(data_dir), "given data folder"
    else:
        from_env = os.environ.get(DATA_DIR_ENV, "").strip()
        if from_env:
            folder, origin = Path(from_env), f"{DATA_DIR_ENV}={from_env}"
        else:
            folder, origin = user_aime_dir(), "the user data folder"
            if not (folder / file_name).is_file():
                raise AimeDataError(
                    f"AIME split {split!r}: no {file_name} in {folder} ({origin}); run "
                    f"`arcmemo data fetch aime --split {split}`, or set {DATA_DIR_ENV} to a "
                    f"folder holding {file_name}, or give the data file with --data"
                )
    if not folder.is_dir():
        raise FileNotFoundError(f"AIME data folder {folder} ({origin}) does not exist")
    path = folder / file_name
    if not path.is_file():
        available = sorted(p.stem.removeprefix("aime_") for p in folder.glob("aime_*.jsonl"))
        raise FileNotFoundError(
            f"AIME split {split!r}: {path} does not exist ({origin}); "
            f"available splits: {', '.join(available) or 'none'}"
        )
    return path


def _jsonl_records(path: Path, text: str) -> list[tuple[str, Any]]:
    records: list[tuple[str, Any]] = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"line {line_number}", json.loads(line)))
        except json.JSONDecodeError as error:
            raise AimeDataError(f"{path}, line {line_number}: invalid JSON ({error})") from None
        except RecursionError:
            raise AimeDataError(f"{path}, line {line_number}: JSON nested too deeply") from None
    return records


def _json_records(path: Path, text: str) -> list[tuple[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise AimeDataError(f"{path}: invalid JSON ({error})") from None
    except RecursionError:
        raise AimeDataError(f"{path}: JSON nested too deeply") from None
    if isinstance(data, list):
        return [(f"item [{index}]", item) for index, item in enumerate(data)]
    if isinstance(data, dict) and isinstance(data.get("problems"), list):
        return [(f"item problems[{index}]", item) for index, item in enumerate(data["problems"])]
    raise AimeDataError(
        f"{path}: expected a JSON list of problems or an object with a 'problems' list, "
        f"got {_describe_json(data)}"
    )


def _problem_from_record(path: Path, where: str, position: int, record: Any) -> AimeProblem:
    place = f"{path}, {where}"
    if not isinstance(record, dict):
        raise AimeDataError(f"{place}: expected a JSON object, got {_describe_json(record)}")

    id_field, raw_id = _pick(record, ID_FIELDS)
    if id_field is None:
        problem_id = f"{path.stem}-{position}"
    elif isinstance(raw_id, str) and raw_id.strip():
        problem_id = raw_id.strip()
    elif isinstance(raw_id, int) and not isinstance(raw_id, bool):
        problem_id = str(raw_id)
    else:
        raise AimeDataError(
            f"{place}: field {id_field!r} must be a non-empty string or an integer, got {raw_id!r}"
        )

    problem_field, problem_text = _pick(record, PROBLEM_FIELDS)
    if problem_field is None:
        raise AimeDataError(_missing(place, "problem", PROBLEM_FIELDS, record))
    if not isinstance(problem_text, str) or not problem_text.strip():
        raise AimeDataError(
            f"{place}: field {problem_field!r} must be a non-empty string, got {problem_text!r}"
        )

    answer_field, raw_answer = _pick(record, ANSWER_FIELDS)
    if answer_field is None:
        raise AimeDataError(_missing(place, "answer", ANSWER_FIELDS, record))
    answer = _record_integer(raw_answer)
    if answer is None:
        hint = ""
        if answer_field == "solution":
            hint = (
                " ('solution' is only read when it holds a bare integer; it looks like a "
                f"worked solution, so add one of {', '.join(ANSWER_FIELDS[:-1])})"
            )
        raise AimeDataError(
            f"{place}: field {answer_field!r} must be an integer 0..999, "
            f"got {_shorten(raw_answer)}{hint}"
        )
    if not MIN_ANSWER <= answer <= MAX_ANSWER:
        raise AimeDataError(
            f"{place}: field {answer_field!r} is {answer}, outside the AIME range 0..999"
        )

    return AimeProblem(
        id=problem_id,
        problem=problem_text,
        answer=answer,
        source=str(path),
        year=_optional_integer(place, record, YEAR_FIELDS),
        contest=_optional_text(place, record, CONTEST_FIELDS),
        number=_optional_integer(place, record, NUMBER_FIELDS),
    )


def _pick(record: Mapping[str, Any], names: Sequence[str]) -> tuple[str | None, Any]:
    for name in names:
        if name in record and record[name] is not None:
            return name, record[name]
    return None, None


def _missing(place: str, what: str, names: Sequence[str], record: Mapping[str, Any]) -> str:
    found = ", ".join(map(str, record)) or "none"
    return (
        f"{place}: missing the {what} field (accepted names: {', '.join(names)}); "
        f"fields present: {found}"
    )


def _record_integer(value: Any) -> int | None:
    """An integer written as a JSON integer, an integral float, or a string of digits."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,18}\s*", value):
        return int(value)
    return None


def _optional_integer(place: str, record: Mapping[str, Any], names: Sequence[str]) -> int | None:
    field, value = _pick(record, names)
    if field is None:
        return None
    number = _record_integer(value)
    if number is None:
        raise AimeDataError(f"{place}: field {field!r} must be an integer, got {value!r}")
    return number


def _optional_text(place: str, record: Mapping[str, Any], names: Sequence[str]) -> str | None:
    field, value = _pick(record, names)
    if field is None:
        return None
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise AimeDataError(f"{place}: field {field!r} must be a string, got {value!r}")
    return str(value)


def _describe_json(value: Any) -> str:
    names: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return names.get(type(value), repr(value))


def _shorten(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
