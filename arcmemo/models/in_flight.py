"""Requests cut off in flight: a marker file per provider request while it is out.

A request's answer is logged (``calls.jsonl``) and cached only when it comes back, so a
request that a kill or an interrupt cuts off leaves no record, though the provider may have
billed it, and the resumed run sends it again. While a request is out, the model client
keeps a small marker file for it (:func:`mark_in_flight`) and removes it when the request
ends (answered or failed); a marker left behind by a process that is gone is such a request
(:func:`collect_cut_off`).
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel


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
