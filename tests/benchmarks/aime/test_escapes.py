"""Problem text with JSON escape damage is repaired with a warning naming the problems, or
refused; other control characters are named (arcmemo.benchmarks.aime.escapes)."""

from __future__ import annotations

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
    with pytest.warns(AimeDataWarning) as caught:
        problems = BENCHMARKS.create("aime").load(
            split=None, data=str(FIXTURE), task_ids=None, limit=None
        )
    assert len(problems) == 5
    assert any("repaired" in str(w.message) for w in caught)
