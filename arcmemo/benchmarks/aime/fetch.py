"""``arcmemo data fetch aime``: AIME problems from a public dataset on the Hugging Face Hub.

A source is ``REPO[@REVISION]`` naming a dataset repository of Parquet files; each year
has a default (:data:`DEFAULT_SOURCES`). The revision the Hub served (a commit id) is what
every file is downloaded at, and it is recorded, with the sha256 of each download and of
the JSON Lines file written, in ``aime_YEAR.source.json`` beside it. Rows are converted to
arcmemo's fields (``id`` ``YEAR-I-7``, ``year``, ``contest``, ``number``, ``problem``,
``answer``) and checked by :func:`~arcmemo.benchmarks.aime.data.load_problems` before the
file is written, atomically. ``HF_ENDPOINT`` points ``huggingface_hub`` at another server
(a mirror, or a test's).
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.benchmarks.aime.data import AimeDataError, load_problems, user_aime_dir
from arcmemo.core.files import atomic_write_text

FETCH_FORMAT = 1

# Public datasets of one year's 30 problems each (AIME I, then AIME II), as Parquet.
DEFAULT_SOURCES = {
    # 30 rows: id, problem, solution, answer (a string), url (names contest and number), year
    "2024": "HuggingFaceH4/aime_2024",
    # 30 rows: problem_idx (1-15 AIME I, 16-30 AIME II), problem, answer (a string)
    "2025": "MathArena/aime_2025",
}
_URL = re.compile(r"(\d{4})_AIME_(I{1,2})_Problems/Problem_(\d+)")
_REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


class FetchError(AimeDataError):
    """A fetch that cannot go on (bad source, no Parquet files, unusable rows)."""


class FetchedFile(BaseModel):
    name: str = Field(description="Path of the file in the dataset repository.")
    sha256: str = Field(description="sha256 of the bytes downloaded.")


class FetchRecord(BaseModel):
    """Where a split's problems came from: ``aime_YEAR.source.json``."""

    format_version: int = FETCH_FORMAT
    split: str
    repo: str = Field(description="The dataset repository on the Hub.")
    requested_revision: str = Field(description="The revision asked for (default: main).")
    revision: str = Field(description="The commit the Hub served, every file read at it.")
    endpoint: str = Field(description="The Hub's address (HF_ENDPOINT).")
    files: list[FetchedFile]
    written: str = Field(description="The JSON Lines file written.")
    sha256: str = Field(description="sha256 of the written file.")
    problems: int
    fetched_at: datetime


def parse_source(source: str) -> tuple[str, str]:
    """``REPO[@REVISION]`` as (repo, revision); revision ``main`` when left out."""
    repo, _, revision = source.partition("@")
    if not _REPO.fullmatch(repo) or ("@" in source and not revision.strip()):
        raise FetchError(f"bad --source {source!r}; expected OWNER/NAME or OWNER/NAME@REVISION")
    return repo, revision.strip() or "main"


def convert_rows(rows: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    """Rows of a Hub dataset as arcmemo's AIME records (contest and number from a ``url``
    or a ``problem_idx`` of 1-30 when the rows carry one)."""
    year = int(split) if split.isdigit() else None
    records = []
    for index, row in enumerate(rows, start=1):
        contest: str | None = None
        number: int | None = None
        found = _URL.search(str(row.get("url") or ""))
        if found:
            contest, number = found[2], int(found[3])
        elif isinstance(row.get("problem_idx"), int) and len(rows) == 30:
            position = int(row["problem_idx"])
            contest, number = ("I", position) if position <= 15 else ("II", position - 15)
        ident = f"{split}-{contest}-{number}" if contest else f"{split}-{index}"
        problem = row.get("problem", row.get("question"))
        answer = row.get("answer")
        answer = answer.strip() if isinstance(answer, str) else answer
        record: dict[str, Any] = {"id": ident, "problem": problem, "answer": answer}
        if year is not None:
            record["year"] = year
        if contest:
            record |= {"contest": contest, "number": number}
        records.append(record)
    return records


def _hub() -> Any:
    try:
        import huggingface_hub
    except ModuleNotFoundError:
        raise FetchError(
            "fetching datasets needs huggingface_hub and pyarrow: pip install 'arcmemo[data]'"
        ) from None
    return huggingface_hub


def _parquet_rows(path: Path) -> list[dict[str, Any]]:
    try:
        import pyarrow.parquet as parquet
    except ModuleNotFoundError:
        raise FetchError(
            "fetching datasets needs huggingface_hub and pyarrow: pip install 'arcmemo[data]'"
        ) from None
    rows: list[dict[str, Any]] = parquet.read_table(path).to_pylist()
    return rows


def _jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def fetch_aime(split: str, source: str | None = None, folder: Path | None = None) -> FetchRecord:
    """Download ``split`` (a year) from ``source`` (default: the year's) into ``folder``
    (default: :func:`user_aime_dir`); returns what was recorded."""
    if source is None:
        if split not in DEFAULT_SOURCES:
            raise FetchError(
                f"no default source for AIME {split!r} (defaults: "
                f"{', '.join(sorted(DEFAULT_SOURCES))}); name one with --source OWNER/NAME"
            )
        source = DEFAULT_SOURCES[split]
    repo, revision = parse_source(source)
    hub = _hub()
    from huggingface_hub import constants
    from huggingface_hub.errors import HfHubHTTPError

    try:
        info = hub.HfApi().dataset_info(repo, revision=revision)
        names = sorted(s.rfilename for s in info.siblings or [] if s.rfilename.endswith(".parquet"))
        if not names:
            raise FetchError(f"{repo}@{info.sha}: the dataset has no Parquet files")
        rows: list[dict[str, Any]] = []
        files = []
        with tempfile.TemporaryDirectory(prefix="arcmemo-fetch-") as scratch:
            for name in names:
                local = Path(
                    hub.hf_hub_download(
                        repo, name, repo_type="dataset", revision=info.sha, cache_dir=scratch
                    )
                )
                files.append(
                    FetchedFile(name=name, sha256=hashlib.sha256(local.read_bytes()).hexdigest())
                )
                rows.extend(_parquet_rows(local))
    except HfHubHTTPError as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise FetchError(f"{repo}@{revision}: the Hub refused: {first}") from None
    except OSError as error:
        raise FetchError(f"{repo}@{revision}: cannot download ({error})") from None
    target_dir = folder or user_aime_dir()
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / f"aime_{split}.jsonl"
    records = convert_rows(rows, split)
    with tempfile.TemporaryDirectory(prefix="arcmemo-fetch-") as scratch:
        check = Path(scratch) / target.name
        check.write_text(_jsonl(records), encoding="utf-8")
        try:
            problems = load_problems(check)
        except AimeDataError as error:
            raise FetchError(
                f"{repo}@{info.sha}: rows unusable as AIME problems: {error}"
            ) from None
    # answers as the integers they were read as ("016" is 16)
    text = _jsonl([r | {"answer": p.answer} for r, p in zip(records, problems, strict=True)])
    atomic_write_text(target, text)
    record = FetchRecord(
        split=split,
        repo=repo,
        requested_revision=revision,
        revision=info.sha,
        endpoint=constants.ENDPOINT,
        files=files,
        written=target.name,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        problems=len(problems),
        fetched_at=datetime.now(timezone.utc),
    )
    atomic_write_text(
        target.with_name(f"aime_{split}.source.json"), record.model_dump_json(indent=2) + "\n"
    )
    return record
