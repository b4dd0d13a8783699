"""The end-of-run list of tests over 5 s that are not marked slow (tests/support/slow_report)."""

from __future__ import annotations

from typing import Literal

import pytest

from tests.support.slow_report import SlowReport

Phase = Literal["setup", "call", "teardown"]


def _report(nodeid: str, when: Phase, seconds: float, *markers: str) -> pytest.TestReport:
    keywords: dict[str, Literal[1]] = {name: 1 for name in (nodeid.split("::")[-1], *markers)}
    return pytest.TestReport(
        nodeid, ("t.py", 0, nodeid), keywords, "passed", None, when, duration=seconds
    )


class _Terminal:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str) -> None:
        self.lines.append(title)

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_only_unmarked_tests_over_the_limit_are_listed_with_their_setup_counted() -> None:
    plugin = SlowReport()
    phases: list[tuple[str, Phase, float, tuple[str, ...]]] = [
        ("t.py::quick", "call", 1.0, ()),
        ("t.py::heavy_setup", "setup", 4.0, ()),  # over only with its setup
        ("t.py::heavy_setup", "call", 1.5, ()),
        ("t.py::marked", "call", 9.0, ("slow",)),
        ("t.py::long_call", "call", 7.0, ()),
    ]
    for nodeid, when, seconds, markers in phases:
        plugin.pytest_runtest_logreport(_report(nodeid, when, seconds, *markers))
    terminal = _Terminal()
    plugin.pytest_terminal_summary(terminal)  # type: ignore[arg-type]
    assert terminal.lines[0].startswith("2 tests over 5 s not marked slow")
    assert [line.split()[-1] for line in terminal.lines[1:]] == [
        "t.py::long_call",
        "t.py::heavy_setup",
    ]
    assert "(setup  4.0 s)" in terminal.lines[2]


def test_nothing_is_printed_when_every_test_is_fast_or_marked() -> None:
    plugin = SlowReport()
    plugin.pytest_runtest_logreport(_report("t.py::marked", "call", 30.0, "slow"))
    terminal = _Terminal()
    plugin.pytest_terminal_summary(terminal)  # type: ignore[arg-type]
    assert terminal.lines == []
