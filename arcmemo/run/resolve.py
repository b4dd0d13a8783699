"""Deciding every setting of a run: the one resolution of a
:class:`~arcmemo.run.config.RunConfig`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from arcmemo.abstraction.base import ABSTRACTORS
from arcmemo.benchmarks.base import BENCHMARKS, Benchmark
from arcmemo.core.prompting import PromptOverlayError, check_overlay, templates_fingerprint
from arcmemo.core.roles import SOLVER
from arcmemo.models.base import SamplingConfig
from arcmemo.models.registry import PROVIDERS, parse_spec
from arcmemo.run.config import ResolvedRunConfig, RunConfig, resolved_type
from arcmemo.run.seeds import DEFAULT_SAMPLING_TEMPERATURE, replicate_namespace
from arcmemo.sandbox import SANDBOXES
from arcmemo.selection.base import SELECTORS
from arcmemo.signals.base import WRITE_SIGNALS


def resolve_config(config: RunConfig) -> ResolvedRunConfig:
    """The config with every setting decided: what the user left to the benchmark (feedback rounds,
    write signal, selector) filled in, and each component's options spelled out.

    The one place settings are decided: ``arcmemo run``, :func:`~arcmemo.run.pipeline.run_benchmark`
    and the dry run go through here, so the same options give the same run from the CLI and
    from Python. A config already resolved is returned as it is (its memory is not hashed
    again).
    """
    if isinstance(config, ResolvedRunConfig):
        return config
    benchmark = BENCHMARKS.get(config.benchmark.name)
    defaults = benchmark.cls.defaults
    check_options(config)
    if config.memory is None:
        selector = SELECTORS.spec("none")  # nothing to select from
    elif config.selector is None:
        selector = SELECTORS.spec(defaults.selector)
    else:
        selector = SELECTORS.spec(config.selector.name, config.selector.options)
    signal = config.write_signal or WRITE_SIGNALS.spec(defaults.write_signal)
    fields = config.model_dump()
    fields["models"]["cache_namespace"] = replicate_namespace(config.replicate, config.sample_order)
    fields["roles"][SOLVER]["sampling"] = _sampling_for_attempts(config).model_dump()
    fields.update(
        data=_resolved(config.data),
        memory=_resolved(config.memory),
        memory_out=_resolved(config.memory_out),
        prompts=_resolved(config.prompts),
        fingerprints=fingerprints(config),
        benchmark=BENCHMARKS.spec(config.benchmark.name, config.benchmark.options),
        selector=selector,
        write_signal=WRITE_SIGNALS.spec(signal.name, signal.options),
        memory_format=ABSTRACTORS.spec(config.memory_format.name, config.memory_format.options),
        sandbox=SANDBOXES.spec(config.sandbox.name, config.sandbox.options),
        feedback_rounds=defaults.feedback_rounds
        if config.feedback_rounds is None
        else config.feedback_rounds,
        schedule=config.run_schedule,
        reselect=config.feedback_rounds_reselect,
    )
    return resolved_type(type(config)).model_validate(fields)


class RunOptionsError(ValueError):
    """Options that do not make a run together (one would be silently ignored)."""


def check_options(config: RunConfig) -> None:
    """Refuse options that would be silently ignored, and a run whose tasks nobody chose."""
    if config.memory is None:
        if config.update == "online":
            raise RunOptionsError(
                "--update online needs --memory, the memory file the run grows (start one "
                "with `arcmemo memory init --out FILE`)"
            )
        if config.selector is not None and config.selector.name != "none":
            raise RunOptionsError(
                f"--select {config.selector.name} needs --memory, the memory to select from"
            )
    if config.prompts is not None:
        try:
            check_overlay(config.prompts)
        except PromptOverlayError as error:
            raise RunOptionsError(str(error)) from None
    chosen = config.split is not None or config.data is not None or bool(config.tasks)
    if not chosen and _benchmark_class(config).needs_task_choice:
        raise RunOptionsError(
            "no tasks chosen: give --split (`arcmemo run --help` names the benchmark's "
            "splits), --data FILE_OR_FOLDER or --tasks IDS"
        )


def _benchmark_class(config: RunConfig) -> type[Benchmark[Any]]:
    registered = BENCHMARKS.get(config.benchmark.name).registered_class
    return registered if registered is not None else Benchmark


def _resolved(path: str | Path | None) -> str | None:
    """An absolute path where ``path`` names a file or folder (so a resume from another
    directory, or the same file spelled another way, is the same run)."""
    if path is None:
        return None
    candidate = Path(path).expanduser()
    return str(candidate.resolve()) if candidate.exists() else str(path)


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fingerprints(config: RunConfig) -> dict[str, str]:
    """sha256 of the memory file's content and of every prompt template a render reads
    (the ``--prompts`` folder's in place of those it replaces)."""
    prints = dict(config.fingerprints)  # a resumed config keeps its first memory print
    if config.memory is not None and "memory" not in prints and Path(config.memory).is_file():
        prints["memory"] = _sha256_file(Path(config.memory))
    prints["prompts"] = templates_fingerprint(config.prompts)
    return prints


def _sampling_for_attempts(config: RunConfig) -> SamplingConfig:
    """The solver's sampling, made to sample when several attempts would otherwise all be
    the same greedy decode (a provider that is greedy unless given a temperature)."""
    sampling = config.solver.sampling
    if (
        config.attempts > 1
        and sampling.temperature is None
        and PROVIDERS.get(parse_spec(config.solver_spec)[0]).cls.greedy_by_default
    ):
        return sampling.model_copy(update={"temperature": DEFAULT_SAMPLING_TEMPERATURE})
    return sampling
