"""``arcmemo table`` on runs made by ``arcmemo run`` with the scripted ARC and AIME models."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arcmemo.cli.main import cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ARC_SCRIPT = FIXTURES / "scripts" / "arc_plan.py"
AIME_SCRIPT = FIXTURES / "scripts" / "aime_answers.yaml"
# Right at once; fixed by the first retry (twice); two test inputs, each attempt wrong on a
# different one; two test inputs, both attempts wrong on the second.
TASKS = ["66e6c45b", "00576224", "ca8de6ea", "e345f17b", "bbb1b8b6"]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "300"})


def arc_run(out: Path, tasks: list[str], feedback_rounds: int) -> Result:
    return invoke(
        *("run", "arc-agi-1", "--data", str(FIXTURES / "arc" / "eval"), "--tasks", ",".join(tasks)),
        *(
            "--model",
            f"scripted:{ARC_SCRIPT}",
            "--attempts",
            "2",
            "--feedback-rounds",
            str(feedback_rounds),
        ),
        *("--out", str(out)),
    )


@dataclass
class Runs:
    retried: Path
    first_try: Path
    fewer_tasks: Path
    aime: Path
    retried_output: str


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    base = tmp_path_factory.mktemp("table-cli")
    retried = arc_run(base / "retried", TASKS, feedback_rounds=2)
    assert retried.exit_code == 0, retried.output
    assert arc_run(base / "first-try", TASKS, feedback_rounds=0).exit_code == 0
    assert arc_run(base / "fewer", TASKS[:3], feedback_rounds=0).exit_code == 0
    aime = invoke(
        *("run", "aime", "--data", str(FIXTURES / "aime" / "problems.jsonl")),
        *("--model", f"scripted:{AIME_SCRIPT}", "--attempts", "3", "--out", str(base / "aime")),
    )
    assert aime.exit_code == 0, aime.output
    return Runs(base / "retried", base / "first-try", base / "fewer", base / "aime", retried.output)


def test_run_prints_flat_oracle_rows(runs: Runs) -> None:
    lines = runs.retried_output.splitlines()
    row = next(line for line in lines if " oracle@2 " in line)
    assert "90.0%" in row and "{" not in row
    assert not any("by_retry" in line for line in lines)


def test_table_rows_per_setting_and_retry_depth(runs: Runs) -> None:
    result = invoke(
        *("table", str(runs.retried), str(runs.first_try), "--label", "PS", "--label", "base")
    )
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| ")]
    assert rows == [
        "| feedback rounds | setting | attempt 1 | attempt 2 | oracle@1 | oracle@2 |",
        # depth 0: only 66e6c45b and half of each two-test task; the same first answers
        "| 0 | PS | 40.00 | 40.00 | 40.00 (0.00) | 50.00 |",
        "| 0 | base | 40.00 | 40.00 | 40.00 (0.00) | 50.00 |",
        # the first retry fixes 00576224 and ca8de6ea; the second changes nothing
        "| 1 | PS | 80.00 | 80.00 | 80.00 (0.00) | 90.00 |",
        "| 2 | PS | 80.00 | 80.00 | 80.00 (0.00) | 90.00 |",
    ]


def test_strict_table_and_paired_comparison(runs: Runs) -> None:
    result = invoke("table", str(runs.retried), str(runs.first_try), "--strict", "--paired")
    assert result.exit_code == 0, result.output
    # strict: neither two-test task has one program right on both inputs
    assert "| 2 | retried | 60.00 | 60.00 | 60.00 (0.00) | 60.00 |" in result.output
    assert "Paired comparison retried − first-try on 5 tasks" in result.output
    assert "- sign test: 2 wins, 0 losses, 3 ties; exact two-sided p = 0.5" in result.output
    assert "by retried only 2, by first-try only 0 (both 1, neither 2)" in result.output
    assert "- tasks that differ: 00576224 +100.00, ca8de6ea +100.00" in result.output


def test_compare_two_runs_under_a_table_written_as_latex(runs: Runs, tmp_path: Path) -> None:
    out = tmp_path / "table.tex"
    result = invoke(
        *("table", str(runs.retried), "--format", "latex", "--out", str(out)),
        *("--compare", str(runs.retried), str(runs.first_try)),
    )
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.startswith("\\begin{tabular}{rlrrrr}\n")
    assert "1 & retried & 80.00 & 80.00 & 80.00 (0.00) & 90.00 \\\\" in text
    assert "% Paired comparison retried − first-try on 5 tasks" in text


def test_csv_and_aime_tables(runs: Runs) -> None:
    result = invoke("table", str(runs.aime), "--format", "csv")
    assert result.exit_code == 0, result.output
    header, row = result.stdout.splitlines()
    assert header == "setting,pass@1,pass@1_std,pass@2,pass@2_std,pass@3,pass@3_std,maj@3,maj@3_std"
    # toy-1 2/3 right, toy-2 2/3, toy-3 1/3; majority right on toy-1 and toy-2
    assert row.startswith("aime,55.5556,19.2450,88.8889,19.2450,100.0000,0.0000,66.6667,")
    # The notes are on stderr, not rows a CSV reader takes for data.
    assert result.stderr.startswith("# ") and "#" not in result.stdout


@pytest.mark.parametrize(
    ("which", "message"),
    [
        ("aime", "runs of different benchmarks: retried (arc-agi-1) and aime (aime)"),
        ("fewer_tasks", "runs of different task sets: retried (5 tasks) and fewer (3 tasks"),
    ],
)
def test_runs_that_do_not_belong_together_are_refused(runs: Runs, which: str, message: str) -> None:
    result = invoke("table", str(runs.retried), str(getattr(runs, which)))
    assert result.exit_code == 1
    assert f"Error: {message}" in result.output and "Traceback" not in result.output
    paired = invoke(
        "table", str(runs.retried), "--compare", str(runs.retried), str(getattr(runs, which))
    )
    assert paired.exit_code == 1 and message in paired.output


def test_usage_errors(runs: Runs, tmp_path: Path) -> None:
    too_many = invoke("table", str(runs.retried), "--label", "a", "--label", "b")
    assert too_many.exit_code == 2 and "2 --label for 1 runs" in too_many.output
    three = invoke("table", str(runs.retried), str(runs.first_try), str(runs.retried), "--paired")
    assert three.exit_code == 2 and "--paired compares two runs; 3 were given" in three.output
    not_a_run = invoke("table", str(tmp_path))
    assert (
        not_a_run.exit_code == 1 and "no config.json; is this a run directory?" in not_a_run.output
    )


def test_over_orders_aggregates_one_setting_and_refuses_another(runs: Runs, tmp_path: Path) -> None:
    shuffled = tmp_path / "order-7"
    made = invoke(
        *("run", "arc-agi-1", "--data", str(FIXTURES / "arc" / "eval"), "--tasks", ",".join(TASKS)),
        *("--model", f"scripted:{ARC_SCRIPT}", "--attempts", "2", "--feedback-rounds", "0"),
        *("--order-seed", "7", "--out", str(shuffled)),
    )
    assert made.exit_code == 0, made.output
    result = invoke("table", "--over-orders", str(runs.first_try), str(shuffled))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "| feedback rounds | metric | mean | order none | order 7 |"
    # The scripted model answers the same whatever the order: no spread between orders.
    assert any(line.startswith("| 0 | oracle@2 | ") and "(0.00)" in line for line in lines)
    mixed = invoke("table", "--over-orders", str(runs.retried), str(shuffled))
    assert mixed.exit_code == 1 and "differ in feedback_rounds (2 vs 0)" in mixed.output
    both = invoke("table", "--over-orders", "--paired", str(runs.first_try), str(shuffled))
    assert both.exit_code == 2 and "no paired comparison" in both.output
