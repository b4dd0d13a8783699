"""Requests cut off in flight: a marker file per provider request while it is out.

A request's answer is logged (``calls.jsonl``) and cached only when it comes back, so a
request that a kill or an interrupt cuts off leaves no record, though the provider may have
billed it, and the resumed run sends it again. While a request is out, the model client
keeps a small marker file for it (:func:`mark_in_flight`) and removes it when the request
ends (answered or failed); a marker left behind by a process that is gone is such a request
(:func:`collect_cut_off`). :class:`Reporting` is where a client reports each request: the
marker and the run's progress display.
"""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from arcmemo.core.progress import ProgressEvent, ProgressSink, RequestEnded, RequestStarted


class CutOffCall(BaseModel):
    """A provider request that was in flight when its process was killed or interrupted."""

    started: str
    stage: str
    task_id: str | None = None
    model: str
    host: str
    pid: int


def mark_in_flight(folder: Path, *, stage: str, task_id: str | None, model: str) -> Path:
    """Leave a marker for a request going out now; the caller removes it when it ends."""
    folder.mkdir(parents=True, exist_ok=True)
    call = CutOffCall(
        started=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        stage=stage,
        task_id=task_id,
        model=model,
        host=socket.gethostname(),
        pid=os.getpid(),
    )
    # Not fsynced: a marker lost with the machine loses only this warning.
    path = folder / f"{call.host}-{call.pid}-{uuid.uuid4().hex}.json"
    path.write_text(call.model_dump_json(), encoding="utf-8")
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def collect_cut_off(folder: Path) -> list[CutOffCall]:
    """The requests left in flight by processes of this host that are gone (their markers
    are removed); markers of live processes and of other hosts stay."""
    if not folder.is_dir():
        return []
    host = socket.gethostname()
    cut_off: list[CutOffCall] = []
    for path in sorted(folder.glob("*.json")):
        try:
            call = CutOffCall.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # torn by the kill while being written, or already collected
        if call.host != host or (call.pid != os.getpid() and _alive(call.pid)):
            continue
        cut_off.append(call)
        path.unlink(missing_ok=True)
    return cut_off


@dataclass(frozen=True)
class Reporting:
    """Where a client reports: its requests and accounted calls to ``progress`` (the run's
    progress display), each request in flight as a marker in ``in_flight_dir`` (a run's
    ``in_flight/``); neither without one."""

    progress: ProgressSink | None = None
    in_flight_dir: Path | None = None

    def emit(self, event: ProgressEvent) -> None:
        if self.progress is not None:
            self.progress.emit(event)

    @contextlib.asynccontextmanager
    async def request(self, *, stage: str, task_id: str | None, model: str) -> AsyncIterator[None]:
        """While one provider request is out: reported started and ended, and marked."""
        self.emit(RequestStarted(stage=stage, task_id=task_id))
        marker = None
        if self.in_flight_dir is not None:
            marker = mark_in_flight(self.in_flight_dir, stage=stage, task_id=task_id, model=model)
        cut_off = True
        try:
            yield
            cut_off = False
        except Exception:
            cut_off = False  # the request failed: it is accounted like an answer
            raise
        finally:
            # A cancellation (Ctrl-C) leaves the marker: the request was cut off in flight.
            if marker is not None and not cut_off:
                marker.unlink(missing_ok=True)
            self.emit(RequestEnded(stage=stage, task_id=task_id))
