"""The overview's numbers: the benchmark's metrics, formatted, then counts and usage."""

from __future__ import annotations

from arcmemo.analysis.report.summary import run_alerts, summary_rows


def test_summary_rows_format_rates_and_k() -> None:
    rows = dict(
        summary_rows(
            {"n_tasks": 3, "k": 4, "pass@k": 0.5, "maj@k": 1 / 3, "cost_usd": None},
            ("pass@k", "maj@k"),
        )
    )
    assert rows["tasks"] == "3"
    assert rows["pass@4"] == "50.0%"
    assert rows["maj@4"] == "33.3%"
    assert rows["cost"] == "unknown"


def test_summary_rows_follow_the_given_metrics() -> None:
    summary = {"score": 0.5, "exact": 2, "oracle": {"1": 0.25, "2": 0.5}, "strict_score": 0.1}
    rows = summary_rows(summary, ("score", "exact", "oracle", "missing"))
    # in the given order; a count stays a count, a mapping is a row per key
    assert rows == [
        ("score", "50.0%"),
        ("exact", "2"),
        ("oracle@1", "25.0%"),
        ("oracle@2", "50.0%"),
    ]


def test_run_alerts_name_errors_warnings_and_long_prompts() -> None:
    summary = {
        "errors": {"timeout": {"count": 2, "first": "read timed out", "task": "t1"}},
        "prompt_too_long": {"t3": "solve: 9000 > 8192 tokens", "t4": "solve: too long"},
        "warnings": ["3 of 5 tasks got no memory entry from the selector (first, t2: empty)"],
    }
    assert run_alerts(summary) == [
        ("error", "2 task(s) ended on timeout (first, t1: read timed out)"),
        (
            "warning",
            "2 task(s) had a prompt longer than the model's context window "
            "(first, t3: solve: 9000 > 8192 tokens)",
        ),
        ("warning", "3 of 5 tasks got no memory entry from the selector (first, t2: empty)"),
    ]
    assert run_alerts({"n_tasks": 3, "warnings": [], "errors": {}}) == []
