"""What a benchmark hands to the generic outputs: ``arcmemo table``, the report's charts and
``arcmemo export``.

Plain data only: the benchmark decides what goes in a table, a chart or an exported file;
:mod:`arcmemo.analysis.tables` renders tables (Markdown, CSV, LaTeX) and runs the paired tests,
:mod:`arcmemo.analysis.report.charts` draws the charts and ``arcmemo export`` writes the file, each
for any benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args

from arcmemo.core.records import TaskResult

# How a table reads a run's scores (the scoring convention): "text" as the paper's text
# defines them, "code" as the paper's published code computes them (a benchmark that has
# such a variant says what it is in :attr:`~arcmemo.benchmarks.base.Benchmark.code_scores`).
Convention = Literal["text", "code"]
CONVENTIONS: tuple[Convention, ...] = get_args(Convention)


class NotRecordedError(ValueError):
    """Results without what the asked convention reads; the message says what."""


@dataclass(frozen=True)
class Cell:
    """A number of the table (a fraction; shown in percent) and its std, if any."""

    value: float | None
    std: float | None = None


@dataclass(frozen=True)
class Column:
    name: str
    with_std: bool


@dataclass
class Table:
    """Key columns (text) then numeric columns; ``notes`` are printed under it."""

    keys: list[str]
    columns: list[Column]
    rows: list[tuple[list[str], list[Cell]]]
    notes: list[str] = field(default_factory=list)


def padded(values: Sequence[Cell], width: int) -> list[Cell]:
    """``values`` with empty cells added up to ``width``."""
    return list(values) + [Cell(None)] * (width - len(values))


class ScoredRun(Protocol):
    """What a table reads of one run (:class:`arcmemo.analysis.tables.TableRun`)."""

    label: str
    attempts: int
    feedback_rounds: int
    summary: dict[str, Any]
    task_ids: frozenset[str]


def figures_tasks(run: ScoredRun) -> int:
    """How many tasks ``run``'s figures come from: the summary's count of scored tasks
    (``n_scored``; else ``n_tasks`` less the unlabelled ones), else its task set (an
    unfinished run or a partial merge has fewer than its task set)."""
    for key in ("n_scored", "n_tasks"):
        if isinstance(run.summary.get(key), int):
            return int(run.summary[key]) - int(run.summary.get("n_unlabelled", 0) or 0) * (
                key == "n_tasks"
            )
    return len(run.task_ids)


def over_tasks(runs: Sequence[ScoredRun], noun: str) -> str:
    """What a table's figures are averaged over, for its notes: "over 10 tasks" when every
    run has figures for its whole task set, else each run's count."""
    total = len(runs[0].task_ids)
    counts = [(run.label, figures_tasks(run)) for run in runs]
    if all(n == total for _, n in counts):
        return f"over {total} {noun}"
    each = ", ".join(f"{label}: {n}" for label, n in counts)
    return f"over each run's finished {noun} only, of {total} ({each})"


@dataclass
class OrderRows:
    """One setting over task orders, as a benchmark lays it out: per row its key cells and
    each run's value (the table adds the mean and std over the runs)."""

    keys: list[str]
    rows: list[tuple[list[str], list[float | None]]]


@dataclass(frozen=True)
class Curve:
    """One run's line in a report chart; runs' curves with the same title share a chart."""

    title: str
    x_label: str
    y_label: str
    points: list[tuple[float, float]]
    y_max: float | None = None


@dataclass(frozen=True)
class ExportedRun:
    """What a directory exporter reads of a finished run."""

    results: list[TaskResult]
    # The run directory's name (a label for the run, e.g. arc-agi-benchmarking's test_id).
    name: str
    # The solver's provider:model and its sampling settings (config.json).
    model: str
    sampling: dict[str, Any]


@dataclass(frozen=True)
class Exporter:
    """A file, or a directory of files, written from a finished run's results
    (``arcmemo export NAME RUN``): exactly one of ``write`` (the file's text) and
    ``write_files`` (the directory's files by name) is given."""

    name: str
    help: str
    # Written under the run directory unless --out says otherwise (a directory's name when
    # the exporter writes files).
    default_file: str
    # What the files are and which runs they are for, for the refusal of other runs
    # ("ARC Prize submissions are for arc-agi runs").
    label: str
    runs: str
    write: Callable[[list[TaskResult]], str] | None = None
    write_files: Callable[[ExportedRun], dict[str, str]] | None = None

    def __post_init__(self) -> None:
        if (self.write is None) == (self.write_files is None):
            raise ValueError(f"exporter {self.name}: give exactly one of write and write_files")

    @property
    def directory(self) -> bool:
        return self.write_files is not None
