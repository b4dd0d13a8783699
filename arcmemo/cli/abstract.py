"""``arcmemo abstract``: distill verified solutions into a memory file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import Progress

from arcmemo.abstraction.base import ABSTRACTORS
from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.cli.benchmark_help import BenchmarkHelpOption, split_help
from arcmemo.cli.config_options import config_options, config_values
from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import (
    ComponentChoice,
    RegistryHelpCommand,
    current_flag,
    open_cli_model,
    retired_flag,
    role_model_options,
)
from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import ABSTRACT
from arcmemo.core.spellings import ABSTRACT_FLAGS
from arcmemo.run.config import RunConfig
from arcmemo.signals.base import WRITE_SIGNALS


@click.command("abstract", cls=RegistryHelpCommand, registries=(ABSTRACTORS, WRITE_SIGNALS))
@click.option(
    "--from",
    "run_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="A finished run directory.",
)
@click.option(
    "--from-programs",
    "programs",
    type=click.Path(path_type=Path, file_okay=False),
    help="A folder of <task id>.py programs defining transform.",
)
@click.option(
    "--memory",
    "memory_path",
    type=click.Path(path_type=Path),
    required=True,
    help="Memory file to write into (create it with `arcmemo memory init`).",
)
@config_options(RunConfig, {"memory_format": None})
@click.option(
    "--write-signal",
    "signal",
    type=ComponentChoice(WRITE_SIGNALS),
    default=None,
    help="With --from: what confirms a run's solution (default: train; oracle uses test labels).",
)
@retired_flag(
    ABSTRACT_FLAGS["--write-signal"][0], "retired_signal", type=ComponentChoice(WRITE_SIGNALS)
)
@click.option(
    "--benchmark",
    type=ComponentChoice(BENCHMARKS),
    default="arc-agi-1",
    show_default=True,
    help="For --from-programs.",
)
@click.option(
    "--split",
    cls=BenchmarkHelpOption,
    help_from=lambda: "For --from-programs: where the tasks are: " + split_help(),
)
@click.option("--data", help="For --from-programs: task file or folder.")
@role_model_options("abstract")
def abstract(
    run_dir: Path | None,
    programs: Path | None,
    memory_path: Path,
    signal: str | None,
    retired_signal: str | None,
    benchmark: str,
    split: str | None,
    data: str | None,
    **options: Any,
) -> None:
    """Abstract every confirmed solution into the memory (resumable: solved ids are skipped).

    From a run, a memory format with contrast=true also contrasts a passing against a failing
    attempt of each such task, as an online run does."""
    from arcmemo.memory.schema import Memory
    from arcmemo.run.bootstrap import (
        abstract_into,
        items_from_programs,
        memory_summary,
        writes_from_run,
    )

    console = Console(stderr=True)
    (old_flag,) = ABSTRACT_FLAGS["--write-signal"]
    signal = current_flag(signal, retired_signal, old_flag, "--write-signal") or "train"
    with user_errors():
        if (run_dir is None) == (programs is None):
            raise click.UsageError("give exactly one of --from RUN_DIR or --from-programs DIR")
        if not memory_path.exists():
            raise click.ClickException(
                f"{memory_path} does not exist; create it first with "
                f"`arcmemo memory init --domain arc --out {memory_path}`"
            )
        Memory.load(memory_path)  # fail early on a bad file
        fmt = memory_format_spec(options, console)
        contrasting = ABSTRACTORS.create(fmt)
        pairs: dict[str, Any] = {}
        if run_dir is not None:
            items, pairs = writes_from_run(
                run_dir,
                signal,
                contrast=contrasting.contrasts,
                contrast_named=contrasting.contrast_signal,
            )
        else:
            if contrasting.contrasts:
                console.print(
                    "[yellow]warning: contrast=true: a folder of programs holds no failing "
                    "attempt; nothing is contrasted (give --from RUN)",
                    highlight=False,
                )
            assert programs is not None
            bench = BENCHMARKS.create(benchmark)
            try:
                items, rejected = items_from_programs(programs, bench, split=split, data=data)
            finally:
                bench.close()
            for task_id in rejected:
                console.print(f"[yellow]skipped {task_id}: the program fails its train pairs")
        paired = f", {len(pairs)} with a passing and a failing attempt" if pairs else ""
        console.print(f"{len(items)} verified solutions to abstract ({fmt.name}){paired}")
        log_path = memory_path.with_name(memory_path.name + ".abstraction.jsonl")
        model = open_cli_model(options, memory_path.with_name(memory_path.name + ".calls.jsonl"))
        progress = Progress(console=console, transient=True)
        bar = progress.add_task("abstracting", total=len(items) + len(pairs))

        contrasts: list[Any] = []

        def contrasted(outcome: Any) -> None:
            contrasts.append(outcome)
            done(outcome)

        def done(outcome: Any) -> None:
            progress.advance(bar)
            for failure in outcome.failures:
                console.print(f"[red]{outcome.task_id}: {failure.stage} failed: {failure.error}")

        async def go() -> list[Any]:
            try:
                return await abstract_into(
                    memory_path,
                    items,
                    {ABSTRACT: model},
                    memory_format=fmt,
                    log_path=log_path,
                    on_done=done,
                    pairs=pairs,
                    on_contrast=contrasted,
                )
            finally:
                await model.aclose()

        with progress:
            outcomes = asyncio.run(go())
        written = sum(len(o.written) for o in outcomes)
        failed = sum(bool(o.failures) for o in outcomes)
        also = f" and {len(contrasts)} contrasts" if pairs else ""
        console.print(
            f"abstracted {len(outcomes) - len(contrasts)} solutions{also}: {written} entries "
            f"written, {failed} with "
            f"failures (see {log_path}); memory now has {memory_summary(Memory.load(memory_path))}"
        )


def memory_format_spec(options: dict[str, Any], console: Console) -> ComponentSpec:
    """The memory format given by ``--memory-format``/``--memory-format-arg`` (the run's)."""

    def warn(message: str) -> None:
        console.print(f"[yellow]warning: {message}", highlight=False)

    only: dict[str, Any] = {"memory_format": None}
    chosen = config_values(RunConfig, options, warn=warn, only=only).get("memory_format")
    if chosen is None:
        default: ComponentSpec = RunConfig.model_fields["memory_format"].get_default()
        return default
    return ComponentSpec.model_validate(chosen)
