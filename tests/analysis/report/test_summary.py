"""The overview's numbers: the benchmark's metrics, formatted, then counts and usage."""

from __future__ import annotations

from arcmemo.analysis.report.summary import summary_rows


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
