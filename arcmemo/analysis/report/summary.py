"""A run's headline numbers and configuration, formatted for the overview.

Which metrics head the overview is the benchmark's choice
(:attr:`~arcmemo.benchmarks.base.Benchmark.report_metrics`, by default ``score`` and its
``headline_metrics``); the counts and usage rows around them are common to every run.
"""

from __future__ import annotations

import json
from typing import Any

from arcmemo.analysis.report.load import RunData


def percent(value: Any) -> str:
    return f"{100 * value:.1f}%" if isinstance(value, int | float) else "–"


def run_metrics(run: RunData) -> tuple[str, ...]:
    """The summary keys the run's benchmark shows first (``score`` when it is unknown)."""
    benchmark = run.benchmark
    if benchmark is None:
        return ("score",)
    if benchmark.report_metrics is not None:
        return benchmark.report_metrics
    return tuple(dict.fromkeys(("score", *benchmark.headline_metrics)))


def _metric_rows(summary: dict[str, Any], key: str) -> list[tuple[str, str]]:
    """Rows of one metric: a rate as a percentage, a count as is, a mapping row by row."""
    label = key.replace("_", " ")
    if "k" in summary:
        label = label.replace("@k", f"@{summary['k']}")
    value = summary[key]
    if isinstance(value, dict):
        return [row for sub, v in value.items() for row in _value_rows(f"{label}@{sub}", v)]
    return _value_rows(label, value)


def _value_rows(label: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return [(label, str(value))]
    return [(label, str(value) if isinstance(value, int) else percent(value))]


def summary_rows(summary: dict[str, Any], metrics: tuple[str, ...]) -> list[tuple[str, str]]:
    """The headline numbers of a run, formatted: counts, ``metrics`` in order, usage."""
    rows: list[tuple[str, str]] = []
    if "n_tasks" in summary:
        rows.append(("tasks", str(summary["n_tasks"])))
    if "n_solved" in summary:
        rows.append(("solved", str(summary["n_solved"])))
    for key in metrics:
        if key in summary:
            rows += _metric_rows(summary, key)
    if "n_errors" in summary:
        rows.append(("errors", str(summary["n_errors"])))
    tokens = summary.get("tokens")
    if isinstance(tokens, dict):
        for key in ("prompt", "completion", "reasoning", "cached"):
            if key in tokens:
                rows.append((f"{key} tokens", f"{tokens[key]:,}"))
    if "cost_usd" in summary:
        cost = summary["cost_usd"]
        rows.append(("cost", f"${cost:.4f}" if isinstance(cost, int | float) else "unknown"))
    traffic = model_traffic(summary)
    if traffic is not None:
        rows.append(("model requests", traffic))
    wall = wall_time_text(summary)
    if wall is not None:
        rows.append(("wall time", wall))
    return rows


def duration_text(seconds: float) -> str:
    """A duration in the unit a reader takes in: ``48.3 s``, ``17.2 min``, ``1 h 3 min``."""
    if seconds < 90:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60} min"


def wall_time_text(summary: dict[str, Any]) -> str | None:
    """The time the run's sessions ran, summed, with their count and span when there were
    several: ``17.2 min over 2 sessions (span 1 h 3 min)``."""
    wall = summary.get("wall_seconds")
    if not isinstance(wall, int | float):
        return None
    sessions, span = summary.get("sessions"), summary.get("span_seconds")
    if not isinstance(sessions, int) or sessions < 2 or not isinstance(span, int | float):
        return duration_text(wall)
    return f"{duration_text(wall)} over {sessions} sessions (span {duration_text(span)})"


def model_traffic(summary: dict[str, Any]) -> str | None:
    """The run's model traffic in one phrase, the same in the final table and the report:
    ``requests`` (provider requests made, repeats included), the ``samples`` (completions)
    they and the cache gave, and how many of those were replays from the cache
    (``cache_hits``). Summaries before format 4 have them only per stage."""
    if isinstance(summary.get("requests"), int) and isinstance(summary.get("samples"), int):
        requests, samples = summary["requests"], summary["samples"]
        replays = int(summary.get("cache_hits", 0))
    else:
        stages = summary.get("stages")
        if not isinstance(stages, dict) or not stages:
            if "calls" not in summary:
                return None
            return (
                f"{summary['calls']:,} ({summary.get('cache_hits', 0):,} replayed from the cache)"
            )
        requests = sum(int(s.get("requests", s.get("calls", 0))) for s in stages.values())
        samples = sum(int(s.get("samples", 0)) for s in stages.values())
        replays = sum(int(s.get("cache_hits", 0)) for s in stages.values())
    return f"{requests:,} ({samples:,} samples; {replays:,} replayed from the cache)"


def run_alerts(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """What went wrong or must be known about a run, from its summary: each warning, each
    kind of error that ended tasks (count and first message), the prompts too long for the
    model, a partial merge; as (``"warning"`` or ``"error"``, line)."""
    alerts: list[tuple[str, str]] = []
    for kind, entry in (summary.get("errors") or {}).items():
        if isinstance(entry, dict):
            alerts.append(
                (
                    "error",
                    f"{entry.get('count', '?')} task(s) ended on {kind} (first, "
                    f"{entry.get('task', '?')}: {entry.get('first', '')})",
                )
            )
    too_long = summary.get("prompt_too_long") or {}
    if isinstance(too_long, dict) and too_long:
        first, why = next(iter(too_long.items()))
        alerts.append(
            (
                "warning",
                f"{len(too_long)} task(s) had a prompt longer than the model's context "
                f"window (first, {first}: {why})",
            )
        )
    for reason in summary.get("partial_merge") or []:
        alerts.append(("error", f"partial merge: {reason}"))
    alerts += [("warning", str(w)) for w in summary.get("warnings") or []]
    return alerts


def summary_table(runs: list[RunData]) -> list[tuple[str, list[str]]]:
    """Metric rows with one column per run (metrics a run lacks show as a dash)."""
    per_run = [dict(summary_rows(r.summary, run_metrics(r))) for r in runs]
    names: list[str] = []
    for rows in per_run:
        names += [n for n in rows if n not in names]
    return [(name, [rows.get(name, "–") for rows in per_run]) for name in names]


def config_rows(run: RunData) -> list[tuple[str, str]]:
    if run.config is None:
        return []
    rows = []
    for key, value in run.config.model_dump(mode="json").items():
        text = value if isinstance(value, str) else json.dumps(value)
        rows.append((key, text))
    return rows
