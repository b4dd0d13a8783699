"""The tests that took more than ``SLOW_S`` seconds and are not marked ``slow``, listed at the
end of the run: a report to act on (mark the test or make it faster), never a failure, since
a test's time depends on the machine and on what else runs beside it."""

from __future__ import annotations

import pytest

SLOW_S = 5.0


class SlowReport:
    """A pytest plugin; under xdist the controller receives every worker's reports."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, float]] = {}
        self.marked: set[str] = set()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.phases.setdefault(report.nodeid, {})[report.when] = report.duration
        if "slow" in report.keywords:
            self.marked.add(report.nodeid)

    def over(self) -> list[tuple[float, float, str]]:
        """(seconds in all phases, seconds of setup, test id), slowest first."""
        found = [
            (sum(phases.values()), phases.get("setup", 0.0), nodeid)
            for nodeid, phases in self.phases.items()
            if nodeid not in self.marked and sum(phases.values()) > SLOW_S
        ]
        return sorted(found, reverse=True)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        over = self.over()
        if not over:
            return
        title = f"{len(over)} tests over {SLOW_S:g} s not marked slow (mark them or speed them up)"
        terminalreporter.write_sep("=", title)
        for total, setup, nodeid in over:
            terminalreporter.write_line(f"{total:6.1f} s (setup {setup:4.1f} s)  {nodeid}")
