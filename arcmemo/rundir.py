"""The run directory: the one place that knows its files.

Files: ``config.json`` (the resolved :class:`~arcmemo.config.RunConfig`), ``results.jsonl``
(one finished task per line, flushed and fsynced as it finishes), ``summary.json``,
``calls.jsonl`` (the model layer's log of every call), ``task_order.json`` (the processing
order), ``prompts/`` (dry runs), ``memory/batch-NNNN.json`` (snapshots of a continually
updated memory) with ``memory/processed.json`` (the tasks already abstracted), and
``abstraction.jsonl`` (what each abstraction wrote and what failed).

:class:`RunDirectory` only reads (reports, bootstrapping, ``abstract --from``): a torn last
line of a crashed run is skipped, never cut. :class:`RunWriter` is what a running run holds:
it repairs the directory when the run starts and appends to it.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from arcmemo.abstraction.base import AbstractionOutcome, append_outcomes
from arcmemo.config import RESULT_FIELDS, RunConfig
from arcmemo.files import atomic_write_text
from arcmemo.memory.ontology import Memory
from arcmemo.memory.store import dump_memory
from arcmemo.models.client import CallRecord, UsageSummary, usage_from_records
from arcmemo.records import TaskResult

RecordT = TypeVar("RecordT", bound=BaseModel)


class RunDirError(ValueError):
    """The run directory cannot be used as asked (e.g. it holds a different run)."""


def _json_lines(
    path: Path, record: type[RecordT]
) -> Iterator[tuple[int, RecordT | None, str | None]]:
    """(line number, record, None) or (line number, None, why) for each complete line."""
    if not path.exists():
        return
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.endswith(b"\n"):
                return  # torn by a crash, even if it parses
            try:
                yield number, record.model_validate_json(line), None
            except ValidationError as error:
                first = error.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                yield number, None, f"{where + ': ' if where else ''}{first['msg']}"


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise RunDirError(
            f"{path}: not valid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None


class RunDirectory:
    """Reads the files of one run; never changes them."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    # -- paths (the only place they are spelled) ---------------------------------------------

    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    @property
    def results_path(self) -> Path:
        return self.path / "results.jsonl"

    @property
    def summary_path(self) -> Path:
        return self.path / "summary.json"

    @property
    def calls_path(self) -> Path:
        return self.path / "calls.jsonl"

    @property
    def task_order_path(self) -> Path:
        return self.path / "task_order.json"

    @property
    def prompts_dir(self) -> Path:
        return self.path / "prompts"

    @property
    def memory_dir(self) -> Path:
        return self.path / "memory"

    @property
    def processed_path(self) -> Path:
        return self.memory_dir / "processed.json"

    @property
    def abstraction_path(self) -> Path:
        return self.path / "abstraction.jsonl"

    # -- reading ------------------------------------------------------------------------------

    def read_config(self) -> RunConfig | None:
        """The saved configuration, or None for a new directory."""
        if not self.config_path.exists():
            return None
        try:
            return RunConfig.model_validate_json(self.config_path.read_text(encoding="utf-8"))
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
        for number, result, why in _json_lines(self.results_path, TaskResult):
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
        return [record for _, record, _ in _json_lines(self.calls_path, CallRecord) if record]

    def usage(self) -> UsageSummary:
        """Usage totals of every call the run made, across resumed sessions."""
        return usage_from_records(self.calls())

    def snapshots(self) -> list[Path]:
        """Memory snapshots of an online run, oldest first."""
        return sorted(self.memory_dir.glob("batch-*.json"))

    def read_processed(self) -> list[str]:
        """Task ids whose results were already abstracted into the memory (online runs)."""
        if not self.processed_path.exists():
            return []
        processed = _read_json(self.processed_path)
        if not isinstance(processed, list):
            raise RunDirError(f"{self.processed_path}: expected a list of task ids")
        return [str(i) for i in processed]

    def abstraction_outcomes(self) -> list[AbstractionOutcome]:
        """What each abstraction of the run wrote and what failed, in order."""
        return [o for _, o, _ in _json_lines(self.abstraction_path, AbstractionOutcome) if o]


def _kept(fingerprints: dict[str, str]) -> dict[str, str]:
    # The memory a run started from stays its identity while the run grows the file.
    return {key: value for key, value in fingerprints.items() if key == "memory"}


class RunWriter(RunDirectory):
    """The run directory of a run in progress: starts (or resumes) it and appends to it."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._lock = threading.Lock()

    def start(self, config: RunConfig, *, force: bool = False) -> RunConfig:
        """Create the directory or check that it holds the same run; returns the config to use.

        Resuming keeps the first start's ``created_at`` and memory fingerprint; a difference
        in what changes results (a field of ``RESULT_FIELDS``, the prompts, the memory's
        content) is an error naming each one, unless ``force``, which goes on and records
        the differences in ``forced_resume``. A results line torn by a crash is cut off so
        that appending continues cleanly.
        """
        if self.path.exists() and not self.path.is_dir():
            raise RunDirError(f"{self.path}: exists and is not a directory")
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
        atomic_write_text(self.config_path, config.model_dump_json(indent=2) + "\n")
        self._repair_results()
        return config

    def _differences(self, previous: RunConfig, config: RunConfig) -> list[str]:
        differences = [
            f"{name}: {getattr(previous, name)!r} -> {getattr(config, name)!r}"
            for name in RESULT_FIELDS
            if getattr(previous, name) != getattr(config, name)
        ]
        before, now = previous.fingerprints, config.fingerprints
        if before.get("prompts") != now.get("prompts"):
            differences.append("prompts: the prompt templates changed")
        if before.get("memory") != now.get("memory") and not self._memory_written_here(now):
            differences.append(f"memory: the content of {config.memory} changed")
        return differences

    def _memory_written_here(self, now: dict[str, str]) -> bool:
        """True when the memory file holds what this (online) run last saved to it."""
        snapshots = self.snapshots()
        if not snapshots or "memory" not in now:
            return False
        return hashlib.sha256(snapshots[-1].read_bytes()).hexdigest() == now["memory"]

    def _repair_results(self) -> None:
        if not self.results_path.exists():
            return
        good_bytes = 0
        with open(self.results_path, "rb") as handle:
            for line in handle:
                if not line.endswith(b"\n"):
                    break
                good_bytes += len(line)
        if good_bytes != self.results_path.stat().st_size:
            os.truncate(self.results_path, good_bytes)

    def append_result(self, result: TaskResult) -> None:
        """Append one finished task durably (a crash loses at most tasks in flight)."""
        line = result.model_dump_json() + "\n"
        with self._lock, open(self.results_path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def write_task_order(self, ids: list[str]) -> None:
        atomic_write_text(self.task_order_path, json.dumps(ids, indent=1) + "\n")

    def write_summary(self, summary: dict[str, Any]) -> None:
        atomic_write_text(self.summary_path, json.dumps(summary, indent=2, default=str) + "\n")

    def write_prompt(self, name: str, text: str) -> Path:
        """A rendered prompt of a dry run, as ``prompts/NAME.txt``."""
        path = self.prompts_dir / f"{name}.txt"
        atomic_write_text(path, text)
        return path

    def write_snapshot(self, memory: Memory) -> Path:
        """The memory after a batch, as the next ``memory/batch-NNNN.json``."""
        path = self.memory_dir / f"batch-{len(self.snapshots()):04d}.json"
        atomic_write_text(path, dump_memory(memory))
        return path

    def write_processed(self, task_ids: list[str]) -> None:
        atomic_write_text(self.processed_path, json.dumps(task_ids) + "\n")

    def append_abstraction(self, outcomes: list[AbstractionOutcome]) -> None:
        append_outcomes(self.abstraction_path, outcomes)
