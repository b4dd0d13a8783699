"""Turning expected failures (bad files, missing keys, bad options) into clean CLI errors.

Only the project's own error types (and a missing file) become one-line user errors; any
other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click


def _user_error_types() -> tuple[type[BaseException], ...]:
    from arcmemo.benchmarks.base import BenchmarkDataError
    from arcmemo.core.files import LockHeldError
    from arcmemo.core.registry import RegistryError
    from arcmemo.memory.store import MemoryFileError
    from arcmemo.models.base import ProviderError
    from arcmemo.models.prices import PriceTableError
    from arcmemo.models.retry import ModelCallError
    from arcmemo.run.directory.records import RunDirError
    from arcmemo.run.resolve import RunOptionsError
    from arcmemo.sandbox import SandboxUnavailableError

    return (
        BenchmarkDataError,
        LockHeldError,
        MemoryFileError,
        ModelCallError,
        PriceTableError,
        ProviderError,
        RegistryError,
        RunDirError,
        RunOptionsError,
        SandboxUnavailableError,
        FileNotFoundError,
    )


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Report known input errors as a one-line-per-problem message with exit code 1."""
    types = _user_error_types()
    try:
        yield
    except types as error:
        raise click.ClickException(str(error)) from None
