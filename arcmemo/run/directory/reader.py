"""Reading a run directory: reports, bootstrapping and ``abstract --from`` read a run
through :class:`RunDirectory`, which never changes a file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from arcmemo.abstraction.outcome import AbstractionOutcome
from arcmemo.core.bulk import paused_gc
from arcmemo.core.files import read_json_lines
from arcmemo.core.records import TaskResult
from arcmemo.memory.schema import Memory
from arcmemo.memory.store import parse_memory
from arcmemo.models.accounting import CallRecord, UsageSummary, usage_from_records
from arcmemo.models.in_flight import CutOffCall
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.legacy import LEGACY
from arcmemo.run.directory.paths import RunPaths
from arcmemo.run.directory.records import (
    RUNDIR_FORMAT,
    BatchCommit,
    ConfigFile,
    RunDirError,
    Schedule,
    TaskProgress,
)
from arcmemo.run.directory.sessions import SessionMark, WallTime, wall_time
from arcmemo.run.directory.snapshots import SnapshotDelta, apply_delta

RecordT = TypeVar("RecordT", bound=BaseModel)


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise RunDirError(
            f"{path}: not valid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None


class RunDirectory(RunPaths):
    """Reads the files of one run; never changes them."""

    def cut_off_calls(self) -> list[CutOffCall]:
        """The requests earlier sessions of the run left in flight (perhaps paid, and made
        again by the session after)."""
        return [c for _, c, _ in read_json_lines(self.cut_off_path, CutOffCall) if c]

    def read_config(self) -> RunConfig | None:
        """The saved configuration, or None for a new directory.

        A field the file predates reads as what that run did (see ``LEGACY``).
        """
        if not self.config_path.exists():
            return None
        saved = _read_json(self.config_path)
        if isinstance(saved, dict):
            version = saved.setdefault("format_version", 1)
            if isinstance(version, int) and version > RUNDIR_FORMAT:
                raise RunDirError(
                    f"{self.config_path}: format_version {version} was written by a newer "
                    f"arcmemo (this one reads up to {RUNDIR_FORMAT}); upgrade arcmemo"
                )
            for name, then in LEGACY.items():
                saved.setdefault(name, then(saved))
        try:
            ConfigFile.model_validate(saved)
            if isinstance(saved, dict):
                saved = {k: v for k, v in saved.items() if k != "format_version"}
            return RunConfig.model_validate(saved)
        except ValidationError as error:
            raise RunDirError(f"{self.config_path}: not a valid run config:\n{error}") from None

    def require_config(self) -> RunConfig:
        """The saved configuration; an error naming the folder when there is none."""
        config = self.read_config()
        if config is None:
            raise RunDirError(f"{self.path}: no config.json; is this a run directory?")
        return config

    def finished(self) -> dict[str, TaskResult]:
        """Results written so far, by task id (a torn last line is skipped)."""
        results: dict[str, TaskResult] = {}
        for number, result, why in read_json_lines(self.results_path, TaskResult):
            if result is None:
                raise RunDirError(
                    f"{self.results_path}, line {number}: not a valid task result ({why})"
                )
            results[result.task_id] = result
        return results

    def completed(self) -> dict[str, TaskResult]:
        """Finished results that need no redo: those that did not end on a model error."""
        return {task_id: r for task_id, r in self.finished().items() if r.error is None}

    def read_summary(self) -> dict[str, Any] | None:
        if not self.summary_path.exists():
            return None
        summary = _read_json(self.summary_path)
        if not isinstance(summary, dict):
            raise RunDirError(f"{self.summary_path}: expected a JSON object")
        return summary

    def read_task_order(self) -> list[str] | None:
        """Task ids in processing order, or None when the run never started."""
        if not self.task_order_path.exists():
            return None
        order = _read_json(self.task_order_path)
        if not isinstance(order, list) or not all(isinstance(i, str) for i in order):
            raise RunDirError(f"{self.task_order_path}: expected a list of task ids")
        return order

    def ordered_results(self) -> list[TaskResult]:
        """Finished results in processing order (then any others, by id)."""
        results = self.finished()
        order = self.read_task_order() or []
        ranked = [results[i] for i in order if i in results]
        return ranked + [results[i] for i in sorted(set(results) - set(order))]

    def calls(self) -> list[CallRecord]:
        """Every logged model call (lines torn or garbled by a crash are skipped)."""
        return [record for _, record, _ in read_json_lines(self.calls_path, CallRecord) if record]

    def usage(self) -> UsageSummary:
        """Usage totals of every call the run made, across resumed sessions."""
        return usage_from_records(self.calls())

    def snapshots(self) -> list[Path]:
        """Memory snapshots of an online run (whole or deltas), oldest first."""
        return sorted(self.memory_dir.glob("batch-*.json"))

    def _delta(self, path: Path) -> SnapshotDelta:
        return _validated(path, _read_json(path), SnapshotDelta)

    def snapshot_raw(self, path: Path) -> dict[str, Any]:
        """The JSON object of the memory a snapshot (or ``initial.json``) holds, a delta's
        rebuilt from the full memory its chain starts at."""
        chain: list[tuple[Path, SnapshotDelta]] = []
        while path.name.endswith(".delta.json"):
            if len(chain) > 100_000 or any(p == path for p, _ in chain):
                raise RunDirError(f"{path}: its chain of bases loops")
            delta = self._delta(path)
            chain.append((path, delta))
            path = self.memory_dir / delta.base
            if not path.exists():
                raise RunDirError(f"{chain[-1][0]}: its base {delta.base} does not exist")
        with paused_gc():  # a memory's JSON is millions of objects
            raw = _read_json(path)
        if not isinstance(raw, dict):
            raise RunDirError(f"{path}: not a memory (expected a JSON object)")
        for where, delta in reversed(chain):
            try:
                raw = apply_delta(raw, delta)
            except (KeyError, IndexError, TypeError, ValueError) as error:
                raise RunDirError(f"{where}: does not apply to its base ({error!r})") from None
        return raw

    def snapshot_memory(self, path: Path) -> Memory:
        """The memory a snapshot holds (a delta's rebuilt), validated as a memory file is."""
        if not path.name.endswith(".delta.json"):
            return Memory.load(path)
        return parse_memory(json.dumps(self.snapshot_raw(path)), path)

    def snapshot_entries(self, path: Path) -> int:
        """Concepts and lessons of a snapshot's memory, read without validating it (a
        delta records the number: nothing is rebuilt)."""
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            if path.name.endswith(".delta.json"):
                return SnapshotDelta.model_validate(saved).entries
            return len(saved["concepts"]) + len(saved["lessons"])
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
            raise RunDirError(f"{path}: not a memory snapshot ({error})") from None

    def snapshot_sha256(self, path: Path) -> str:
        """SHA-256 of the text of a snapshot's memory (a delta records it)."""
        if path.name.endswith(".delta.json"):
            return self._delta(path).sha256
        return hashlib.sha256(path.read_bytes()).hexdigest()

    def read_processed(self) -> list[str]:
        """Task ids whose results were already recorded in the memory (online runs)."""
        if not self.processed_path.exists():
            return []
        processed = _read_json(self.processed_path)
        if isinstance(processed, list):  # written before batch commits existed
            return [str(i) for i in processed]
        commit = self.read_commit()
        return commit.processed if commit else []

    def read_commit(self) -> BatchCommit | None:
        """The last batch fully processed, or None before the first one (or in a run that
        predates batch commits)."""
        if not self.processed_path.exists():
            return None
        saved = _read_json(self.processed_path)
        if isinstance(saved, list):
            return None
        return _validated(self.processed_path, saved, BatchCommit)

    def read_schedule(self) -> Schedule | None:
        """The batches of a run in task batches, or None when it has not started."""
        if not self.schedule_path.exists():
            return None
        return _validated(self.schedule_path, _read_json(self.schedule_path), Schedule)

    def task_progress(self) -> dict[str, TaskProgress]:
        """The latest state of each task of a passes schedule."""
        progress: dict[str, TaskProgress] = {}
        for number, record, why in read_json_lines(self.passes_path, TaskProgress):
            if record is None:
                raise RunDirError(f"{self.passes_path}, line {number}: not a task state ({why})")
            progress[record.result.task_id] = record
        return progress

    def resume_memory(self, config: RunConfig) -> Memory | None:
        """The memory of :meth:`resume_memory_path`, a delta's rebuilt."""
        path = self.resume_memory_path(config)
        return None if path is None else self.snapshot_memory(path)

    def resume_memory_path(self, config: RunConfig) -> Path | None:
        """The memory a (resumed) run continues from: the snapshot of its last finished
        batch, else the copy taken before its first batch, else ``config.memory``."""
        if config.memory is None:
            return None
        commit = self.read_commit()
        if commit is not None and commit.snapshot is not None:
            return self.memory_dir / commit.snapshot
        if self.initial_memory_path.exists():
            return self.initial_memory_path
        return Path(config.memory)

    def session_marks(self) -> list[SessionMark]:
        """When each session of the run started, made progress and ended (``sessions.jsonl``)."""
        return [m for _, m, _ in read_json_lines(self.sessions_path, SessionMark) if m]

    def wall_time(self) -> WallTime | None:
        """The time the run's sessions ran (None for a run from before it was recorded)."""
        return wall_time(self.session_marks())

    def abstraction_outcomes(self) -> list[AbstractionOutcome]:
        """What each abstraction of the run wrote and what failed, in order."""
        return [o for _, o, _ in read_json_lines(self.abstraction_path, AbstractionOutcome) if o]


def _validated(path: Path, saved: object, model: type[RecordT]) -> RecordT:
    try:
        return model.model_validate(saved)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise RunDirError(f"{path}: {where + ': ' if where else ''}{first['msg']}") from None
