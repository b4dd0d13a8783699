"""A run's wall time is the time its sessions ran: a killed session counts up to its last
recorded progress, the gap before a resume does not count, the span says how long it took."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from arcmemo.analysis.report import build_report
from arcmemo.analysis.report.summary import wall_time_text
from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.sessions import SessionMark, wall_time
from arcmemo.run.pipeline import run_benchmark
from tests.support.paths import FIXTURES

AIME_FILE = FIXTURES / "aime" / "problems.jsonl"
SCRIPT = {
    "Find $2 + 3$.": "So \\boxed{5}.",
    "divisors of $2^{15}$": "There are 16 divisors: \\boxed{016}",
    "divided by $1000$": "\\boxed{73}",
}


def _run(out: Path) -> dict[str, Any]:
    config = RunConfig(benchmark="aime", data=str(AIME_FILE), model="scripted:aime", out=out)
    client = ModelClient(
        ScriptedProvider.from_script(SCRIPT),
        config=ModelConfig(),
        call_log_path=out / "calls.jsonl",
    )
    return asyncio.run(run_benchmark(config, models={"solver": client}))


def _marks(out: Path) -> list[SessionMark]:
    lines = (out / "sessions.jsonl").read_text().splitlines()
    return [SessionMark.model_validate_json(line) for line in lines]


def test_a_killed_then_resumed_run_reports_both_sessions_summed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = _run(out)
    assert first["sessions"] == 1
    assert [m.event for m in _marks(out)] == ["start", "progress", "progress", "progress", "end"]
    # What kill -9 after the first task leaves: one result, no summary, no end mark. The
    # session ran 600 s, an hour before the resume.
    results = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text(results[0])
    (out / "summary.json").unlink()
    killed = _marks(out)[:2]
    began = killed[0].at - 3600
    killed[0].at, killed[1].at = began, began + 600
    (out / "sessions.jsonl").write_text("".join(m.model_dump_json() + "\n" for m in killed))

    second = _run(out)

    marks = _marks(out)
    resumed = [m for m in marks if m.session != killed[0].session]
    assert [m.event for m in resumed] == ["start", "progress", "progress", "end"]
    resumed_s = resumed[-1].at - resumed[0].at
    assert second["sessions"] == 2
    assert second["wall_seconds"] == pytest.approx(600 + resumed_s, abs=1e-3)
    assert second["span_seconds"] == pytest.approx(resumed[-1].at - began, abs=1e-3)
    assert second["span_seconds"] > 3600
    text = wall_time_text(second)
    assert text is not None and text.startswith("10.0 min over 2 sessions (span 1 h ")
    saved = json.loads((out / "summary.json").read_text())
    assert saved["wall_seconds"] == second["wall_seconds"] and saved["format_version"] == 4
    assert f'<div class="v">{text}</div>' in build_report(out)


def test_sessions_side_by_side_count_once() -> None:
    def mark(session: str, at: float) -> SessionMark:
        return SessionMark(session=session, event="progress", at=at)

    # a: 0-100, b: 50-120 (beside a), c: 200-230 (after a gap)
    marks = [mark("a", 0), mark("b", 50), mark("a", 100), mark("b", 120)]
    marks += [mark("c", 200), mark("c", 230)]
    timed = wall_time(marks)
    assert timed is not None
    assert (timed.seconds, timed.sessions, timed.span_seconds) == (150, 3, 230)
    assert wall_time([]) is None


def test_a_summary_from_before_sessions_shows_its_wall_time_alone() -> None:
    assert wall_time_text({"wall_seconds": 104.0}) == "1.7 min"
    assert wall_time_text({"wall_seconds": 48.25}) == "48.2 s"
    assert wall_time_text({"wall_seconds": 30.0, "sessions": 1, "span_seconds": 30.0}) == "30.0 s"
