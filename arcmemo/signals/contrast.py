"""Which write signal splits a task's attempts for contrastive abstraction, and the guard
that keeps the hidden test labels out of it unless they are asked for by name."""

from __future__ import annotations

from arcmemo.core.registry import RegistryError
from arcmemo.signals.base import WRITE_SIGNALS, WriteSignal


class ContrastSignalError(RegistryError):
    """A contrast that would split attempts by the hidden test labels without being asked to."""


def contrast_signal(named: str | None, run_signal: WriteSignal) -> WriteSignal:
    """The signal named by the option ``contrast_signal``, else the run's own; the run's is
    refused when it reads the test labels (a named one is the user's explicit choice)."""
    if named is not None:
        return WRITE_SIGNALS.create(named)
    if run_signal.leaks_test_labels:
        raise ContrastSignalError(
            f"contrast: the run's write signal {run_signal.name!r} reads the hidden test "
            "labels; name it with --memory-format-arg contrast_signal="
            f"{run_signal.name} to contrast attempts by them"
        )
    return run_signal
