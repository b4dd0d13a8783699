"""``arcmemo report`` and ``arcmemo memory show --html``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from arcmemo.cli.main import cli
from tests.support.paths import FIXTURES
from tests.support.report_pages import with_memory_entries


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def assert_clean_error(result: Result, text: str) -> None:
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert text in result.output


def test_report_writes_the_page(arc_memory_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "sub" / "page.html"
    out.parent.mkdir()
    result = invoke("report", str(arc_memory_run), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.output
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="task-66e6c45b"' in page


def test_report_defaults_to_the_run_directory(aime_run: Path) -> None:
    result = invoke("report", str(aime_run))
    assert result.exit_code == 0, result.output
    assert "toy-1" in (aime_run / "report.html").read_text()


def test_report_compare(arc_memory_run: Path, arc_baseline_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "compare.html"
    result = invoke(
        "report", str(arc_memory_run), "--compare", str(arc_baseline_run), "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    assert '<section id="compare">' in out.read_text()


def test_report_errors_are_clean(tmp_path: Path) -> None:
    assert_clean_error(invoke("report", str(tmp_path)), "not a run directory")
    assert_clean_error(invoke("report", str(tmp_path / "nope")), "does not exist")
    (tmp_path / "results.jsonl").write_text("garbage\n")
    assert_clean_error(invoke("report", str(tmp_path)), "results.jsonl, line 1")


def test_report_of_a_dry_run_says_what_it_left_and_how_to_get_a_report(tmp_path: Path) -> None:
    out = tmp_path / "dry"
    args = ["run", "arc-agi-1", "--data", str(FIXTURES / "arc" / "eval"), "--out", str(out)]
    dry = invoke(*args, "--model", "openai:o4-mini", "--dry-run")
    assert dry.exit_code == 0, dry.output
    estimate = json.loads((out / "estimate.json").read_text())
    calls = estimate["total"]["calls"]

    result = invoke("report", str(out))

    assert_clean_error(result, f"{out}: a dry run's directory, with no results to report")
    line = result.output.strip().splitlines()
    assert len(line) == 1, result.output
    assert f"estimates 8 tasks, {calls['low']:,.0f}-{calls['high']:,.0f} requests, $" in line[0]
    assert "prompts/ holds 8 prompt files" in line[0]
    assert "without --dry-run, then arcmemo report on its --out" in line[0]


def test_memory_show_html(tmp_path: Path) -> None:
    out = tmp_path / "memory.html"
    source = FIXTURES / "memory" / "valid_small.json"
    result = invoke("memory", "show", str(source), "--html", str(out))
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert 'id="mem-search"' in page and "memory valid_small.json" in page
    assert with_memory_entries(page).count('class="entry" id="mem-') >= 1


def test_memory_show_html_bad_file_is_clean(tmp_path: Path) -> None:
    bad = FIXTURES / "memory" / "bad_truncated.json"
    result = invoke("memory", "show", str(bad), "--html", str(tmp_path / "m.html"))
    assert_clean_error(result, "bad_truncated.json")
    assert not (tmp_path / "m.html").exists()
