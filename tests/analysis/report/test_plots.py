"""The inline SVG charts."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET

from arcmemo.analysis.report.plots import Series, bar_chart, line_chart, nice_max

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


def _bar_labels(svg: str) -> tuple[ET.Element, list[tuple[float, str]]]:
    root = ET.fromstring(svg)
    labels = [
        (float(t.get("x") or 0), t.text or "")
        for t in root.findall(f"{SVG}text")
        if "bar-label" in (t.get("class") or "")
    ]
    return root, labels


def test_task_labels_never_overlap_few_or_many() -> None:
    """Upright labels need LABEL_PITCH px each: eight ARC ids are all drawn whole (each
    one's own column); 400 tasks get every k-th label, still LABEL_PITCH apart, and every
    bar keeps its tooltip. The labels fit under the axis, above the axis title."""
    from arcmemo.analysis.report.plots import CHAR_WIDTH, LABEL_PITCH, MAX_WIDTH

    for count in (8, 12, 30, 400):
        ids = [f"{index:08x}" for index in range(count)]
        svg = bar_chart(ids, [float(i) for i in range(count)], title="t", x_label="task",
                        y_label="tokens")  # fmt: skip
        root, labels = _bar_labels(str(svg))
        width, height = float(root.get("width") or 0), float(root.get("height") or 0)
        assert width <= MAX_WIDTH
        xs = [x for x, _ in labels]
        assert all(b - a >= LABEL_PITCH for a, b in itertools.pairwise(xs))
        assert len(labels) >= min(count, int((width - 80) // LABEL_PITCH) // 2)
        assert all(text in ids for _, text in labels)  # whole ids, not cut to 8 characters
        if count <= 30:
            assert [text for _, text in labels] == ids
        assert len(root.findall(f"{SVG}rect")) == count
        (axis_title,) = [t for t in root.findall(f"{SVG}text") if t.text == "task"]
        label_bottom = max(float(t.get("y") or 0) for t in root.findall(f"{SVG}text")
                           if "bar-label" in (t.get("class") or "")) + 8 * CHAR_WIDTH  # fmt: skip
        assert label_bottom < float(axis_title.get("y") or 0) - 8 <= height


def test_long_task_ids_are_shortened_with_an_ellipsis() -> None:
    svg = bar_chart(["2025-I-problem-fifteen-long"], [1.0], title="t", x_label="x", y_label="y")
    _, labels = _bar_labels(str(svg))
    assert [text for _, text in labels] == ["2025-I-proble…"]
