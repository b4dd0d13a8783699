"""Help texts that the registered benchmarks write (their splits and run defaults).

The text is built when help is shown, not when the command is imported: it imports every
benchmark, which an ordinary command line does not need.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


class BenchmarkHelpOption(click.Option):
    """An option whose help text comes from ``help_from()``, called when help is shown."""

    def __init__(self, *args: Any, help_from: Callable[[], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help_from = help_from

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self.help_from()
        return super().get_help_record(ctx)


def split_help() -> str:
    """``--split``: each benchmark's splits and the one it loads when none is given."""
    from arcmemo.benchmarks.base import per_benchmark

    return per_benchmark(lambda cls: cls.split_help()) + "."


def feedback_rounds_help() -> str:
    from arcmemo.benchmarks.base import per_benchmark

    rounds = per_benchmark(lambda cls: str(cls.defaults.feedback_rounds))
    return f"Feedback rounds per attempt (default: the benchmark's; {rounds})."


def write_signal_help() -> str:
    from arcmemo.benchmarks.base import per_benchmark

    return (
        "What confirms a solution for memory writes. Default: the benchmark's ("
        + per_benchmark(lambda cls: cls.defaults.write_signal)
        + "); oracle uses test labels (reproduction only; leaks)."
    )


def strict_help() -> str:
    """``arcmemo table --strict``: the benchmarks that have strict scores, and what they are."""
    from arcmemo.benchmarks.base import strict_runs

    return f"Strict scores, for {strict_runs() or 'no registered benchmark'}."


def convention_help() -> str:
    """``arcmemo table --convention``: the two readings of a run's scores, and the runs that
    have the published one."""
    from arcmemo.benchmarks.base import code_runs

    return (
        "text: the scores as the paper's text defines them (at each retry depth an attempt "
        "counts by its last program). code: as the paper's published code and its "
        f"notebooks compute them, for {code_runs() or 'no registered benchmark'}."
    )
