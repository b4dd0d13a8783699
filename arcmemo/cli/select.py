"""``arcmemo select``: show what a selector would pick for one task, and why."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape

from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.cli.benchmark_help import BenchmarkHelpOption, split_help
from arcmemo.cli.config_options import config_options, config_values
from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import (
    ComponentChoice,
    RegistryHelpCommand,
    open_cli_model,
    role_model_options,
)
from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import SELECT
from arcmemo.memory.untrusted import display_copy
from arcmemo.run.config import RunConfig
from arcmemo.sandbox.text import visible_text
from arcmemo.selection.base import SELECTORS

if TYPE_CHECKING:
    from arcmemo.run.solve_prompt import PreparedPrompt


# The settings of arcmemo run this command takes: the selector, and the prompt variants
# (each variant's selection is shown, asked for as a run asks for it).
SELECT_SETTINGS: dict[str, Iterable[str] | None] = {"selector": None, "variants": None}


@click.command(
    "select",
    cls=RegistryHelpCommand,
    registries=(SELECTORS,),
    short_help="Show what a selector picks for a task, and why.",
)
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
@config_options(RunConfig, SELECT_SETTINGS)
@role_model_options("select")
def select(
    task_id: str,
    memory_path: Path,
    benchmark: str,
    split: str | None,
    data: str | None,
    **options: Any,
) -> None:
    """Print the entries selected for TASK_ID, the selector's reasoning and the solve view;
    with --variants N, those of each of the N prompt variants a run would select (variant v's
    selector call is sample v of the same request, as in arcmemo run)."""
    from arcmemo.memory.schema import Memory
    from arcmemo.run.solve_prompt import prepare_prompt

    console = Console()
    with user_errors():
        bench = BENCHMARKS.create(benchmark)
        try:
            (task,) = bench.load(split=split, data=data, task_ids=[task_id], limit=None)
        finally:
            bench.close()
        memory = display_copy(Memory.load(memory_path))
        # The run's --select options; without --select this command shows the llm selector.
        given = config_values(RunConfig, options, only=SELECT_SETTINGS)
        chosen = given.get("selector", {})
        variants = given.get("variants", 1)
        selector_name = chosen.get("name", "llm")
        spec = ComponentSpec(name=selector_name, options=chosen.get("options", {}))
        selector = SELECTORS.create(spec)
        model = open_cli_model(options) if selector.uses_model else None

        async def go() -> list[PreparedPrompt]:
            try:
                return [
                    await prepare_prompt(
                        bench,
                        task,
                        memory=memory,
                        selector=selector,
                        clients={SELECT: model.with_samples(variant)} if model is not None else {},
                    )
                    for variant in range(variants)
                ]
            finally:
                if model is not None:
                    await model.aclose()

        for variant, prepared in enumerate(asyncio.run(go())):
            which = f", prompt variant {variant} of {variants}" if variants > 1 else ""
            show_selection(console, prepared, f"selected for {task_id} ({selector_name}{which})")


def show_selection(console: Console, prepared: PreparedPrompt, title: str) -> None:
    """One selection: the names chosen, those that matched nothing, its warning, the
    selector's reasoning and the solve prompt's memory section."""
    selection = prepared.selection
    assert selection is not None
    console.rule(title)
    for name in selection.selected:
        console.print(f"- {visible_text(name)}", markup=False)
    if selection.unknown:
        unknown = visible_text(", ".join(selection.unknown))
        console.print(f"[yellow]names matching nothing in memory: {escape(unknown)}")
    if selection.warning:
        console.print(
            f"[yellow]warning: {escape(visible_text(selection.warning))}", highlight=False
        )
    if selection.trace:
        console.rule("why")
        console.print(visible_text(selection.trace), markup=False)
    console.rule("solve-prompt concepts section")
    console.print(visible_text(prepared.concepts), markup=False)
