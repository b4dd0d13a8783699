"""Writing a run directory: :class:`RunWriter` is what a running run holds; it starts (or
resumes) the run, repairing what a crash left, then appends to it under its locks and claims."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from arcmemo.abstraction.outcome import AbstractionOutcome, append_outcomes
from arcmemo.core.files import (
    LockHeldError,
    append_lines,
    atomic_write_text,
    cut_torn_tail,
    file_lock,
    held_lock,
)
from arcmemo.core.records import TaskResult
from arcmemo.memory.schema import Memory
from arcmemo.memory.store import dump_memory
from arcmemo.models.accounting import CallRecord
from arcmemo.models.in_flight import collect_cut_off
from arcmemo.run.config import RunConfig, result_values
from arcmemo.run.directory.legacy import C, spelled_out
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import (
    RUNDIR_FORMAT,
    BatchCommit,
    RunDirError,
    Schedule,
    TaskProgress,
    config_file_type,
)
from arcmemo.run.directory.sessions import SessionMark
from arcmemo.run.directory.snapshots import MemoryParts, make_delta


def _kept(fingerprints: dict[str, str]) -> dict[str, str]:
    # The memory a run started from stays its identity while the run grows the file.
    return {key: value for key, value in fingerprints.items() if key == "memory"}


class RunWriter(RunDirectory):
    """The run directory of a run in progress: starts (or resumes) it and appends to it."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._lock = threading.Lock()
        self._seen: dict[str, TaskResult] = {}
        self._seen_bytes = 0
        # The last snapshot written, for the next one's delta: its file name and memory.
        self._last_snapshot: tuple[str, MemoryParts] | None = None
        # This process's session of the run, once begun (sessions.jsonl).
        self._session: str | None = None

    def refuse_a_file(self) -> None:
        """Fail with a one-line error when the run directory's path is an existing file."""
        if self.path.exists() and not self.path.is_dir():
            raise RunDirError(
                f"--out {self.path}: an existing file, not a run directory; give a directory "
                "(new or a run to resume)"
            )

    @contextlib.contextmanager
    def occupy(self, *, alone: bool) -> Iterator[None]:
        """Hold ``run.lock`` while the run's process lives: ``alone`` (a run in task batches, whose
        resume cuts the files back to its last commit) refuses any other process; otherwise
        the lock is shared by processes that split the tasks through :meth:`claim`."""
        self.refuse_a_file()
        self.path.mkdir(parents=True, exist_ok=True)
        holder = f"pid {os.getpid()} on {socket.gethostname()}"
        try:
            with held_lock(self.run_lock_path, holder=holder, shared=not alone):
                yield
        except LockHeldError as error:
            raise RunDirError(
                f"{self.path} is in use by another live run ({error.holder}); a run in task "
                "batches (--schedule passes or --update online) keeps its run directory to itself: "
                "wait for it to end, or use another --out"
            ) from None

    def claim(self, task_id: str) -> contextlib.ExitStack | None:
        """Claim ``task_id`` for this process until the returned stack is closed, or None
        when another live process holds it. The claim is a ``flock`` on its own file, so
        the kernel drops it when its holder dies, however it dies, and another process
        takes the task over."""
        stack = contextlib.ExitStack()
        holder = f"pid {os.getpid()} on {socket.gethostname()}, task {task_id}"
        try:
            stack.enter_context(held_lock(self.claim_path(task_id), holder=holder))
        except LockHeldError:
            return None
        return stack

    def finished_now(self) -> dict[str, TaskResult]:
        """Like :meth:`finished`, reading only what was appended since the last call (other
        processes of the run append too)."""
        if not self.results_path.exists():
            return self._seen
        with open(self.results_path, "rb") as handle:
            handle.seek(self._seen_bytes)
            for line in handle:
                if not line.endswith(b"\n"):
                    break  # being written, or torn: read again next time
                self._seen_bytes += len(line)
                result = TaskResult.model_validate_json(line)
                self._seen[result.task_id] = result
        return self._seen

    def start(self, config: C, *, force: bool = False) -> C:
        """Create the directory or check that it holds the same run; returns the config to use.

        Resuming keeps the first start's ``created_at`` and memory fingerprint; a difference
        in what changes results (a value of ``result_values``: a result setting or one
        role's model, options or sampling; the prompts; the memory's content) is an error
        naming each one, unless ``force``, which goes on and records the differences in
        ``forced_resume``. A results line torn by a crash is cut off so
        that appending continues cleanly.
        """
        self.refuse_a_file()
        self.path.mkdir(parents=True, exist_ok=True)
        previous = self.read_config()
        if previous is not None:
            differences = self._differences(previous, config)
            if differences and not force:
                raise RunDirError(
                    f"{self.path} holds a run with a different configuration "
                    f"({'; '.join(differences)}); use another --out to start a new run, or "
                    "--force-resume to continue it anyway (recorded in config.json)"
                )
            config = config.model_copy(
                update={
                    "created_at": previous.created_at,
                    "fingerprints": {**config.fingerprints, **_kept(previous.fingerprints)},
                    "forced_resume": [*previous.forced_resume, *differences],
                }
            )
        written = config_file_type(type(config)).model_validate(
            {**config.model_dump(), "format_version": RUNDIR_FORMAT}
        )
        atomic_write_text(self.config_path, written.model_dump_json(indent=2) + "\n")
        self._repair_results()
        self._cut_unfinished_batch()
        return config

    def _differences(self, previous: RunConfig, config: RunConfig) -> list[str]:
        was = result_values(spelled_out(previous))
        differences = [
            f"{name}: {was.get(name)!r} -> {value!r}"
            for name, value in result_values(spelled_out(config)).items()
            if was.get(name) != value
        ]
        before, now = previous.fingerprints, config.fingerprints
        if before.get("prompts") != now.get("prompts"):
            differences.append("prompts: the prompt templates changed")
        if before.get("memory") != now.get("memory") and not self._memory_written_here(now):
            differences.append(f"memory: the content of {config.memory} changed")
        return differences

    def _memory_written_here(self, now: dict[str, str]) -> bool:
        """True when the memory file holds a memory this (online) run saved to it (a crash
        may have come between saving a batch's memory and finishing the batch)."""
        if "memory" not in now:
            return False
        return any(
            self.snapshot_sha256(path) == now["memory"] for path in reversed(self.snapshots())
        )

    def _cut_unfinished_batch(self) -> None:
        """Cut the append-only files back to the end of the last finished batch (or to
        where they stood before the first one): what follows belongs to a batch that a crash
        interrupted, and the resumed run does that batch again."""
        commit = self.read_commit()
        schedule = self.read_schedule()
        lengths = commit.lengths if commit else schedule.lengths if schedule else None
        if lengths is None:
            return
        for path in self.appended_paths:
            keep = lengths.get(path.name, 0)
            if path.exists() and path.stat().st_size > keep:
                os.truncate(path, keep)

    def _repair_results(self) -> None:
        if not self.results_path.exists():
            return
        with file_lock(self.results_path):  # another process of the run may be appending
            cut_torn_tail(self.results_path)

    def append_result(self, result: TaskResult) -> None:
        """Append one finished task durably (a crash loses at most tasks in flight)."""
        self.append_results([result])

    def collect_cut_off_calls(self) -> int:
        """Record the requests that processes of the run now gone left in flight (in
        ``cut_off_calls.jsonl``); returns how many."""
        calls = collect_cut_off(self.in_flight_dir)
        self._append(self.cut_off_path, [c.model_dump_json() + "\n" for c in calls])
        return len(calls)

    def compact_results(self) -> int:
        """Rewrite ``results.jsonl`` with one line per task, its latest, atomically; returns
        the number of superseded lines dropped (a rerun appends the new result of a task
        that ended on a model error after the old one).

        Call it holding the run directory alone (other processes read the file by offset).
        In a run in task batches, the lines after its last commit belong to a task batch a
        resume redoes and cuts, so the file is left as it is then; otherwise the commit
        records the new length.
        """
        path = self.results_path
        if not path.exists():
            return 0
        with file_lock(path):
            cut_torn_tail(path)
            commit = self.read_commit()
            if self.read_schedule() is not None and (
                commit is None or commit.lengths.get(path.name) != path.stat().st_size
            ):
                return 0
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            latest = {json.loads(line)["task_id"]: number for number, line in enumerate(lines)}
            if len(latest) == len(lines):
                return 0
            atomic_write_text(path, [lines[number] for number in sorted(latest.values())])
            if commit is not None:
                lengths = commit.lengths | {path.name: path.stat().st_size}
                self.write_commit(commit.model_copy(update={"lengths": lengths}))
        self._seen, self._seen_bytes = {}, 0
        return len(lines) - len(latest)

    def append_results(self, results: list[TaskResult]) -> None:
        """Append finished tasks durably, in the given order."""
        self._append(self.results_path, [r.model_dump_json() + "\n" for r in results])
        self.mark_session("progress")

    def begin_session(self) -> None:
        """Record that a session of the run starts now (its wall time counts from here)."""
        self._session = uuid.uuid4().hex[:16]
        with file_lock(self.sessions_path):  # a session killed mid-line tore the last one
            cut_torn_tail(self.sessions_path)
        self.mark_session("start")

    def mark_session(self, event: Literal["start", "progress", "end"]) -> None:
        """Append ``event`` (``progress`` or ``end``) of this process's session, if begun:
        a session killed before its end counts up to its last mark."""
        if self._session is None:
            return
        mark = SessionMark(session=self._session, event=event, at=time.time())
        self._append(self.sessions_path, [mark.model_dump_json() + "\n"])

    def append_calls(self, records: list[CallRecord]) -> None:
        """Append call records (``arcmemo merge``; a running run's model client logs its own)."""
        self._append(self.calls_path, [r.model_dump_json() + "\n" for r in records])

    def write_merged(self, record: BaseModel) -> None:
        atomic_write_text(self.merged_path, record.model_dump_json(indent=2) + "\n")

    def append_progress(self, records: list[TaskProgress]) -> None:
        """Append the states of tasks that still have retries to run (``passes.jsonl``)."""
        self._append(self.passes_path, [r.model_dump_json() + "\n" for r in records])
        self.mark_session("progress")

    def _append(self, path: Path, lines: list[str]) -> None:
        with self._lock:
            append_lines(path, lines)

    def appended_lengths(self) -> dict[str, int]:
        """The byte length of each append-only file now (recorded by a batch commit)."""
        return {p.name: p.stat().st_size if p.exists() else 0 for p in self.appended_paths}

    def write_schedule(self, schedule: Schedule) -> None:
        atomic_write_text(self.schedule_path, schedule.model_dump_json(indent=1) + "\n")

    def write_commit(self, commit: BatchCommit) -> None:
        """Record that a batch is done: written last, after every other file of the batch."""
        atomic_write_text(self.processed_path, commit.model_dump_json(indent=1) + "\n")

    def write_initial_memory(self, memory: Memory) -> None:
        """Keep the memory a run in task batches starts from (once: a resume keeps the first)."""
        if not self.initial_memory_path.exists():
            atomic_write_text(self.initial_memory_path, dump_memory(memory))

    def write_task_order(self, ids: list[str]) -> None:
        atomic_write_text(self.task_order_path, json.dumps(ids, indent=1) + "\n")

    def write_summary(self, summary: BaseModel) -> None:
        """``summary.json``: a :class:`arcmemo.run.summary_file.RunSummary`."""
        atomic_write_text(self.summary_path, summary.model_dump_json(indent=2) + "\n")

    def write_estimate(self, estimate: dict[str, Any]) -> Path:
        """A dry run's estimate (its stages and totals, each a low/high range)."""
        atomic_write_text(self.estimate_path, json.dumps(estimate, indent=2) + "\n")
        return self.estimate_path

    def write_prompt(self, name: str, text: str) -> Path:
        """A rendered prompt of a dry run, as ``prompts/NAME.txt``."""
        path = self.prompts_dir / f"{name}.txt"
        atomic_write_text(path, text)
        return path

    def write_snapshot(self, text: str, batch: int) -> Path:
        """The memory after batch ``batch`` as ``memory/batch-NNNN.delta.json``: its changes
        to the memory the last finished batch left (a batch redone after a crash writes the
        same file again); ``text`` is the memory's
        :func:`arcmemo.memory.store.checked_dump`."""
        commit = self.read_commit()
        base = self.memory_dir / (
            commit.snapshot if commit and commit.snapshot else self.initial_memory_path.name
        )
        if self._last_snapshot is None or self._last_snapshot[0] != base.name:
            # The memory's canonical text, as the batch that wrote it had it.
            before = (
                dump_memory(self.snapshot_memory(base))
                if base.name.endswith(".delta.json")
                else base.read_text(encoding="utf-8")
            )
            self._last_snapshot = (base.name, MemoryParts.of_text(before))
        parts = MemoryParts.of_text(text)
        delta = make_delta(base.name, self._last_snapshot[1], parts, text)
        path = self.delta_path(batch)
        atomic_write_text(path, delta.model_dump_json() + "\n")
        # A format-1 run that crashed in this batch may have left it whole: one per batch.
        self.snapshot_path(batch).unlink(missing_ok=True)
        self._last_snapshot = (path.name, parts)
        return path

    def append_abstraction(self, outcomes: list[AbstractionOutcome]) -> None:
        append_outcomes(self.abstraction_path, outcomes)
