"""The inline SVG charts."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from arcmemo.report.plots import Series, bar_chart, line_chart, nice_max

SVG = "{http://www.w3.org/2000/svg}"


def test_nice_max_rounds_up_to_round_ticks() -> None:
    assert nice_max(6079) == 10000
    assert nice_max(0.75) == 1.0
    assert nice_max(1.0) == 1.0
    assert nice_max(230) == 250
    assert nice_max(0) == 1.0


def test_line_chart_is_valid_svg_with_a_point_per_value_and_escaped_names() -> None:
    svg = line_chart(
        [Series("<b>run</b>", [(0, 0.5), (1, 0.75)]), Series("base", [(0, 0.25), (1, 0.5)])],
        title="Score & retries",
        x_label="retries",
        y_label="score",
        y_max=1.0,
    )
    root = ET.fromstring(str(svg))  # parses: well-formed, names escaped
    assert len(root.findall(f"{SVG}circle")) == 4
    assert len(root.findall(f"{SVG}polyline")) == 2
    assert "&lt;b&gt;run&lt;/b&gt;" in svg and "Score &amp; retries" in svg


def test_bar_chart_highlights_solved_tasks() -> None:
    svg = bar_chart(
        ["a", "b", "c"],
        [10, 0, 30],
        title="t",
        x_label="x",
        y_label="y",
        highlight=[True, False, True],
    )
    bars = ET.fromstring(str(svg)).findall(f"{SVG}rect")
    assert [b.get("class") for b in bars] == ["bar good", "bar", "bar good"]
    heights = [float(b.get("height") or 0) for b in bars]
    assert heights[1] == 0 and heights[2] > heights[0] > 0
