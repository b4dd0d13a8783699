"""Reports built from scripted runs: what they must show, and that model text is escaped."""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path

import pytest

from arcmemo.analysis.report import (
    RunData,
    build_report,
    html,
    load_run,
    render_memory_page,
    render_report,
    write_report,
)
from arcmemo.core.bulk import collector_pauses
from tests.support.paths import FIXTURES
from tests.support.report_pages import DATA_OPEN, grid_attr, task_section, with_memory_entries
from tests.support.report_runs import ARC_TASKS, XSS

ESCAPED_XSS = "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;"


@pytest.fixture(scope="module")
def arc_page(arc_memory_run: Path) -> str:
    return build_report(arc_memory_run)


@pytest.fixture(scope="module")
def aime_page(aime_run: Path) -> str:
    return build_report(aime_run)


def test_overview_shows_summary_numbers_and_config(arc_page: str, arc_memory_run: Path) -> None:
    summary = json.loads((arc_memory_run / "summary.json").read_text())
    cards = arc_page[arc_page.index('id="summary-cards"') :]
    assert f"{100 * summary['score']:.1f}%" in cards
    for label in ("score", "strict score", "oracle@1", "oracle@2", "model requests", "wall time"):
        assert f'<div class="k">{label}</div>' in cards
    assert "configuration of run" in arc_page
    assert "<td>update_every</td><td><code>2</code></td>" in arc_page


def test_task_table_lists_every_task_with_status(arc_page: str) -> None:
    table = arc_page[
        arc_page.index('id="task-table"') : arc_page.index(
            "</table>", arc_page.index('id="task-table"')
        )
    ]
    rows = re.findall(r'<tr data-task="([^"]+)" data-status="([^"]+)">', table)
    assert dict(rows) == {
        "66e6c45b": "solved",
        "00576224": "solved",
        "68b67ca3": "unsolved",
        "e345f17b": "solved",
        "bbb1b8b6": "partial",
        "ca8de6ea": "solved",
    }
    # processing order, as in task_order.json
    assert [task for task, _ in rows] == ARC_TASKS
    assert "th data-sort" in table and 'id="task-filter"' in arc_page


def test_arc_task_shows_train_and_test_grids(arc_page: str) -> None:
    raw = json.loads((FIXTURES / "arc" / "eval" / "66e6c45b.json").read_text())
    section = task_section(arc_page, "66e6c45b")
    for pair in raw["train"]:
        assert grid_attr(pair["input"]) in section
        assert grid_attr(pair["output"]) in section
    assert grid_attr(raw["test"][0]["input"]) in section
    assert grid_attr(raw["test"][0]["output"]) in section  # the expected output


def test_retries_show_each_program_with_feedback(arc_page: str) -> None:
    section = task_section(arc_page, "00576224")
    # round 0 is the identity program, round 1 the fix; both with their feedback
    assert section.count("round 0 (first try)") == 2
    assert section.count("round 1 (retry with feedback)") == 2
    assert "    return grid\n" in section
    assert "same = np.tile(grid, (1, 3))" in section
    assert "feedback: train pairs 0/2 passed" in section
    assert "feedback: train pairs 2/2 passed" in section
    crash = task_section(arc_page, "68b67ca3")
    assert "ZeroDivisionError" in crash
    assert crash.count("round 2 (retry with feedback)") == 2


def test_wrong_test_output_is_drawn_next_to_expected_with_marks(arc_page: str) -> None:
    section = task_section(arc_page, "bbb1b8b6")
    # the spoiled program answers all zeros (4x4) on test 2: cells differing are marked
    # (drawn black with a mark: a letter instead of the digit 0)
    assert re.search(r'data-g="(?:[0a]{4},){3}[0a]{4}"', section)
    assert re.search(r'data-g="[0a,]*a[0a,]*"', section)
    assert "cells differ" in section
    assert '<span class="bad">test 2 ✗</span>' in section
    assert '<span class="ok">test 1 ✓</span>' in section
    right = task_section(arc_page, "66e6c45b")
    drawn = re.findall(r'data-g="([^"]*)"', right.split("test output", 1)[1])
    assert drawn and all(re.fullmatch(r"[0-9,]+", cells) for cells in drawn)


def test_selected_concepts_link_to_memory_entries(arc_page: str) -> None:
    section = task_section(arc_page, "00576224")
    links = re.findall(r'<a class="tag" href="#(mem-[^"]+)">([^<]+)</a>', section)
    assert ("mem-tile-grid", "tile grid") in links
    entries = with_memory_entries(arc_page)
    for target, _ in links:
        assert f'id="{target}"' in entries
    # a name the selector made up matches nothing: shown, but without a link
    assert "made up concept" in section


def test_concepts_written_from_solved_tasks(arc_page: str, arc_memory_run: Path) -> None:
    outcomes = [
        json.loads(x) for x in (arc_memory_run / "abstraction.jsonl").read_text().splitlines()
    ]
    writers = {o["task_id"] for o in outcomes if o["written"]}
    assert writers
    for task_id in writers:
        section = task_section(arc_page, task_id)
        assert "written to memory from this task" in section
        assert 'href="#mem-corner-copy">corner copy</a>' in section
    unsolved = task_section(arc_page, "68b67ca3")
    assert "written to memory from this task" not in unsolved


def test_memory_section_lists_added_concepts_usage_and_growth(arc_page: str) -> None:
    memory = arc_page[arc_page.index('<section id="memory">') :]
    added = memory[memory.index('<div class="added">') : memory.index('<div class="changed">')]
    assert 'href="#mem-corner-copy">corner copy</a>' in added
    changed = memory[memory.index('<div class="changed">') :]
    assert 'href="#mem-tile-grid">tile grid</a>' in changed.split("</div>", 1)[0]
    usage = memory[memory.index('id="usage-table"') :]
    # every task selected "tile grid"; the run solved 4 of the 6
    assert re.search(r'>tile grid</a></td><td class="num">\d+</td><td class="num">\d+</td>', usage)
    assert "Memory size over batches" in arc_page
    assert 'id="mem-search"' in memory
    assert '<span class="badge added">added</span>' in with_memory_entries(memory)


def test_plots_are_inline_svg(arc_page: str) -> None:
    for title in ("Score by retry depth", "oracle@k vs k", "Tokens per task (green: solved)"):
        assert f">{title}</text>" in arc_page
    assert arc_page.count("<svg") >= 4


def test_model_text_is_escaped(arc_page: str, aime_page: str) -> None:
    for page in (arc_page, aime_page):
        assert XSS not in page
        opened = "".join(
            task_section(page, tid) for tid in re.findall(r'<tr data-task="([^"]+)"', page)
        )
        assert XSS not in opened and XSS not in with_memory_entries(page)
        assert ESCAPED_XSS in opened
        # the report's own script is the only one that runs; the rest is data: tasks'
        # details and memory groups (whose anchors are ids of [A-Za-z0-9_-])
        scripts = re.findall(r"<script[^>]*>", page)
        assert scripts[-1] == "<script>" and page.count("<script>") == 1
        memory_open = re.compile(
            r'<script type="application/x-deflate-base64" class="mem-data" '
            r'data-anchors="[A-Za-z0-9_ -]*">'
        )
        assert {o for o in scripts[:-1] if not memory_open.fullmatch(o)} == {DATA_OPEN}
        assert page.count("</script>") == len(scripts)
        # which holds base64 only: nothing in it can end it or open a comment
        packed = re.findall(
            r'<script type="application/x-deflate-base64"[^>]*>(.*?)</script>', page, re.S
        )
        assert len(packed) == len(scripts) - 1
        assert all(re.fullmatch(r"[A-Za-z0-9+/=]+", text) for text in packed)
        assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert "https://" not in page


def test_aime_report_shows_answers_against_the_correct_one(aime_page: str) -> None:
    assert "pass@1" in aime_page and "pass@3" in aime_page and "maj@3" in aime_page
    assert "avg@" not in aime_page
    section = task_section(aime_page, "toy-2")
    assert "Find the number of positive divisors of $2^{15}$." in section
    assert "correct answer: <b>16</b>" in section
    assert "majority vote wrong" in section
    answers = section[section.index('<table class="data answers">') :]
    assert "<td>1</td><td>16</td><td>16</td>" in answers
    assert answers.count("<td>15</td><td>15</td>") == 2
    assert '<span class="ok">✓</span>' in answers and '<span class="bad">✗</span>' in answers
    # reasoning is present but collapsed
    assert "<details><summary>reasoning" in section and "forgot one again" in section
    assert '<span class="bad">wrong ✗</span>' in section and "test 1" not in section
    missing = task_section(aime_page, "toy-3")
    assert "no final answer found" in missing
    assert "<td>–, –, 73 / 73</td>" in aime_page


def test_compare_lists_wins_and_losses(arc_memory_run: Path, arc_baseline_run: Path) -> None:
    page = build_report(arc_memory_run, compare=[arc_baseline_run])
    compare = page[page.index('<section id="compare">') : page.index('<section id="details">')]

    def listed(kind: str) -> list[str]:
        start = compare.index(f'<div class="{kind}">')
        return re.findall(
            r'href="#task-[^"]+">([^<]+)</a>', compare[start : compare.index("</div>", start)]
        )

    assert sorted(listed("wins")) == sorted(["66e6c45b", "00576224", "e345f17b", "ca8de6ea"])
    assert listed("losses") == ["bbb1b8b6"]
    assert listed("neither") == ["68b67ca3"]
    assert 'id="summary-table"' in page  # the runs' numbers side by side
    assert page.count(">Score by retry depth</text>") == 1
    # both folders are called "run": the labels fall back to the paths
    assert f"<th data-sort>{arc_baseline_run}</th>" in page


def test_report_without_reloadable_tasks_still_builds(arc_memory_run: Path, tmp_path: Path) -> None:
    run = load_run(arc_memory_run, data=str(tmp_path / "moved-away"))
    page = render_report(run)
    assert "could not be reloaded" in page
    assert 'id="task-66e6c45b"' in page
    assert '<table class="grid"' in task_section(page, "66e6c45b")  # produced outputs


def test_overview_shows_the_runs_warnings_and_errors(arc_memory_run: Path) -> None:
    run = load_run(arc_memory_run)
    run.summary = {
        **run.summary,
        "warnings": ["2 of 6 tasks got no memory entry from the selector (first, t: x)"],
        "errors": {"timeout": {"count": 1, "first": f"read {XSS}", "task": "68b67ca3"}},
    }
    page = render_report(run)
    overview = page[page.index('id="overview"') : page.index('id="tasks"')]
    assert '<li class="bad">error: 1 task(s) ended on timeout (first, 68b67ca3: read ' in overview
    assert ESCAPED_XSS in overview and XSS not in overview
    assert (
        '<li class="warn">warning: 2 of 6 tasks got no memory entry from the selector' in overview
    )


def test_memory_page_groups_entries_and_escapes(arc_memory_run: Path) -> None:
    run = load_run(arc_memory_run)
    memory = run.final_memory
    assert memory is not None
    memory.concepts[0].description = XSS
    page = with_memory_entries(render_memory_page(memory, title="memory <b>x</b>"))
    assert XSS not in page and ESCAPED_XSS in page
    assert "memory &lt;b&gt;x&lt;/b&gt;" in page
    assert "<b>structures</b>" in page and "<b>routines: grid manipulation</b>" in page
    assert 'id="mem-search"' in page
    assert page.count('class="entry" id="mem-') == len(memory.concepts)
    # relations to entries of the memory link to them
    background = memory.find("background")
    assert background is not None and "extract objects" in background.relations
    assert '<a href="#mem-extract-object">extract objects</a>' in page


def test_a_400_task_page_is_smaller_than_the_data_it_shows(synthetic_400: Path) -> None:
    """Grids take one character per cell, and nothing is repeated per cell as markup."""
    page = build_report(synthetic_400)
    data = sum(f.stat().st_size for f in (synthetic_400.parent / "data").iterdir())
    shown = (synthetic_400 / "results.jsonl").stat().st_size + data
    assert len(page.encode()) < shown
    assert page.count('<section class="task"') == 400
    details = page[page.index('<section id="details">') : page.index("<script>")]
    assert "<td" not in details


def test_the_cycle_collector_is_paused_while_a_report_is_built_where_allowed(
    arc_memory_run: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Reading a big run would trigger a full collection again and again; where the host
    allows it, it is paused while the run is read and rendered, and left as it was (on, or
    off) afterwards."""
    seen: list[bool] = []
    real_load = html.load_run

    def load(path: Path, **options: object) -> RunData:
        seen.append(gc.isenabled())
        return real_load(path, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(html, "load_run", load)
    assert gc.isenabled()
    build_report(arc_memory_run)  # a library call leaves the collector alone
    assert seen == [True] and gc.isenabled()
    with collector_pauses():
        build_report(arc_memory_run)
        assert seen == [True, False] and gc.isenabled()
        write_report(arc_memory_run, tmp_path / "report.html")
        assert seen == [True, False, False] and gc.isenabled()
        gc.disable()
        try:
            build_report(arc_memory_run)
            assert not gc.isenabled()
        finally:
            gc.enable()


def test_the_written_page_is_the_page_rendered_whole(
    arc_memory_run: Path, arc_baseline_run: Path, tmp_path: Path
) -> None:
    """write_report writes the page piece by piece as it renders: the same page."""
    out = write_report(arc_memory_run, tmp_path / "report.html", compare=[arc_baseline_run])
    written = out.read_text(encoding="utf-8")
    whole = build_report(arc_memory_run, compare=[arc_baseline_run])

    def timeless(page: str) -> str:
        return re.sub(r"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", "", page)

    assert len(written) > 50_000 and timeless(written) == timeless(whole)
    assert list(html._batched(iter("abcde"), 2)) == ["ab", "cd", "e"]


def test_each_benchmark_words_its_own_charts_and_details(arc_page: str, aime_page: str) -> None:
    """AIME's chart is pass@k over samples, and its details promise answers, not grids."""
    details = aime_page[aime_page.index('<section id="details">') :]
    assert ">pass@k vs k</text>" in aime_page and ">k (samples)</text>" in aime_page
    assert "oracle@k" not in aime_page and "grids" not in details.split("</p>")[0]
    assert "the integer extracted from it" in details.split("</p>")[0]
    assert ">oracle@k vs k</text>" in arc_page
    arc_details = arc_page[arc_page.index('<section id="details">') :].split("</p>")[0]
    assert "its grids, programs and feedback" in arc_details
