"""``arcmemo abstract``: distill verified solutions into a memory file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import Progress

from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import model_options, open_cli_model


@click.command("abstract")
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
@click.option(
    "--format",
    "memory_format",
    type=click.Choice(["ps", "oe", "cheatsheet"]),
    default="ps",
    show_default=True,
)
@click.option(
    "--signal",
    type=click.Choice(["train", "consistency", "oracle"]),
    default="train",
    show_default=True,
    help="What confirms a run's solution (oracle uses test labels).",
)
@click.option("--benchmark", default="arc-agi-1", show_default=True, help="For --from-programs.")
@click.option("--split", help="For --from-programs: where the tasks are (default: ARC-AGI-1).")
@click.option("--data", help="For --from-programs: task file or folder.")
@model_options
def abstract(
    run_dir: Path | None,
    programs: Path | None,
    memory_path: Path,
    memory_format: str,
    signal: str,
    benchmark: str,
    split: str | None,
    data: str | None,
    **options: Any,
) -> None:
    """Abstract every confirmed solution into the memory (resumable: solved ids are skipped)."""
    from arcmemo.benchmarks.base import create_benchmark
    from arcmemo.bootstrap import abstract_into, items_from_programs, items_from_run, memory_summary
    from arcmemo.memory.ontology import Memory

    console = Console(stderr=True)
    with user_errors():
        if (run_dir is None) == (programs is None):
            raise click.UsageError("give exactly one of --from RUN_DIR or --from-programs DIR")
        if not memory_path.exists():
            raise click.ClickException(
                f"{memory_path} does not exist; create it first with "
                f"`arcmemo memory init --domain arc --out {memory_path}`"
            )
        Memory.load(memory_path)  # fail early on a bad file
        if run_dir is not None:
            _, items = items_from_run(run_dir, signal)
        else:
            assert programs is not None
            bench = create_benchmark(benchmark)
            try:
                items, rejected = items_from_programs(programs, bench, split=split, data=data)
            finally:
                bench.close()
            for task_id in rejected:
                console.print(f"[yellow]skipped {task_id}: the program fails its train pairs")
        console.print(f"{len(items)} verified solutions to abstract ({memory_format})")
        log_path = memory_path.with_name(memory_path.name + ".abstraction.jsonl")
        model = open_cli_model(options, memory_path.with_name(memory_path.name + ".calls.jsonl"))
        progress = Progress(console=console, transient=True)
        bar = progress.add_task("abstracting", total=len(items))

        def done(outcome: Any) -> None:
            progress.advance(bar)
            with open(log_path, "a", encoding="utf-8") as handle:
                handle.write(outcome.model_dump_json() + "\n")
            for failure in outcome.failures:
                console.print(f"[red]{outcome.task_id}: {failure.stage} failed: {failure.error}")

        async def go() -> list[Any]:
            try:
                return await abstract_into(
                    memory_path, items, model, memory_format=memory_format, on_done=done
                )
            finally:
                await model.aclose()

        with progress:
            outcomes = asyncio.run(go())
        written = sum(len(o.written) for o in outcomes)
        failed = sum(bool(o.failures) for o in outcomes)
        console.print(
            f"abstracted {len(outcomes)} solutions: {written} entries written, {failed} with "
            f"failures (see {log_path}); memory now has {memory_summary(Memory.load(memory_path))}"
        )
