"""Which charts a run report shows, from the runs' summaries and results.

Each run's benchmark gives its lines (:meth:`~arcmemo.benchmarks.base.Benchmark.report_curves`:
ARC's score by retry depth and oracle@k at the final depth; by default oracle@k computed from
the attempts, a task counting when some attempt among the first k is right on every test
input); lines with the same title share a chart. Per-task tokens and costs and the memory's
growth are common to every run. The drawing itself is :mod:`arcmemo.analysis.report.plots`.
"""

from __future__ import annotations

from markupsafe import Markup

from arcmemo.analysis.report import plots
from arcmemo.analysis.report.load import RunData
from arcmemo.analysis.report.tasks import TaskView
from arcmemo.benchmarks.base import attempts_oracle_curve
from arcmemo.benchmarks.outputs import Curve


def _curves(run: RunData) -> list[Curve]:
    """The run's lines (the default ones when its benchmark is unknown)."""
    if run.benchmark is None:
        return [attempts_oracle_curve(run.results)]
    return run.benchmark.report_curves(run.summary, run.results)


def _in_order(lists: list[list[str]]) -> list[str]:
    """The titles of all ``lists``, each list's order kept (a title a later run adds goes
    before the next title it shares with the runs before)."""
    merged: list[str] = []
    for titles in lists:
        at = 0
        for title in titles:
            if title in merged:
                at = merged.index(title) + 1
            else:
                merged.insert(at, title)
                at += 1
    return merged


def _line_charts(runs: list[RunData]) -> list[Markup]:
    per_run = [[c for c in _curves(r) if c.points] for r in runs]
    charts = []
    for title in _in_order([[c.title for c in curves] for curves in per_run]):
        lines = [
            (r, c)
            for r, curves in zip(runs, per_run, strict=True)
            for c in curves
            if c.title == title
        ]
        first = lines[0][1]
        charts.append(
            plots.line_chart(
                [plots.Series(r.label, c.points) for r, c in lines],
                title=title,
                x_label=first.x_label,
                y_label=first.y_label,
                y_max=first.y_max,
            )
        )
    return charts


def _memory_growth(run: RunData) -> list[tuple[float, float]]:
    points: list[tuple[float, float]] = []
    if run.input_memory is not None and run.input_memory_intact:
        points.append((0.0, float(len(run.input_memory.concepts) + len(run.input_memory.lessons))))
    for number, size in enumerate(run.snapshot_sizes, 1):
        points.append((float(number), float(size)))
    return points


def _per_task_bars(tasks: list[TaskView]) -> list[Markup]:
    charts: list[Markup] = []
    solved = [t.result.solved for t in tasks]
    if tasks:
        charts.append(
            plots.bar_chart(
                [t.id for t in tasks],
                [float(t.tokens) for t in tasks],
                title="Tokens per task (green: solved)",
                x_label="task",
                y_label="tokens",
                highlight=solved,
            )
        )
    costs = [t.cost for t in tasks]
    if any(c for c in costs):
        charts.append(
            plots.bar_chart(
                [t.id for t in tasks],
                [c or 0.0 for c in costs],
                title="Cost per task (USD)",
                x_label="task",
                y_label="USD",
                highlight=solved,
            )
        )
    return charts


def plot_list(runs: list[RunData], tasks: list[TaskView]) -> list[Markup]:
    """The report's charts (comparison series when several runs are given)."""
    charts = _line_charts(runs)
    charts += _per_task_bars(tasks)
    growth = [plots.Series(r.label, _memory_growth(r)) for r in runs if r.snapshot_sizes]
    if growth:
        charts.append(
            plots.line_chart(
                growth, title="Memory size over batches", x_label="batch", y_label="entries"
            )
        )
    return charts
