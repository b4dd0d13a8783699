"""Where each file of a run directory lives (the only place the paths are spelled)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path


class RunPaths:
    """The paths of one run directory's files."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

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
    def batches_path(self) -> Path:
        return self.path / "batches.jsonl"

    @property
    def task_order_path(self) -> Path:
        return self.path / "task_order.json"

    @property
    def prompts_dir(self) -> Path:
        return self.path / "prompts"

    @property
    def estimate_path(self) -> Path:
        return self.path / "estimate.json"

    @property
    def memory_dir(self) -> Path:
        return self.path / "memory"

    @property
    def processed_path(self) -> Path:
        return self.memory_dir / "processed.json"

    @property
    def in_flight_dir(self) -> Path:
        """One marker per provider request in flight (:mod:`arcmemo.models.in_flight`)."""
        return self.path / "in_flight"

    @property
    def cut_off_path(self) -> Path:
        """``cut_off_calls.jsonl``: requests a kill or an interrupt cut off in flight."""
        return self.path / "cut_off_calls.jsonl"

    @property
    def sessions_path(self) -> Path:
        """``sessions.jsonl``: each session's start, progress and end (:mod:`.sessions`)."""
        return self.path / "sessions.jsonl"

    @property
    def abstraction_path(self) -> Path:
        return self.path / "abstraction.jsonl"

    @property
    def schedule_path(self) -> Path:
        return self.path / "schedule.json"

    @property
    def passes_path(self) -> Path:
        return self.path / "passes.jsonl"

    @property
    def initial_memory_path(self) -> Path:
        return self.memory_dir / "initial.json"

    def snapshot_path(self, batch: int) -> Path:
        """The memory after batch ``batch``, whole (format 1)."""
        return self.memory_dir / f"batch-{batch:04d}.json"

    def delta_path(self, batch: int) -> Path:
        """The memory after batch ``batch`` as a delta (format 2)."""
        return self.memory_dir / f"batch-{batch:04d}.delta.json"

    @property
    def merged_path(self) -> Path:
        """``merged.json`` of a run made by ``arcmemo merge``: the shards it joined."""
        return self.path / "merged.json"

    @property
    def run_lock_path(self) -> Path:
        return self.path / "run.lock"

    @property
    def claims_dir(self) -> Path:
        return self.path / "claims"

    def claim_path(self, task_id: str) -> Path:
        # Task ids become file names only when they are plain; any other id is hashed.
        plain = _PLAIN_NAME.fullmatch(task_id) is not None
        name = task_id if plain else hashlib.sha256(task_id.encode()).hexdigest()[:32]
        return self.claims_dir / f"{name}.lock"

    @property
    def appended_paths(self) -> list[Path]:
        """The append-only files a batch adds to (cut back on resume, see BatchCommit)."""
        return [self.results_path, self.passes_path, self.abstraction_path]


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,120}")
