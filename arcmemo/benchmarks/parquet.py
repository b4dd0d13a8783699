"""Problem files in Parquet (AIME's ``--data``, your own problems'): each row as a record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arcmemo.benchmarks.base import BenchmarkDataError


def is_parquet(path: Path, head: bytes) -> bool:
    """Whether ``path`` (whose first bytes are ``head``) is a Parquet file."""
    return head[:4] == b"PAR1" or path.suffix.lower() == ".parquet"


def parquet_records(
    path: Path, error: type[BenchmarkDataError] = BenchmarkDataError
) -> list[tuple[str, Any]]:
    """``("row N", record)`` for each row of ``path``; ``error`` (the benchmark's own kind)
    names the file when pyarrow is missing or the file cannot be read."""
    try:
        import pyarrow.parquet as parquet  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError:
        raise error(
            f"{path}: reading Parquet needs the pyarrow package: pip install pyarrow"
        ) from None
    try:
        rows = parquet.read_table(path).to_pylist()
    except Exception as failure:  # pyarrow raises its own types for broken files
        raise error(f"{path}: not a readable Parquet file ({failure})") from None
    return [(f"row {index}", row) for index, row in enumerate(rows)]
