"""``arcmemo select``: show what a selector would pick for one task, and why."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.cli.benchmark_help import BenchmarkHelpOption, split_help
from arcmemo.cli.config_options import config_options, config_values
from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import ComponentChoice, RegistryHelpCommand, model_options, open_cli_model
from arcmemo.config import RunConfig
from arcmemo.registry import ComponentSpec
from arcmemo.selection.base import SELECTORS


@click.command("select", cls=RegistryHelpCommand, registries=(SELECTORS,))
@click.argument("task_id")
@click.option(
    "--memory",
    "memory_path",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    required=True,
)
@click.option(
    "--benchmark", type=ComponentChoice(BENCHMARKS), default="arc-agi-1", show_default=True
)
@click.option(
    "--split", cls=BenchmarkHelpOption, help_from=lambda: "Where the task is: " + split_help()
)
@click.option("--data", help="Task file or folder.")
@config_options(RunConfig, {"selector": None})
@model_options
def select(
    task_id: str,
    memory_path: Path,
    benchmark: str,
    split: str | None,
    data: str | None,
    **options: Any,
) -> None:
    """Print the entries selected for TASK_ID, the selector's reasoning and the solve view."""
    from arcmemo.memory.ontology import Memory
    from arcmemo.solve_prompt import prepare_prompt

    console = Console()
    with user_errors():
        bench = BENCHMARKS.create(benchmark)
        try:
            (task,) = bench.load(split=split, data=data, task_ids=[task_id], limit=None)
        finally:
            bench.close()
        memory = Memory.load(memory_path)
        # The run's --select options; without --select this command shows the llm selector.
        chosen = config_values(RunConfig, options, only={"selector": None}).get("selector", {})
        selector_name = chosen.get("name", "llm")
        spec = ComponentSpec(name=selector_name, options=chosen.get("options", {}))
        selector = SELECTORS.create(spec)
        model = open_cli_model(options) if selector.uses_model else None

        async def go() -> Any:
            try:
                return await prepare_prompt(
                    bench, task, memory=memory, selector=selector, model=model
                )
            finally:
                if model is not None:
                    await model.aclose()

        prepared = asyncio.run(go())
        selection = prepared.selection
        assert selection is not None
        console.rule(f"selected for {task_id} ({selector_name})")
        for name in selection.selected:
            console.print(f"- {name}")
        if selection.unknown:
            console.print(
                f"[yellow]names matching nothing in memory: {', '.join(selection.unknown)}"
            )
        if selection.warning:
            console.print(f"[yellow]warning: {selection.warning}", highlight=False)
        if selection.trace:
            console.rule("why")
            console.print(selection.trace, markup=False)
        console.rule("solve-prompt concepts section")
        console.print(prepared.concepts, markup=False)
