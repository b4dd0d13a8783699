"""``sessions.jsonl``: when each session of a run (one process running it) started, made
progress and ended, so that the run's wall time is the time its sessions ran, not the last
session's.

A session appends a ``start`` line when it begins, a ``progress`` line each time it records
finished tasks, and an ``end`` line when it writes the summary; a session killed with
SIGKILL has no ``end`` and counts up to its last line. The wall time is the length of the
union of the sessions' intervals (sessions that ran side by side, processes sharing a run,
count once), the span the time from the first start to the last line.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class SessionMark(BaseModel):
    """One line of ``sessions.jsonl``."""

    session: str = Field(description="Random id of the session (one process's run).")
    event: Literal["start", "progress", "end"]
    at: float = Field(description="Unix time of the event.")


class WallTime(BaseModel):
    """The time a run's sessions ran."""

    seconds: float = Field(description="Length of the union of the sessions' intervals.")
    sessions: int
    span_seconds: float = Field(description="From the first session's start to the last mark.")


def wall_time(marks: list[SessionMark]) -> WallTime | None:
    """The run's wall time from its session marks (None when none was recorded)."""
    intervals: dict[str, list[float]] = {}
    for mark in marks:
        bounds = intervals.setdefault(mark.session, [mark.at, mark.at])
        bounds[0] = min(bounds[0], mark.at)
        bounds[1] = max(bounds[1], mark.at)
    if not intervals:
        return None
    total = 0.0
    end = float("-inf")
    for first, last in sorted(intervals.values()):
        # Only the part of each interval after the ones before it counts.
        total += max(last, end) - max(first, end)
        end = max(end, last)
    start = min(first for first, _ in intervals.values())
    return WallTime(seconds=total, sessions=len(intervals), span_seconds=end - start)
