"""Runs laid out as tables (the ArcMemo paper's, for ARC and AIME), as Markdown, CSV or LaTeX.

Each benchmark lays out its own runs (:meth:`~arcmemo.benchmarks.base.Benchmark.table`: ARC's
Tables 4 and 5 in :mod:`arcmemo.benchmarks.arc.layout`, AIME's pass@k and maj@n in
:mod:`arcmemo.benchmarks.sampled`); this module loads the runs, refuses runs that do not
belong together and renders the table. Numbers are percentages with two decimals, as in the
paper.

Runs are read from ``config.json`` and ``summary.json`` (through
:class:`~arcmemo.run.directory.reader.RunDirectory`); a summary without the table's keys (a
run that has not finished, or one from an older version) is recomputed from
``results.jsonl``. A paired comparison of two runs reads their results: per-task score
differences, a bootstrap confidence interval of the mean difference, an exact sign test and
an exact McNemar test.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from arcmemo.benchmarks.base import BENCHMARKS, Benchmark, code_runs, strict_runs
from arcmemo.benchmarks.outputs import (
    Cell,
    Column,
    Convention,
    NotRecordedError,
    Table,
    over_tasks,
)
from arcmemo.core.records import TaskResult
from arcmemo.core.stats import PairedComparison, mean_std, paired_comparison
from arcmemo.run.config import RunConfig, result_values
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.summary import summarize_directory
from arcmemo.run.summary_file import load_summary

Format = Literal["md", "csv", "latex"]
FORMATS: tuple[Format, ...] = ("md", "csv", "latex")
MISSING = {"md": "–", "csv": "", "latex": "--"}


class TableError(ValueError):
    """Runs that cannot share a table or a comparison; the message names them."""


# -- runs -------------------------------------------------------------------------------------


@dataclass
class TableRun:
    """What a table needs of one run directory."""

    label: str
    path: Path
    benchmark: str
    attempts: int
    feedback_rounds: int
    summary: dict[str, Any]
    task_ids: frozenset[str]
    # Why the numbers may not be a result (no summary.json, or one marked incomplete).
    caveat: str | None = None
    config: RunConfig | None = None

    def results(self) -> list[TaskResult]:
        return RunDirectory(self.path).ordered_results()


def load_run(path: Path, label: str | None = None, convention: Convention = "text") -> TableRun:
    """A run directory for a table (its summary built from the results when it has none,
    its metrics when they lack the table's keys under ``convention``: a file of an older
    version)."""
    rundir = RunDirectory(path)
    config = rundir.require_config()
    saved = load_summary(rundir, config.benchmark.name)
    caveat = None
    if saved is None:
        caveat = "no summary.json (the run has not finished): computed from results.jsonl"
    elif not saved.complete:
        caveat = "summary.json marks the run incomplete (tasks missing or ended in error)"
    summary = saved
    benchmark = BENCHMARKS.create(config.benchmark)
    try:
        _check_scores(benchmark, strict=False, convention=convention)
        if saved is None or not benchmark.has_table(saved.file_dict(), **_given(convention)):
            built = summarize_directory(rundir, config, benchmark)
            summary = (
                built if saved is None else saved.model_copy(update={"metrics": built.metrics})
            )
    finally:
        benchmark.close()
    assert summary is not None
    order = rundir.read_task_order()
    if order is None:
        order = [r.task_id for r in rundir.ordered_results()]
    return TableRun(
        label=label or Path(path).resolve().name,
        path=Path(path),
        benchmark=config.benchmark.name,
        attempts=config.attempts,
        feedback_rounds=config.feedback_rounds or 0,
        summary=summary.file_dict(),
        task_ids=frozenset(order),
        caveat=caveat,
        config=config,
    )


def check_comparable(runs: Sequence[TableRun]) -> None:
    """Refuse runs of different benchmarks or task sets, naming them."""
    first = runs[0]
    for run in runs[1:]:
        if run.benchmark != first.benchmark:
            raise TableError(
                f"runs of different benchmarks: {first.label} ({first.benchmark}) and "
                f"{run.label} ({run.benchmark})"
            )
        if run.task_ids != first.task_ids:
            raise TableError(
                f"runs of different task sets: {first.label} ({len(first.task_ids)} tasks) and "
                f"{run.label} ({len(run.task_ids)} tasks, {len(run.task_ids ^ first.task_ids)} "
                "not in both)"
            )


# -- the table ----------------------------------------------------------------------------------


def _benchmark(name: str) -> Benchmark[Any]:
    """The benchmark of runs named ``name``, for its table hooks."""
    return BENCHMARKS.create(name)


def _given(convention: Convention) -> dict[str, Convention]:
    """The benchmark hooks' ``convention`` argument: given only when it is not the default,
    so a benchmark without code-convention scores keeps hooks that take no such argument."""
    return {} if convention == "text" else {"convention": convention}


def _check_scores(benchmark: Benchmark[Any], *, strict: bool, convention: Convention) -> None:
    """Refuse --strict or --convention code for runs whose benchmark has no such scores."""
    if strict and benchmark.strict_scores is None:
        raise TableError(f"--strict is for {strict_runs()}")
    if convention != "text" and benchmark.code_scores is None:
        raise TableError(f"--convention {convention} is for {code_runs()}")


def build_table(
    runs: Sequence[TableRun], *, strict: bool = False, convention: Convention = "text"
) -> Table:
    """The table of comparable runs, in the layout their summaries call for."""
    if not runs:
        raise TableError("no runs to lay out")
    check_comparable(runs)
    benchmark = _benchmark(runs[0].benchmark)
    _check_scores(benchmark, strict=strict, convention=convention)
    bad = [run.label for run in runs if not benchmark.has_table(run.summary, **_given(convention))]
    if bad:
        raise TableError(f"no table layout for the runs of {runs[0].benchmark}: {', '.join(bad)}")
    table = benchmark.table(runs, strict=strict, **_given(convention))
    table.notes += [f"{run.label}: {run.caveat}." for run in runs if run.caveat]
    return table


# -- one setting over several task orders -----------------------------------------------------

# What may differ between the runs of one setting over task orders; anything else that
# changes results (``result_values``: every role's model included), the prompts or the
# starting memory may not.
ORDER_FIELDS = ("order_seed", "replicate")


def order_label(config: RunConfig) -> str:
    label = f"order {'none' if config.order_seed is None else config.order_seed}"
    return label + (f" rep {config.replicate}" if config.replicate else "")


def check_one_setting(runs: Sequence[TableRun]) -> list[RunConfig]:
    """Refuse runs that are not one setting over task orders, naming the field that differs
    (or the order that is there twice); returns their configs."""
    check_comparable(runs)
    configs = []
    for run in runs:
        if run.config is None:
            raise TableError(f"{run.label}: no config.json, so its task order is unknown")
        configs.append(run.config)
    first, first_config = runs[0], configs[0]
    first_values = result_values(first_config)
    for run, config in zip(runs[1:], configs[1:], strict=True):
        values = result_values(config)
        for name in (f for f in values if f not in ORDER_FIELDS):
            mine, theirs = first_values.get(name), values[name]
            if mine != theirs:
                raise TableError(
                    f"{first.label} and {run.label} differ in {name} ({mine!r} vs {theirs!r}); "
                    f"runs over task orders may differ only in {' and '.join(ORDER_FIELDS)}"
                )
        for content in ("prompts", "memory"):
            if first_config.fingerprints.get(content) != config.fingerprints.get(content):
                raise TableError(
                    f"{first.label} and {run.label} differ in {content} (content); runs over task "
                    f"orders may differ only in {' and '.join(ORDER_FIELDS)}"
                )
    seen: dict[tuple[int | None, int], str] = {}
    for run, config in zip(runs, configs, strict=True):
        order = (config.order_seed, config.replicate)
        if order in seen:
            raise TableError(
                f"{seen[order]} and {run.label} are the same task order "
                f"({order_label(config)}); give each order once"
            )
        seen[order] = run.label
    return configs


def _order_row(keys: list[str], values: list[float | None]) -> tuple[list[str], list[Cell]]:
    known = [v for v in values if v is not None]
    mean, std = mean_std(known) if len(known) == len(values) and known else (None, None)
    return keys, [Cell(mean, std), *(Cell(v) for v in values)]


def orders_table(
    runs: Sequence[TableRun], *, strict: bool = False, convention: Convention = "text"
) -> Table:
    """One setting over several task orders (``order_seed``): per metric (and, for ARC, per
    retry depth), the mean over orders with the sample std over orders, then each order's
    value."""
    if not runs:
        raise TableError("no runs to lay out")
    configs = check_one_setting(runs)
    benchmark = _benchmark(runs[0].benchmark)
    _check_scores(benchmark, strict=strict, convention=convention)
    if not all(benchmark.has_table(run.summary, **_given(convention)) for run in runs):
        raise TableError(f"no table layout over orders for the runs of {runs[0].benchmark}")
    columns = [Column("mean", True), *(Column(order_label(c), False) for c in configs)]
    laid_out = benchmark.order_rows(runs, strict=strict, **_given(convention))
    rows = [_order_row(keys, values) for keys, values in laid_out.rows]
    unit = benchmark.task_noun
    notes = [
        f"{runs[0].benchmark} scores in percent {over_tasks(runs, unit)}"
        + (", strict" if strict else "")
        + (f", {convention} convention" if convention != "text" else "")
        + f", one setting over {len(runs)} task orders: mean over the orders (sample std over "
        "them in brackets), then each order's value."
    ]
    notes += [f"{run.label}: {run.caveat}." for run in runs if run.caveat]
    return Table(keys=laid_out.keys, columns=columns, rows=rows, notes=notes)


# -- paired comparison ------------------------------------------------------------------------


@dataclass
class Paired:
    """Run ``first`` against run ``second`` on their shared tasks."""

    first: str
    second: str
    metric: str
    # What "solved" means in McNemar's test (the benchmark's paired_solved).
    solved: str
    stats: PairedComparison
    differences: list[tuple[str, float]]


def task_values(
    run: TableRun, *, strict: bool = False, convention: Convention = "text"
) -> dict[str, tuple[float, bool]]:
    """Per task, ``(score, solved)`` as the run's benchmark compares them (ARC: oracle@min(2,
    n) at the final retry depth; AIME: pass@1; another benchmark: its recorded score)."""
    benchmark = _benchmark(run.benchmark)
    _check_scores(benchmark, strict=strict, convention=convention)
    try:
        return benchmark.task_values(
            run.results(), attempts=run.attempts, strict=strict, **_given(convention)
        )
    except NotRecordedError as error:
        raise TableError(f"{run.label}: {error}") from None


def paired(
    first: TableRun,
    second: TableRun,
    *,
    strict: bool = False,
    convention: Convention = "text",
) -> Paired:
    """Compare two runs task by task on the tasks both have results for (sorted by id).

    Runs of different numbers of attempts are refused: a task's score and "solved" count
    a run's attempts, so more attempts alone would look like a better setting.
    """
    check_comparable([first, second])
    if first.attempts != second.attempts:
        raise TableError(
            f"{first.label} has {first.attempts} attempts and {second.label} "
            f"{second.attempts}: a paired comparison needs runs with the same number of "
            "attempts (a task's score and 'solved' count all of a run's attempts)"
        )
    a = task_values(first, strict=strict, convention=convention)
    b = task_values(second, strict=strict, convention=convention)
    shared = sorted(set(a) & set(b))
    if not shared:
        raise TableError(f"{first.label} and {second.label} have no finished task in common")
    stats = paired_comparison([a[t] for t in shared], [b[t] for t in shared])
    benchmark = _benchmark(first.benchmark)
    metric = benchmark.paired_metric(strict=strict, **_given(convention))
    solved = benchmark.paired_solved(attempts=first.attempts, strict=strict)
    differences = [(t, a[t][0] - b[t][0]) for t in shared if a[t][0] != b[t][0]]
    return Paired(first.label, second.label, metric, solved, stats, differences)


def _points(value: float) -> str:
    return f"{100 * value:+.2f}"


def _p(value: float) -> str:
    return f"{value:.3g}" if value >= 0.001 else f"{value:.1e}"


def paired_lines(result: Paired) -> list[str]:
    """The comparison in plain sentences (differences in percentage points)."""
    s = result.stats
    lines = [
        f"Paired comparison {result.first} − {result.second} on {s.n_tasks} tasks "
        f"({result.metric}, in points):",
        f"mean difference {_points(s.mean_difference)}, {100 * s.confidence:g}% bootstrap CI "
        f"[{_points(s.ci_low)}, {_points(s.ci_high)}] ({s.resamples:,} resamples, seed {s.seed})",
        f"sign test: {s.wins} wins, {s.losses} losses, {s.ties} ties; exact two-sided "
        f"p = {_p(s.sign_p)}",
        f"McNemar ('solved' = {result.solved}): solved by {result.first} only "
        f"{s.only_first}, by {result.second} only {s.only_second} (both {s.both}, neither "
        f"{s.neither}); exact p = {_p(s.mcnemar_p)}",
    ]
    if result.differences:
        shown = ", ".join(f"{t} {_points(d)}" for t, d in result.differences)
        lines.append(f"tasks that differ: {shown}")
    return lines


# -- rendering --------------------------------------------------------------------------------


def _number(value: float) -> str:
    return f"{100 * value:.2f}"


def _text(cell: Cell, missing: str) -> str:
    if cell.value is None:
        return missing
    text = _number(cell.value)
    return f"{text} ({_number(cell.std)})" if cell.std is not None else text


def _markdown(table: Table, notes: list[str], comparison: list[str]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    align = ["---:" if i == 0 and len(table.keys) > 1 else ":---" for i in range(len(table.keys))]
    out = [line([*table.keys, *(c.name for c in table.columns)])]
    out.append("|" + "|".join(align + ["---:"] * len(table.columns)) + "|")
    out += [line([*keys, *(_text(c, MISSING["md"]) for c in cells)]) for keys, cells in table.rows]
    if notes:
        out += ["", *(f"- {note}" for note in notes)]
    if comparison:
        out += ["", comparison[0], "", *(f"- {line}" for line in comparison[1:])]
    return "\n".join(out) + "\n"


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def _latex(table: Table, notes: list[str], comparison: list[str]) -> str:
    spec = "r" * (len(table.keys) > 1) + "l" + "r" * len(table.columns)
    header = [*table.keys, *(c.name for c in table.columns)]
    out = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    out.append(" & ".join(latex_escape(h) for h in header) + r" \\")
    out.append(r"\midrule")
    previous: str | None = None
    for keys, cells in table.rows:
        if previous is not None and len(keys) > 1 and keys[0] != previous:
            out.append(r"\midrule")
        previous = keys[0]
        texts = [latex_escape(k) for k in keys] + [_text(c, MISSING["latex"]) for c in cells]
        out.append(" & ".join(texts) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    out += [f"% {note}" for note in [*notes, *comparison]]
    return "\n".join(out) + "\n"


def _csv(table: Table, notes: list[str], comparison: list[str]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = list(table.keys)
    for column in table.columns:
        header += [column.name, f"{column.name}_std"] if column.with_std else [column.name]

    def number(value: float | None) -> str:
        return "" if value is None else f"{100 * value:.4f}"

    writer.writerow(header)
    for keys, cells in table.rows:
        row = list(keys)
        for column, cell in zip(table.columns, cells, strict=True):
            row += (
                [number(cell.value), number(cell.std)] if column.with_std else [number(cell.value)]
            )
        writer.writerow(row)
    # Data only: a footnote row is read as data by pandas and spreadsheets (see footnotes).
    return buffer.getvalue()


def render(table: Table, fmt: Format, *, comparison: Paired | None = None) -> str:
    """The table in ``fmt`` with its notes, and the paired comparison under it (as a list in
    Markdown, comment lines in LaTeX); CSV holds the data alone (:func:`footnotes`)."""
    lines = paired_lines(comparison) if comparison is not None else []
    renderer = {"md": _markdown, "csv": _csv, "latex": _latex}[fmt]
    return renderer(table, table.notes, lines)


def footnotes(table: Table, fmt: Format, *, comparison: Paired | None = None) -> list[str]:
    """What :func:`render` leaves out of ``fmt``: CSV's notes and paired comparison."""
    if fmt != "csv":
        return []
    return [*table.notes, *(paired_lines(comparison) if comparison is not None else [])]


def training_runs(directory: Path) -> tuple[tuple[Path, ...], tuple[str, ...], tuple[Path, Path]]:
    """A training directory's validation runs (epoch 0, 1, ...), their labels (the best epoch
    marked), and the pair a table compares: the best epoch against epoch 0, the starting
    memory (epoch 1 against epoch 0 where epoch 0 is the best)."""
    from arcmemo.train.record import read_record

    record = read_record(directory)
    if record is None or not record.epochs:
        raise TableError(f"{directory}: the training has no finished epoch yet")
    runs = tuple(directory / e.validation.run_dir for e in record.epochs)
    labels = tuple(
        f"epoch {e.epoch}{' (best)' if e.epoch == record.best_epoch else ''}"
        for e in record.epochs
    )
    best = record.best_epoch or 0
    other = best if best != 0 or len(runs) == 1 else 1
    return runs, labels, (runs[other], runs[0])
