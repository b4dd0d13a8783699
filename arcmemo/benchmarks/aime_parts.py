"""AIME-specific pieces: problem loading, answer extraction and scoring.

Everything here is pure (no model calls, no run state); the AIME benchmark class wraps these
functions. AIME answers are integers 0..999, graded by exact integer match.

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
    ``split_path("2025")`` is ``$ARCMEMO_DATA_DIR/aime_2025.jsonl``.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MIN_ANSWER = 0
MAX_ANSWER = 999
DATA_DIR_ENV = "ARCMEMO_DATA_DIR"

ID_FIELDS = ("id", "ID", "problem_id", "idx", "name")
PROBLEM_FIELDS = ("problem", "question", "Problem", "Question", "prompt")
ANSWER_FIELDS = ("answer", "Answer", "final_answer", "solution")
YEAR_FIELDS = ("year", "Year")
CONTEST_FIELDS = ("contest", "Part")
NUMBER_FIELDS = ("number", "Problem Number")


# --------------------------------------------------------------------------------------------
# Problems and loading


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


class AimeDataError(ValueError):
    """A problem file is malformed; the message names the file, the record and the field."""


def load_problems(path: Path) -> list[AimeProblem]:
    """Load AIME problems from a ``.jsonl`` or ``.json`` file (see the module docstring).

    Raises :class:`AimeDataError` naming the file, the line (JSONL) or index (JSON) and the
    field for malformed content, missing fields, bad answers, duplicate ids or an empty file;
    ``FileNotFoundError`` when the file does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"AIME data file {path} does not exist")
    suffix = path.suffix.lower()
    text = path.read_text(encoding="utf-8-sig")
    if suffix == ".jsonl":
        records = _jsonl_records(path, text)
    elif suffix == ".json":
        records = _json_records(path, text)
    else:
        raise AimeDataError(f"{path}: unsupported file type {path.suffix!r}; use .jsonl or .json")
    if not records:
        raise AimeDataError(f"{path}: contains no problems")

    problems: list[AimeProblem] = []
    first_seen: dict[str, str] = {}
    for position, (where, record) in enumerate(records, start=1):
        problem = _problem_from_record(path, where, position, record)
        if problem.id in first_seen:
            raise AimeDataError(
                f"{path}, {where}: duplicate id {problem.id!r} (first at {first_seen[problem.id]})"
            )
        first_seen[problem.id] = where
        problems.append(problem)
    return problems


def split_path(split: str, data_dir: Path | None = None) -> Path:
    """Return the file of an AIME split: ``<data dir>/aime_<split>.jsonl``.

    The data folder is ``data_dir`` when given, else the ``ARCMEMO_DATA_DIR`` environment
    variable. Raises :class:`AimeDataError` when neither is set or the split name is not a
    plain name, and ``FileNotFoundError`` (naming the folder, where it came from, and the
    splits that do exist) when the file is missing.
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", split):
        raise AimeDataError(f"bad AIME split name {split!r}; expected a plain name like '2025'")
    file_name = f"aime_{split}.jsonl"
    if data_dir is not None:
        folder, origin = Path(data_dir), "given data folder"
    else:
        from_env = os.environ.get(DATA_DIR_ENV, "").strip()
        if not from_env:
            raise AimeDataError(
                f"AIME split {split!r} needs a data folder: set {DATA_DIR_ENV} to the folder "
                f"holding {file_name}, or give the data file directly"
            )
        folder, origin = Path(from_env), f"{DATA_DIR_ENV}={from_env}"
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
    return records


def _json_records(path: Path, text: str) -> list[tuple[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise AimeDataError(f"{path}: invalid JSON ({error})") from None
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
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
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
    return {dict: "an object", list: "a list", str: "a string"}.get(type(value), repr(value))


def _shorten(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------
# Answer extraction


class ExtractedAnswer(BaseModel):
    """The final answer found in a model's output."""

    model_config = ConfigDict(frozen=True)

    raw: str | None = Field(description="The extracted answer text, before normalisation.")
    value: int | None = Field(
        description="The answer as an integer 0..999; None if absent, non-integer or out of range."
    )
    method: Literal["boxed", "phrase", "none"] = Field(
        description="Where it came from: the last \\boxed{}, a final-answer phrase, or nowhere."
    )


_BOXED = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])\s*")
_BARE_BOXED_ARGUMENT = re.compile(r"[+-]?\d[\d,]*")
# "final answer" may be followed directly by the number (e.g. a heading); a bare "answer" needs
# "is", ":" or "=" so that prose such as "answer 3 questions" is not taken as an answer.
_PHRASE = re.compile(
    r"(?:\bfinal\s+answer\b[\s*_#:]*(?:is\b|=)?|\banswer\b[\s*_]*(?:is\b|:|=))[\s*_:$]*",
    re.IGNORECASE,
)
_PHRASE_TOKEN = re.compile(r"[^\s$*]+")
# Sentence punctuation after the answer, but not the ")" of a "\)" math delimiter.
_TRAILING_PUNCTUATION = re.compile(r"(?:(?<!\\)[.,;:!?)])+$")
_TEXT_COMMANDS = re.compile(
    r"\\(?:text|textbf|textrm|textit|textnormal|mathrm|mathbf|mathit|mbox|boldsymbol|"
    r"operatorname|boxed|fbox)\s*\{([^{}]*)\}"
)
_TRAILING_UNIT = re.compile(
    r"(?<=[\d}])\s*\\(?:text|textrm|mbox|mathrm)\s*\{\s*[A-Za-z][A-Za-z .]*\}\s*$"
)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree(?![A-Za-z])")
_LATEX_NOISE = re.compile(r"\\[$%]|\$|\\[()\[\]]|\\(?:displaystyle|left|right)(?![A-Za-z])")
_LATEX_SPACES = re.compile(r"\\[,;:! ]|~|\\quad|\\qquad")
_THOUSANDS_SEPARATOR = re.compile(r"(?<=\d)[ ,](?=\d{3}(?!\d))")
_INTEGER = re.compile(r"[+-]?\d+(?:\.0*)?")


def extract_answer(text: str) -> ExtractedAnswer:
    """Find the final integer answer in ``text``.

    Order: the last complete ``\\boxed{...}`` / ``\\fbox{...}`` (nested braces handled; an
    unclosed one from a truncated output is skipped); else the last explicit answer phrase
    ("final answer: 016", "**Final Answer:** 73", "the answer is 73", "Answer: 42") followed
    by something containing a digit; else nothing (``method="none"``). There is deliberately no
    "last number in the text" fallback, so a missing answer is never counted as a wrong one.

    The found text is kept as ``raw``; ``value`` is its integer after :func:`normalize_answer`,
    or None when that is not an integer in 0..999. The last box counts even when its content is
    not an integer (an earlier box is not consulted).
    """
    boxed = _last_boxed(text)
    if boxed is not None:
        return ExtractedAnswer(raw=boxed, value=normalize_answer(boxed), method="boxed")
    phrase = _last_phrase(text)
    if phrase is not None:
        return ExtractedAnswer(raw=phrase, value=normalize_answer(phrase), method="phrase")
    return ExtractedAnswer(raw=None, value=None, method="none")


def normalize_answer(raw: str) -> int | None:
    """Turn an extracted answer string into an integer 0..999, or None.

    :func:`parse_integer` followed by the AIME range check (negative numbers and values above
    999 give None).
    """
    value = parse_integer(raw)
    return value if value is not None and MIN_ANSWER <= value <= MAX_ANSWER else None


def parse_integer(raw: str) -> int | None:
    """Read an answer string written in LaTeX or plain text as an integer (no range check).

    Removes ``$``/``\\(``/``\\)`` delimiters, ``\\text{}``-style wrappers and bare braces
    (``{16}``, ``1{,}000``), a trailing ``\\text{unit}``, degree marks (``^\\circ``, ``°``),
    ``\\%``, LaTeX spaces, thousands separators (``1,000``, ``1\\,000``) and a trailing
    period; keeps only what follows a single ``=`` (``m+n=73`` -> 73); accepts leading zeros
    (``016``), a sign, and an integral decimal (``16.0``). Fractions, other decimals, lists and
    expressions give None.
    """
    text = _TRAILING_UNIT.sub("", raw.strip())
    previous = None
    while previous != text:
        previous, text = text, _TEXT_COMMANDS.sub(r"\1", text)
    text = _DEGREES.sub("", text)
    text = _LATEX_NOISE.sub("", text)
    text = _LATEX_SPACES.sub(" ", text)
    text = text.replace("{", "").replace("}", "")
    if text.count("=") == 1:  # "m+n=73": the value is the right-hand side
        text = text.split("=", 1)[1]
    text = re.sub(r"\s+", " ", text).strip().rstrip(".").strip()
    text = _THOUSANDS_SEPARATOR.sub("", text)
    text = re.sub(r"^([+-])\s+", r"\1", text)
    if not _INTEGER.fullmatch(text):
        return None
    return int(text.split(".", 1)[0])


def _last_boxed(text: str) -> str | None:
    found: str | None = None
    for match in _BOXED.finditer(text):
        start = match.end()
        if start < len(text) and text[start] == "{":
            content = _braced_content(text, start)
        else:
            bare = _BARE_BOXED_ARGUMENT.match(text, start)
            content = bare.group(0) if bare else None
        if content is not None:
            found = content.strip()
    return found


def _braced_content(text: str, open_at: int) -> str | None:
    """Content of the brace group opening at ``open_at``; None when it never closes."""
    depth = 0
    for index in range(open_at, len(text)):
        char = text[index]
        if char == "{" and text[index - 1] != "\\":
            depth += 1
        elif char == "}" and text[index - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : index]
    return None


def _last_phrase(text: str) -> str | None:
    found: str | None = None
    for match in _PHRASE.finditer(text):
        token = _PHRASE_TOKEN.match(text, match.end())
        if token is None:
            continue
        candidate = _TRAILING_PUNCTUATION.sub("", token.group(0))
        if any(char.isdigit() for char in candidate):
            found = candidate
    return found


# --------------------------------------------------------------------------------------------
# Grading and metrics


class AttemptGrade(BaseModel):
    """One attempt's parsed answer and whether it matches the reference."""

    model_config = ConfigDict(frozen=True)

    answer: int | None = Field(description="The parsed integer answer; None when none was found.")
    correct: bool = Field(description="True when the answer equals the reference answer.")


def grade_answer(extracted: ExtractedAnswer, reference: int) -> AttemptGrade:
    """Grade one attempt by exact integer match; no answer is never correct."""
    return AttemptGrade(
        answer=extracted.value, correct=extracted.value is not None and extracted.value == reference
    )


def majority_answer(answers: Sequence[int | None]) -> int | None:
    """The most frequent non-None answer; ties go to the one that appeared first."""
    counts = Counter(answer for answer in answers if answer is not None)
    if not counts:
        return None
    # Counter keeps first-insertion order and max() returns the first maximal item.
    return max(counts, key=lambda answer: counts[answer])


def aime_metrics(
    per_task_answers: Sequence[tuple[int, Sequence[int | None]]],
) -> dict[str, float | int]:
    """Score AIME runs from ``(reference answer, attempt answers in order)`` per task.

    Keys (rates are fractions 0..1; tasks weigh equally; a task with no attempts is wrong):

    - ``n_tasks``: number of tasks.
    - ``k``: the largest number of attempts of any task.
    - ``pass@1``: fraction of tasks whose first attempt is right.
    - ``avg@k``: per task, the fraction of its attempts that are right, averaged over tasks
      (pass@1 averaged over the k samples).
    - ``pass@k``: fraction of tasks with at least one right attempt.
    - ``maj@k``: fraction of tasks whose majority answer (among attempts that gave an answer;
      ties broken by first occurrence) is right; a task with no answers is wrong.
    - ``n_solved``: number of tasks with at least one right attempt (pass@k as a count).
    - ``score``: the headline number, equal to ``avg@k``.
    - ``no_answer_rate``: fraction of all attempts that produced no integer answer, so that
      extraction failures can be told apart from wrong answers.
    """
    n_tasks = len(per_task_answers)
    first_right = any_right = majority_right = 0
    mean_sum = 0.0
    n_attempts = n_missing = k = 0
    for reference, answers in per_task_answers:
        right = [answer is not None and answer == reference for answer in answers]
        k = max(k, len(answers))
        n_attempts += len(answers)
        n_missing += sum(answer is None for answer in answers)
        if right:
            first_right += right[0]
            any_right += any(right)
            mean_sum += sum(right) / len(right)
        majority = majority_answer(answers)
        majority_right += majority is not None and majority == reference

    def rate(count: float) -> float:
        return count / n_tasks if n_tasks else 0.0

    return {
        "n_tasks": n_tasks,
        "k": k,
        "pass@1": rate(first_right),
        "avg@k": rate(mean_sum),
        "pass@k": rate(any_right),
        "maj@k": rate(majority_right),
        "n_solved": any_right,
        "score": rate(mean_sum),
        "no_answer_rate": n_missing / n_attempts if n_attempts else 0.0,
    }
