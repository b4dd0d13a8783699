"""What a reader of a run's numbers must know about how they were made."""

from __future__ import annotations

from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.run.config import RunConfig
from arcmemo.run.runner import sandbox_isolation
from arcmemo.selection.base import SELECTORS


def run_warnings(config: RunConfig) -> list[str]:
    """What a reader of the run's numbers must know (also printed by ``arcmemo run``)."""
    warnings = []
    if config.attempts > 1 and config.solver.sampling.temperature == 0:
        warnings.append(
            f"--attempts {config.attempts} with --temperature 0: greedy decoding makes every "
            "attempt the same completion, so attempts beyond the first add no solves"
        )
    selector = config.selector
    if config.variants > 1 and (
        config.memory is None
        or (selector is not None and not SELECTORS.get(selector.name).cls.uses_model)
    ):
        warnings.append(
            f"--variants {config.variants} without a selector that calls a model: every "
            "variant shows the same memory, so the variants only add attempts"
        )
    if config.leaks_test_labels:
        warnings.append("memory writes used test labels (--write-signal oracle)")
    if benchmark_uses_sandbox(config) and sandbox_isolation(config.sandbox.name) != "kernel":
        warnings.append(f"programs ran with --sandbox {config.sandbox.name} (no kernel isolation)")
    if config.batch and config.update == "online" and config.memory is not None:
        warnings.append(
            f"--batch with --update online: the memory changes after every {config.update_every} "
            "tasks, so a provider batch holds the requests of one task batch only, and the "
            "selection, solving, retry and abstraction provider batches of each task batch wait "
            "on the one before"
        )
    return warnings


def benchmark_uses_sandbox(config: RunConfig) -> bool:
    return BENCHMARKS.get(config.benchmark.name).cls.uses_sandbox
