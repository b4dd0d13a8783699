"""The paper's Tables 4 and 5 from run directories: every cell of the baseline and ArcMemo-PS
rows (three retry depths, plain and strict) as the paper prints it, and the Markdown and
LaTeX output of ``arcmemo.analysis.tables`` against golden files.

Set ``ARCMEMO_UPDATE_GOLDEN=1`` to rewrite the golden files after a deliberate change.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arcmemo.analysis import tables
from tests.support.paper_runs import (
    ATTEMPTS,
    SETTINGS,
    TABLE_4,
    TABLE_5,
    read_summary,
    write_paper_run,
)

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def paper_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("paper")
    return {name: write_paper_run(base / name, name) for name in SETTINGS}


def _row(cells: dict, k: int) -> str:
    def number(value: float) -> str:
        return f"{100 * value:.2f}"

    runs = [number(v) for v in cells["oracle@1"]["subsets"]]
    oracle = []
    for j in range(1, k + 1):
        cell = cells[f"oracle@{j}"]
        std = f" ({number(cell['std'])})" if cell["std"] is not None else ""
        oracle.append(number(cell["mean"]) + std)
    return " | ".join(runs + oracle)


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize(("key", "paper"), [("by_retry", TABLE_4), ("strict_by_retry", TABLE_5)])
def test_summary_holds_every_cell_of_the_papers_rows(
    paper_runs: dict[str, Path], setting: str, key: str, paper: dict[str, list[str]]
) -> None:
    summary = read_summary(paper_runs[setting])
    assert [_row(summary[key][str(d)], ATTEMPTS) for d in range(3)] == paper[setting]


def test_score_is_oracle_at_2_at_the_final_depth(paper_runs: dict[str, Path]) -> None:
    baseline, ps = (read_summary(paper_runs[name]) for name in ("baseline", "ArcMemo-PS"))
    # The paper's headline: 55.17 -> 59.33 at depth 0, and 70.83 oracle@2 after two retries.
    assert round(100 * baseline["by_retry"]["0"]["oracle@2"]["mean"], 2) == 55.17
    assert round(100 * ps["by_retry"]["0"]["oracle@2"]["mean"], 2) == 59.33
    assert round(100 * ps["score"], 2) == 70.83 and ps["score_retry_depth"] == 2
    assert round(100 * ps["strict_score"], 2) == 70.33
    assert ps["oracle@2"] == ps["score"]


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ARCMEMO_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def _runs(paper_runs: dict[str, Path]) -> list[tables.TableRun]:
    return [tables.load_run(paper_runs[name], name) for name in ("baseline", "ArcMemo-PS")]


def test_table_4_markdown_with_a_paired_comparison(paper_runs: dict[str, Path]) -> None:
    runs = _runs(paper_runs)
    comparison = tables.paired(runs[1], runs[0])
    text = tables.render(tables.build_table(runs), "md", comparison=comparison)
    _check_golden("table4.md", text)
    for setting, rows in TABLE_4.items():
        for depth, row in enumerate(rows):
            assert f"| {depth} | {setting} | {row} |" in text


def test_table_5_latex(paper_runs: dict[str, Path]) -> None:
    text = tables.render(tables.build_table(_runs(paper_runs), strict=True), "latex")
    _check_golden("table5.tex", text)
    for setting, rows in TABLE_5.items():
        for depth, row in enumerate(rows):
            assert f"{depth} & {setting} & {row.replace(' | ', ' & ')} \\\\" in text


def test_a_run_without_summary_is_recomputed_from_its_results(tmp_path: Path) -> None:
    run = write_paper_run(tmp_path / "unfinished", "baseline", summary=False)
    loaded = tables.load_run(run)
    assert loaded.caveat and "no summary.json" in loaded.caveat
    text = tables.render(tables.build_table([loaded]), "md")
    assert f"| 0 | unfinished | {TABLE_4['baseline'][0]} |" in text
    assert "unfinished: no summary.json" in text
