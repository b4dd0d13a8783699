"""The run directory: the one place that knows its files.

Files: ``config.json`` (the resolved :class:`~arcmemo.run.config.RunConfig`), ``results.jsonl``
(one finished task per line, flushed and fsynced as it finishes; the new result of a task
that a rerun solved again replaces the old line when the session ends,
:meth:`RunWriter.compact_results`), ``summary.json``,
``calls.jsonl`` (the model layer's log of every request), ``task_order.json`` (the processing
order), ``prompts/`` and ``estimate.json`` (dry runs), ``abstraction.jsonl`` (what each
abstraction wrote and what failed), ``run.lock`` (held by every live process of the run:
shared by runs that claim tasks, exclusive for a batched run) and ``claims/`` (one lock file
per task being solved, see :meth:`RunWriter.claim`), ``in_flight/`` (a marker per provider
request out) and ``cut_off_calls.jsonl`` (the requests a kill or an interrupt left in flight,
:mod:`arcmemo.models.in_flight`). A run made by ``arcmemo merge`` has
``merged.json`` (:mod:`arcmemo.analysis.shards`). A ``--batch`` run also keeps
``batches.jsonl``: each provider batch it submitted (id and the cache keys of its requests)
and each it collected (:class:`~arcmemo.models.batch.BatchRecord`), so a resume awaits a
batch instead of paying for it again.

A batched run (``--update online``, or ``--schedule passes``) also keeps
``schedule.json`` (its batches, fixed when it starts: :class:`Schedule`), ``passes.jsonl``
(the state of each task still to be retried after a batch: :class:`TaskProgress`),
``memory/initial.json`` (the memory before the first batch), ``memory/batch-NNNN.delta.json``
(the memory after batch NNNN as its changes to the one before: :mod:`arcmemo.run.snapshots`)
and ``memory/processed.json`` (:class:`BatchCommit`), written last in every batch: the batch
it names is done, and whatever the append-only files hold beyond the lengths it records
belongs to the next, unfinished batch and is cut off when the run resumes.

Formats: ``config.json`` records the directory's ``format_version`` (:data:`RUNDIR_FORMAT`);
a directory without one (format 1, arcmemo before it was recorded) kept each batch's memory
whole as ``memory/batch-NNNN.json``. Both kinds of snapshot are read, and a format-1 run
resumed today goes on with deltas whose chain starts at its last full snapshot.
``summary.json`` has its own version (:mod:`arcmemo.run.summary`).

:class:`RunDirectory` only reads (reports, bootstrapping, ``abstract --from``): a torn last
line of a crashed run is skipped, never cut. :class:`RunWriter` is what a running run holds:
it repairs the directory when the run starts and appends to it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError, create_model, model_validator

from arcmemo.abstraction.outcome import AbstractionOutcome, append_outcomes
from arcmemo.core.bulk import paused_gc
from arcmemo.core.files import (
    LockHeldError,
    append_lines,
    atomic_write_text,
    cut_torn_tail,
    file_lock,
    held_lock,
    read_json_lines,
)
from arcmemo.core.records import TaskResult
from arcmemo.core.registry import ComponentSpec, RegistryError
from arcmemo.core.settings import settings_of
from arcmemo.core.spellings import BATCH_RECORD_FIELDS, renamed_fields
from arcmemo.memory.schema import Memory
from arcmemo.memory.store import dump_memory, parse_memory
from arcmemo.models.accounting import CallRecord, UsageSummary, usage_from_records
from arcmemo.models.in_flight import CutOffCall, collect_cut_off
from arcmemo.run.config import RunConfig, result_values
from arcmemo.run.snapshots import MemoryParts, SnapshotDelta, apply_delta, make_delta

# 1: no format_version in config.json, memory snapshots whole; 2: snapshots as deltas;
# 3: a step of results.jsonl records what was cut from its prompt to fit the model's window
# (Step.prompt_fit, PromptTooLong.cuts; both absent, read as nothing cut, from earlier runs);
# 4: config.json's feedback_rounds and models.request_retries, schedule.json's batch rerun
# (earlier runs spelled them retries, max_retries and round: read through core.spellings).
RUNDIR_FORMAT = 4

RecordT = TypeVar("RecordT", bound=BaseModel)
# The config a run starts with, of whatever RunConfig type it has (the resolved one).
C = TypeVar("C", bound=RunConfig)


class RunDirError(ValueError):
    """The run directory cannot be used as asked (e.g. it holds a different run)."""


class ConfigFile(RunConfig):
    """``config.json``: the run's resolved configuration and the directory's format."""

    format_version: int = Field(
        default=RUNDIR_FORMAT, description="Format of the run directory's files."
    )


@functools.cache
def config_file_type(config_type: type[RunConfig]) -> type[RunConfig]:
    """:class:`ConfigFile` for a config class that adds settings (a subclass of RunConfig
    keeps them in its file)."""
    if config_type in (RunConfig, ConfigFile) or issubclass(config_type, ConfigFile):
        return ConfigFile
    return create_model(
        f"{config_type.__name__}File",
        __base__=config_type,
        __doc__=ConfigFile.__doc__,
        format_version=(int, ConfigFile.model_fields["format_version"]),
    )


class Batch(BaseModel):
    """One batch of a batched run."""

    index: int = Field(description="Position in the schedule (snapshots and commits name it).")
    rerun: int = Field(
        default=0,
        description="0; r for the r-th rerun of tasks whose result ended on a model error.",
    )
    pass_number: int = Field(
        description="0: first tries (with the tasks schedule, their retries too); p: the p-th "
        "retry of every attempt still failing its visible examples."
    )
    task_ids: list[str]
    writes_only: bool = Field(
        default=False,
        description="A rerun's batch that only retries the memory writes that failed (its "
        "tasks are not solved again; their recorded results are written).",
    )

    @model_validator(mode="before")
    @classmethod
    def _current_spellings(cls, values: Any) -> Any:
        return renamed_fields(values, BATCH_RECORD_FIELDS)


class Schedule(BaseModel):
    """``schedule.json``: the batches of a batched run.

    Pass 0's batches are cut from the task order when the run starts; a later pass's batches
    are cut from the tasks still failing when the pass before it is done (recorded then, and
    cut the same way again by a resume that finds them missing).
    """

    schedule: Literal["passes", "tasks"]
    batch_size: int
    task_ids: list[str] = Field(description="Every task of the run, in processing order.")
    lengths: dict[str, int] = Field(
        default_factory=dict,
        description="Byte length of each append-only file before the first batch.",
    )
    batches: list[Batch] = Field(default_factory=list)


class WrittenStep(BaseModel):
    """The step of a task whose solution was written to memory."""

    attempt: int = Field(description="Index of its attempt.")
    round: int = Field(description="Its retry round (0: a first try).")
    right: bool | None = Field(
        default=None,
        description="Right on every hidden test output (for reporting only; the write "
        "signal never sees it unless it is oracle). None: the benchmark has no such labels.",
    )


class UnwrittenStep(WrittenStep):
    """A step the write signal confirmed whose abstraction wrote nothing to memory (a
    rerun tries the write again)."""

    error: str = Field(description="The abstraction's first failure ('stage: message').")


class BatchCommit(BaseModel):
    """``memory/processed.json``: the last batch fully processed and what it left behind."""

    batch: int = Field(description="Index of the last batch fully processed.")
    snapshot: str | None = Field(
        default=None, description="The file under memory/ holding the memory after it."
    )
    processed: list[str] = Field(
        default_factory=list,
        description="Tasks whose final result is counted in the memory's selection statistics.",
    )
    written: dict[str, WrittenStep] = Field(
        default_factory=dict,
        description="Tasks whose solution was written to memory, and the step written.",
    )
    unwritten: dict[str, UnwrittenStep] = Field(
        default_factory=dict,
        description="Tasks whose confirmed solution the abstraction failed to write (nothing "
        "of it is in the memory), and why.",
    )
    lengths: dict[str, int] = Field(
        default_factory=dict,
        description="Byte length of each append-only file when the batch was done.",
    )


class TaskProgress(BaseModel):
    """One line of ``passes.jsonl``: a task's state after a batch of a passes schedule."""

    batch: int
    final: bool = Field(description="No retries are left for it (its result is final).")
    result: TaskResult = Field(
        description="Its attempts so far: judged, and graded when final (the line of "
        "results.jsonl)."
    )
    concepts: str = Field(
        default="",
        description="The memory section of its first prompt (for retries that "
        "do not select again; variant 0's with --variants).",
    )
    variant_concepts: list[str] = Field(
        default_factory=list,
        description="With --variants N: the memory sections of variants 1..N-1.",
    )


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

    def cut_off_calls(self) -> list[CutOffCall]:
        """The requests earlier sessions of the run left in flight (perhaps paid, and made
        again by the session after)."""
        return [c for _, c, _ in read_json_lines(self.cut_off_path, CutOffCall) if c]

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

    # -- reading ------------------------------------------------------------------------------

    def read_config(self) -> RunConfig | None:
        """The saved configuration, or None for a new directory.

        A field the file predates reads as what that run did (see ``_LEGACY``).
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
            for name, then in _LEGACY.items():
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
        """The batches of a batched run, or None when it has not started."""
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

    def abstraction_outcomes(self) -> list[AbstractionOutcome]:
        """What each abstraction of the run wrote and what failed, in order."""
        return [o for _, o, _ in read_json_lines(self.abstraction_path, AbstractionOutcome) if o]


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,120}")


def _validated(path: Path, saved: object, model: type[RecordT]) -> RecordT:
    try:
        return model.model_validate(saved)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise RunDirError(f"{path}: {where + ': ' if where else ''}{first['msg']}") from None


# What a config.json written before a field existed ran with.
_LEGACY: dict[str, Any] = {
    "schedule": lambda saved: "tasks",
    "reselect": lambda saved: saved.get("update") == "online",
}


def _spelled_out(config: C) -> C:
    """``config`` with each component's options spelled out by today's registries: an option
    added since the run was saved reads as what that run did (its default, unless the field
    names another value for runs saved without it: Registry.saved_spec). A component or
    option no longer known is compared as saved."""
    update: dict[str, ComponentSpec] = {}
    for name, setting in settings_of(type(config)).items():
        spec = getattr(config, name)
        if setting.registry is not None and isinstance(spec, ComponentSpec):
            try:
                update[name] = setting.component_registry().saved_spec(spec.name, spec.options)
            except RegistryError:
                continue
    return config.model_copy(update=update)


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

    def refuse_a_file(self) -> None:
        """Fail with a one-line error when the run directory's path is an existing file."""
        if self.path.exists() and not self.path.is_dir():
            raise RunDirError(
                f"--out {self.path}: an existing file, not a run directory; give a directory "
                "(new or a run to resume)"
            )

    @contextlib.contextmanager
    def occupy(self, *, alone: bool) -> Iterator[None]:
        """Hold ``run.lock`` while the run's process lives: ``alone`` (a batched run, whose
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
                f"{self.path} is in use by another live run ({error.holder}); a batched run "
                "(--schedule passes or --update online) keeps its run directory to itself: "
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
        was = result_values(_spelled_out(previous))
        differences = [
            f"{name}: {was.get(name)!r} -> {value!r}"
            for name, value in result_values(_spelled_out(config)).items()
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
        A batched run's lines after its last commit belong to a batch a resume redoes and
        cuts, so the file is left as it is then; otherwise the commit records the new length.
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

    def append_calls(self, records: list[CallRecord]) -> None:
        """Append call records (``arcmemo merge``; a running run's model client logs its own)."""
        self._append(self.calls_path, [r.model_dump_json() + "\n" for r in records])

    def write_merged(self, record: BaseModel) -> None:
        atomic_write_text(self.merged_path, record.model_dump_json(indent=2) + "\n")

    def append_progress(self, records: list[TaskProgress]) -> None:
        """Append the states of tasks that still have retries to run (``passes.jsonl``)."""
        self._append(self.passes_path, [r.model_dump_json() + "\n" for r in records])

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
        """Keep the memory a batched run starts from (once: a resume keeps the first)."""
        if not self.initial_memory_path.exists():
            atomic_write_text(self.initial_memory_path, dump_memory(memory))

    def write_task_order(self, ids: list[str]) -> None:
        atomic_write_text(self.task_order_path, json.dumps(ids, indent=1) + "\n")

    def write_summary(self, summary: BaseModel) -> None:
        """``summary.json``: a :class:`arcmemo.run.summary.RunSummary`."""
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
