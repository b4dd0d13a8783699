"""A run directory: its files, and resuming an interrupted run.

Files: ``config.json`` (the resolved :class:`~arcmemo.config.RunConfig`), ``results.jsonl``
(one finished task per line, flushed and fsynced as it finishes), ``summary.json``,
``calls.jsonl`` (the model layer's log), ``prompts/`` (dry runs) and ``memory/`` (snapshots
of a continually updated memory).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from arcmemo.benchmarks.base import TaskResult
from arcmemo.config import RESULT_FIELDS, RunConfig
from arcmemo.files import atomic_write_text
from arcmemo.models.client import CallRecord, StageUsage, UsageSummary


class RunDirError(ValueError):
    """The run directory cannot be used as asked (e.g. it holds a different run)."""


class RunDirectory:
    """Reads and writes the files of one run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

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
    def prompts_dir(self) -> Path:
        return self.path / "prompts"

    @property
    def memory_dir(self) -> Path:
        return self.path / "memory"

    def read_config(self) -> RunConfig | None:
        """The saved configuration, or None for a new directory."""
        if not self.config_path.exists():
            return None
        try:
            return RunConfig.model_validate_json(self.config_path.read_text(encoding="utf-8"))
        except ValidationError as error:
            raise RunDirError(f"{self.config_path}: not a valid run config:\n{error}") from None

    def start(self, config: RunConfig) -> RunConfig:
        """Create the directory or check that it holds the same run; returns the config to use.

        Resuming keeps the first start's ``created_at``; any difference in a field that
        changes results is an error naming the fields.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        previous = self.read_config()
        if previous is not None:
            differences = [
                f"{name}: {getattr(previous, name)!r} -> {getattr(config, name)!r}"
                for name in RESULT_FIELDS
                if getattr(previous, name) != getattr(config, name)
            ]
            if differences:
                raise RunDirError(
                    f"{self.path} holds a run with a different configuration "
                    f"({'; '.join(differences)}); use another --out to start a new run"
                )
            config = config.model_copy(update={"created_at": previous.created_at})
        atomic_write_text(self.config_path, config.model_dump_json(indent=2) + "\n")
        return config

    def finished(self) -> dict[str, TaskResult]:
        """Results already written, by task id; a torn last line (crash) is cut off."""
        if not self.results_path.exists():
            return {}
        results: dict[str, TaskResult] = {}
        good_bytes = 0
        with open(self.results_path, "rb") as handle:
            for number, line in enumerate(handle, 1):
                if not line.endswith(b"\n"):
                    # Torn, even if it parses: appending after it would glue two results.
                    break
                try:
                    result = TaskResult.model_validate_json(line)
                except ValidationError:
                    raise RunDirError(
                        f"{self.results_path}, line {number}: not a valid task result"
                    ) from None
                results[result.task_id] = result
                good_bytes += len(line)
        if good_bytes != self.results_path.stat().st_size:
            os.truncate(self.results_path, good_bytes)
        return results

    def completed(self) -> dict[str, TaskResult]:
        """Finished results that need no redo: those that did not end on a model error."""
        return {task_id: r for task_id, r in self.finished().items() if r.error is None}

    def append_result(self, result: TaskResult) -> None:
        """Append one finished task durably (a crash loses at most tasks in flight)."""
        line = result.model_dump_json() + "\n"
        with self._lock, open(self.results_path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def write_summary(self, summary: dict[str, Any]) -> None:
        atomic_write_text(self.summary_path, json.dumps(summary, indent=2, default=str) + "\n")


def usage_from_call_log(path: Path) -> UsageSummary:
    """Usage totals of every call a run made, across resumed sessions (from ``calls.jsonl``)."""
    summary = UsageSummary()
    if not path.exists():
        return summary
    models: set[str] = set()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                record = CallRecord.model_validate_json(line)
            except ValidationError:
                continue  # a line torn by a crash carries no completed call
            models.add(record.model)
            stage = summary.stages.setdefault(record.stage, StageUsage())
            stage.merge(
                StageUsage(
                    calls=1,
                    samples=record.n if record.error is None else record.cache_hits,
                    cache_hits=record.cache_hits,
                    requests=record.attempts,
                    errors=int(record.error is not None),
                    tokens=record.tokens,
                    cost_usd=record.cost_usd,
                    latency_s=record.latency_s,
                )
            )
    for stage in summary.stages.values():
        summary.total.merge(stage)
    summary.models = sorted(models)
    return summary
