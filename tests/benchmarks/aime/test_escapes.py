"""Problem text with JSON escape damage is repaired with a warning naming the problems, or
refused; other control characters are named (arcmemo.benchmarks.aime.escapes)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from arcmemo.benchmarks.aime.data import AimeDataError, AimeDataWarning, load_problems
from arcmemo.benchmarks.aime.escapes import repair_escapes

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "aime" / "escape_damage.jsonl"


def test_the_fixture_loads_repaired_with_warnings_naming_the_problems() -> None:
    with pytest.warns(AimeDataWarning) as caught:
        problems = {p.id: p.problem for p in load_problems(FIXTURE)}
    messages = [str(w.message) for w in caught]
    repaired = next(m for m in messages if "repaired" in m)
    assert "in 3 problems" in repaired
    assert "damaged-frac (\\frac)" in repaired
    assert "damaged-boxed-times (\\times, \\boxed)" in repaired
    assert "doubled-backslash (\\frac)" in repaired
    assert (
        problems["damaged-frac"] == "A jar holds $x = \\frac{3}{4}$ litres of water. Find $100x$."
    )
    assert (
        problems["damaged-boxed-times"]
        == "Compute $6 \\times 7$ and write the result in \\boxed{}."
    )
    assert problems["doubled-backslash"] == "Write $\\frac{1}{2}$ as a percentage."
    # A tab outside math is text, left as it is; a bell is named, not repaired.
    assert problems["tab-outside-math"].endswith("pentagon.\tThen stop.")
    controls = next(m for m in messages if "control characters" in m)
    assert "stray-bell (U+0007)" in controls and "damaged" not in controls


def test_refuse_names_the_damaged_problems() -> None:
    with pytest.raises(AimeDataError, match=r"damaged-frac .*damaged-boxed-times"):
        load_problems(FIXTURE, escape_damage="refuse")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$a\tb$", "$a\tb$"),  # not a command
        ("$\theta$ and \theta", "$\\theta$ and \theta"),  # a tab outside math stays
        ("\\(1 \neq 2\\)", "\\(1 \\neq 2\\)"),
        ("line one\nnext line", "line one\nnext line"),
        ("\foo", "\foo"),  # no command: left, and named as a control character
        ("\x08oxes", "\x08oxes"),  # "boxes" is no command
        ("\binom{5}{2}", "\\binom{5}{2}"),
    ],
)
def test_repairs_only_commands_and_only_tabs_in_math(text: str, expected: str) -> None:
    assert repair_escapes(text)[0] == expected


def test_the_benchmark_option_refuses_damaged_files() -> None:
    from arcmemo.benchmarks.base import BENCHMARKS
    from arcmemo.core.registry import ComponentSpec

    refusing = BENCHMARKS.create(ComponentSpec(name="aime", options={"escape_damage": "refuse"}))
    with pytest.raises(AimeDataError, match="damaged-frac"):
        refusing.load(split=None, data=str(FIXTURE), task_ids=None, limit=None)
    benchmark = BENCHMARKS.create("aime")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the benchmark records them; no Python warning
        problems = benchmark.load(split=None, data=str(FIXTURE), task_ids=None, limit=None)
    assert len(problems) == 5
    repaired, controls = benchmark.data_warnings
    assert repaired.startswith(f"{FIXTURE}: repaired JSON escape damage")
    assert "damaged-frac (\\frac)" in repaired and "stray-bell" in controls


def test_a_run_records_the_repair_among_its_warnings_and_shows_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arcmemo.analysis.report import build_report
    from arcmemo.cli.main import cli

    script = tmp_path / "answers.py"
    script.write_text("def respond(messages):\n    return 'So \\\\boxed{5}.'\n")
    out = tmp_path / "run"
    args = ["run", "aime", "--data", str(FIXTURE), "--model", f"scripted:{script}"]
    result = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    repaired = next(w for w in summary["warnings"] if "repaired JSON escape damage" in w)
    assert "damaged-frac (\\frac)" in repaired and "\n" not in repaired
    assert "benchmark.py" not in result.output and "AimeDataWarning" not in result.output
    # The final table's WARNING row, read across the lines its cell wraps onto (its end may be
    # cut to the width; summary.json has it all).
    flat = " ".join(result.output.replace("│", " ").split())
    assert "WARNING" in flat and "repaired JSON escape damage" in flat
    assert "repaired JSON escape damage" in build_report(out)
