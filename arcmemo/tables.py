"""Runs laid out as the ArcMemo paper's tables, as Markdown, CSV or LaTeX.

ARC (Tables 4 and 5 of the paper): one row per setting (a run) and retry depth, columns
``run0 run1 ...`` (each attempt alone: the paper's runs) and ``oracle@1 ... oracle@n``
(mean over the k-subsets of attempts, the sample std over them in brackets); ``strict``
gives Table 5. AIME: one row per run, columns ``pass@1 ... pass@n`` and ``maj@n`` with the
std over problems. Numbers are percentages with two decimals, as in the paper.

Runs are read from ``config.json`` and ``summary.json`` (through
:class:`~arcmemo.rundir.RunDirectory`); a summary without the table's keys (a run that has
not finished, or one from an older version) is recomputed from ``results.jsonl``. A paired
comparison of two runs reads their results: per-task score differences, a bootstrap
confidence interval of the mean difference, an exact sign test and an exact McNemar test.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from arcmemo.config import RESULT_FIELDS, RunConfig
from arcmemo.records import TaskResult
from arcmemo.rundir import RunDirectory
from arcmemo.stats import PairedComparison, mean_std, paired_comparison

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
    retries: int
    summary: dict[str, Any]
    task_ids: frozenset[str]
    # Why the numbers may not be a result (no summary.json, or one marked incomplete).
    caveat: str | None = None
    config: RunConfig | None = None

    def results(self) -> list[TaskResult]:
        return RunDirectory(self.path).ordered_results()


def _layout(summary: dict[str, Any]) -> str | None:
    if isinstance(summary.get("by_retry"), dict):
        return "arc"
    if isinstance(summary.get("by_metric"), dict):
        return "aime"
    return None


def load_run(path: Path, label: str | None = None) -> TableRun:
    """A run directory for a table (its summary recomputed from the results when it lacks
    the table's keys)."""
    from arcmemo.benchmarks.base import BENCHMARKS

    rundir = RunDirectory(path)
    config = rundir.require_config()
    saved = rundir.read_summary()
    summary = saved or {}
    caveat = None
    if saved is None:
        caveat = "no summary.json (the run has not finished): computed from results.jsonl"
    elif saved.get("complete") is False:
        caveat = "summary.json marks the run incomplete (tasks missing or ended in error)"
    results: list[TaskResult] | None = None
    if _layout(summary) is None:
        results = rundir.ordered_results()
        benchmark = BENCHMARKS.create(config.benchmark)
        try:
            summary = {**summary, **benchmark.summarize(results, config.attempts)}
        finally:
            benchmark.close()
    order = rundir.read_task_order()
    if order is None:
        order = [r.task_id for r in (results if results is not None else rundir.ordered_results())]
    return TableRun(
        label=label or Path(path).resolve().name,
        path=Path(path),
        benchmark=config.benchmark.name,
        attempts=config.attempts,
        retries=config.retries or 0,
        summary=summary,
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


def _cells(values: Sequence[Cell], width: int) -> list[Cell]:
    return list(values) + [Cell(None)] * (width - len(values))


def _depth_cells(run: TableRun, depth: int, strict: bool) -> dict[str, Any]:
    """The oracle cells at ``depth`` (a depth no attempt reached equals the deepest one)."""
    by_retry = run.summary["strict_by_retry" if strict else "by_retry"]
    if not by_retry:
        return {}
    return by_retry[str(min(depth, max(int(d) for d in by_retry)))]


def arc_table(runs: Sequence[TableRun], *, strict: bool = False) -> Table:
    """The paper's Table 4 (Table 5 when ``strict``) for these runs."""
    n = max(int(r.summary.get("n_attempts", r.attempts)) for r in runs)
    columns = [Column(f"run{j}", False) for j in range(n)]
    columns += [Column(f"oracle@{k}", True) for k in range(1, n + 1)]
    rows = []
    too_many = False
    for depth in range(max(r.retries for r in runs) + 1):
        for run in (r for r in runs if depth <= r.retries):
            cells = _depth_cells(run, depth, strict)
            singles = (cells.get("oracle@1") or {}).get("subsets") or []
            oracle = [cells.get(f"oracle@{k}") for k in range(1, n + 1)]
            too_many = too_many or any(c and c["subsets"] is None for c in oracle)
            rows.append(
                (
                    [str(depth), run.label],
                    _cells([Cell(v) for v in singles], n)
                    + [Cell(c["mean"], c["std"]) if c else Cell(None) for c in oracle],
                )
            )
    n_tasks = len(runs[0].task_ids)
    notes = [
        f"ARC scores in percent over {n_tasks} tasks"
        + (", strict (one program right on every test input)" if strict else "")
        + ". runJ: attempt J alone. oracle@k: mean over all k-subsets of the attempts "
        "(sample std over them in brackets); oracle@2 is the official score."
    ]
    if too_many:
        notes.append("No std where an oracle@k has more than 2,000 subsets of attempts.")
    return Table(keys=["retries", "setting"], columns=columns, rows=rows, notes=notes)


def aime_table(runs: Sequence[TableRun]) -> Table:
    """One row per AIME run: pass@1..pass@n and maj@n, each with its std over problems."""
    names = [f"pass@{k}" for k in range(1, max(int(r.summary["n_samples"]) for r in runs) + 1)]
    names += list(dict.fromkeys(f"maj@{r.summary['n_samples']}" for r in runs))
    rows = []
    for run in runs:
        by_metric = run.summary["by_metric"]
        rows.append(
            (
                [run.label],
                [
                    Cell(by_metric[name]["mean"], by_metric[name]["std"])
                    if name in by_metric
                    else Cell(None)
                    for name in names
                ],
            )
        )
    notes = [
        f"AIME scores in percent over {len(runs[0].task_ids)} problems (std over problems in "
        "brackets). pass@1: mean over samples; pass@k: unbiased estimate from all samples; "
        "maj@n: majority answer of the n samples."
    ]
    return Table(
        keys=["setting"], columns=[Column(name, True) for name in names], rows=rows, notes=notes
    )


def build_table(runs: Sequence[TableRun], *, strict: bool = False) -> Table:
    """The table of comparable runs, in the layout their summaries call for."""
    if not runs:
        raise TableError("no runs to lay out")
    check_comparable(runs)
    layouts = {run.label: _layout(run.summary) for run in runs}
    bad = [label for label, layout in layouts.items() if layout is None]
    if bad:
        raise TableError(f"no table layout for the runs of {runs[0].benchmark}: {', '.join(bad)}")
    if set(layouts.values()) == {"aime"}:
        if strict:
            raise TableError("--strict is for ARC runs (one program right on every test input)")
        table = aime_table(runs)
    else:
        table = arc_table(runs, strict=strict)
    table.notes += [f"{run.label}: {run.caveat}." for run in runs if run.caveat]
    return table


# -- one setting over several task orders -----------------------------------------------------

# What may differ between the runs of one setting over task orders; any other field that
# changes results (``RESULT_FIELDS``), the prompts or the starting memory may not.
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
    for run, config in zip(runs[1:], configs[1:], strict=True):
        for name in (f for f in RESULT_FIELDS if f not in ORDER_FIELDS):
            mine, theirs = getattr(first_config, name), getattr(config, name)
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


def orders_table(runs: Sequence[TableRun], *, strict: bool = False) -> Table:
    """One setting over several task orders (``order_seed``): per metric (and, for ARC, per
    retry depth), the mean over orders with the sample std over orders, then each order's
    value."""
    if not runs:
        raise TableError("no runs to lay out")
    configs = check_one_setting(runs)
    layouts = {_layout(run.summary) for run in runs}
    if None in layouts or len(layouts) > 1:
        raise TableError(f"no table layout over orders for the runs of {runs[0].benchmark}")
    columns = [Column("mean", True), *(Column(order_label(c), False) for c in configs)]
    rows = []
    if layouts == {"aime"}:
        if strict:
            raise TableError("--strict is for ARC runs (one program right on every test input)")
        keys = ["metric"]
        names = list(runs[0].summary["by_metric"])
        for name in names:
            values = [(r.summary["by_metric"].get(name) or {}).get("mean") for r in runs]
            rows.append(_order_row([name], values))
    else:
        keys = ["retries", "metric"]
        n = max(int(r.summary.get("n_attempts", r.attempts)) for r in runs)
        for depth in range(max(r.retries for r in runs) + 1):
            cells = [_depth_cells(r, depth, strict) for r in runs]
            for k in range(1, n + 1):
                values = [(c.get(f"oracle@{k}") or {}).get("mean") for c in cells]
                rows.append(_order_row([str(depth), f"oracle@{k}"], values))
    unit = "problems" if layouts == {"aime"} else "tasks"
    notes = [
        f"{runs[0].benchmark} scores in percent over {len(runs[0].task_ids)} {unit}"
        + (", strict" if strict else "")
        + f", one setting over {len(runs)} task orders: mean over the orders (sample std over "
        "them in brackets), then each order's value."
    ]
    notes += [f"{run.label}: {run.caveat}." for run in runs if run.caveat]
    return Table(keys=keys, columns=columns, rows=rows, notes=notes)


# -- paired comparison ------------------------------------------------------------------------


@dataclass
class Paired:
    """Run ``first`` against run ``second`` on their shared tasks."""

    first: str
    second: str
    metric: str
    stats: PairedComparison
    differences: list[tuple[str, float]]


def task_values(run: TableRun, *, strict: bool = False) -> dict[str, tuple[float, bool]]:
    """Per task, ``(score, solved)`` at the final retry depth: ARC's oracle@min(2, n) and
    "every test input right in some attempt" (strict: one attempt right on all); AIME's
    pass@1 and "some sample right"; another benchmark's recorded score and solved."""
    results = run.results()
    layout = _layout(run.summary)
    if layout == "arc":
        from arcmemo.benchmarks.arc import scoring

        n = max([run.attempts, *(len(r.attempts) for r in results)])
        matrices = {r.task_id: scoring.task_matrix(r, None, n) for r in results}
        return {
            task_id: (
                scoring.task_score(matrix, strict=strict),
                scoring.task_solved(matrix, strict=strict),
            )
            for task_id, matrix in matrices.items()
        }
    if layout == "aime":
        from arcmemo.benchmarks.aime.metrics import problem_metrics

        values: dict[str, tuple[float, bool]] = {}
        for r in results:
            answers, reference = r.metrics.get("answers") or [], r.metrics.get("answer")
            if reference is None or not answers:
                values[r.task_id] = (0.0, False)
                continue
            pass_1 = problem_metrics(int(reference), answers, len(answers))["pass@1"]
            values[r.task_id] = (pass_1, pass_1 > 0)
        return values
    return {r.task_id: (r.score, r.solved) for r in results if r.score is not None}


def paired(first: TableRun, second: TableRun, *, strict: bool = False) -> Paired:
    """Compare two runs task by task on the tasks both have results for (sorted by id)."""
    check_comparable([first, second])
    a, b = task_values(first, strict=strict), task_values(second, strict=strict)
    shared = sorted(set(a) & set(b))
    if not shared:
        raise TableError(f"{first.label} and {second.label} have no finished task in common")
    stats = paired_comparison([a[t] for t in shared], [b[t] for t in shared])
    layout = _layout(first.summary)
    metric = {
        "arc": f"per-task {'strict ' if strict else ''}oracle@2 at the final retry depth",
        "aime": "per-problem pass@1",
    }.get(layout or "", "per-task score")
    differences = [(t, a[t][0] - b[t][0]) for t in shared if a[t][0] != b[t][0]]
    return Paired(first.label, second.label, metric, stats, differences)


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
        f"McNemar: solved by {result.first} only {s.only_first}, by {result.second} only "
        f"{s.only_second} (both {s.both}, neither {s.neither}); exact p = {_p(s.mcnemar_p)}",
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
    return buffer.getvalue() + "".join(f"# {note}\n" for note in [*notes, *comparison])


def render(table: Table, fmt: Format, *, comparison: Paired | None = None) -> str:
    """The table in ``fmt`` with its notes, and the paired comparison under it (as a list in
    Markdown, comment lines in LaTeX and CSV)."""
    lines = paired_lines(comparison) if comparison is not None else []
    renderer = {"md": _markdown, "csv": _csv, "latex": _latex}[fmt]
    return renderer(table, table.notes, lines)
