"""The records of a run directory's files: ``config.json``'s format, the task batches of a
run in task batches (``schedule.json``), its commits (``memory/processed.json``) and the task
states of a passes schedule (``passes.jsonl``)."""

from __future__ import annotations

import functools
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, model_validator

from arcmemo.core.records import TaskResult
from arcmemo.core.spellings import BATCH_RECORD_FIELDS, renamed_fields
from arcmemo.run.config import RunConfig

# 1: no format_version in config.json, memory snapshots whole; 2: snapshots as deltas;
# 3: a step of results.jsonl records what was cut from its prompt to fit the model's window
# (Step.prompt_fit, PromptTooLong.cuts; both absent, read as nothing cut, from earlier runs);
# 4: config.json's feedback_rounds and models.request_retries, schedule.json's batch rerun
# (earlier runs spelled them retries, max_retries and round: read through core.spellings);
# a step may record the concepts its answer cites (Step.cited, Step.cited_unshown: --cite;
# absent, read as none cited, from earlier runs).
RUNDIR_FORMAT = 4


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
    """One task batch of a run in task batches (``--update-every`` tasks; never a provider
    batch, those are in ``batches.jsonl``)."""

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
    """``schedule.json``: the task batches of a run in task batches.

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
