"""Turning expected failures (bad files, missing keys, bad options) into clean CLI errors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click


def _user_error_types() -> tuple[type[BaseException], ...]:
    from arcmemo.benchmarks.aime_parts import AimeDataError
    from arcmemo.benchmarks.arc import ArcTaskError
    from arcmemo.benchmarks.base import TaskSelectionError
    from arcmemo.memory.store import MemoryFileError
    from arcmemo.models.base import ProviderError
    from arcmemo.models.client import ModelCallError
    from arcmemo.models.registry import ProviderUnavailableError
    from arcmemo.rundir import RunDirError

    return (
        AimeDataError,
        ArcTaskError,
        MemoryFileError,
        ModelCallError,
        ProviderError,
        ProviderUnavailableError,
        RunDirError,
        TaskSelectionError,
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
    except KeyError as error:  # unknown registry names (benchmark, selector, sandbox)
        raise click.ClickException(str(error.args[0]) if error.args else repr(error)) from None
