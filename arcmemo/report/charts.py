"""Which charts a run report shows, from the runs' summaries and results.

Summary keys drive them: ``by_retry`` (the score metric, oracle@2, by retry depth; oracle@k
at the final depth) where a benchmark's summary has it; otherwise oracle@k is computed from the
attempts (a task counts when some attempt among the first k is right on every test input).
The drawing itself is :mod:`arcmemo.report.plots`.
"""

from __future__ import annotations

from markupsafe import Markup

from arcmemo.report import plots
from arcmemo.report.load import RunData
from arcmemo.report.tasks import TaskView


def _pass_at(run: RunData, k: int) -> float:
    """Fraction of tasks with a fully right attempt among the first ``k``."""
    if not run.results:
        return 0.0
    right = sum(any(a.correct and all(a.correct) for a in r.attempts[:k]) for r in run.results)
    return right / len(run.results)


def _final_depth(run: RunData) -> dict:
    """The oracle cells of the final retry depth (``by_retry`` of an ARC summary), or {}."""
    by_retry = run.summary.get("by_retry")
    if not isinstance(by_retry, dict) or not by_retry:
        return {}
    return by_retry[str(max(int(depth) for depth in by_retry))]


def _score_by_retry(run: RunData) -> list[tuple[float, float]]:
    """The run's score metric (oracle@2) after at most r retries, for each depth r."""
    by_retry, metric = run.summary.get("by_retry"), run.summary.get("score_metric")
    if not isinstance(by_retry, dict) or not metric:
        return []
    return [(float(depth), float(cells[metric]["mean"])) for depth, cells in by_retry.items()]


def _oracle_points(run: RunData) -> list[tuple[float, float]]:
    final = _final_depth(run)
    if final:
        return [(float(key.split("@")[1]), float(cell["mean"])) for key, cell in final.items()]
    k = max((len(r.attempts) for r in run.results), default=0)
    return [(float(j), _pass_at(run, j)) for j in range(1, k + 1)]


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
    charts: list[Markup] = []
    by_retry = [plots.Series(r.label, _score_by_retry(r)) for r in runs if _score_by_retry(r)]
    if by_retry:
        charts.append(
            plots.line_chart(
                by_retry,
                title="Score by retry depth",
                x_label="retries allowed",
                y_label="score",
                y_max=1.0,
            )
        )
    oracle = [plots.Series(r.label, _oracle_points(r)) for r in runs]
    oracle = [s for s in oracle if s.points]
    if oracle:
        charts.append(
            plots.line_chart(
                oracle, title="oracle@k vs k", x_label="k (attempts)", y_label="score", y_max=1.0
            )
        )
    charts += _per_task_bars(tasks)
    growth = [plots.Series(r.label, _memory_growth(r)) for r in runs if r.snapshot_sizes]
    if growth:
        charts.append(
            plots.line_chart(
                growth, title="Memory size over batches", x_label="batch", y_label="entries"
            )
        )
    return charts
