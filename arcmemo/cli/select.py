"""``arcmemo select``: show what a selector would pick for one task, and why."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import model_options, open_cli_model


@click.command("select")
@click.argument("task_id")
@click.option(
    "--memory",
    "memory_path",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    required=True,
)
@click.option("--benchmark", default="arc-agi-1", show_default=True)
@click.option("--split", help="Where the task is (default: ARC-AGI-1 evaluation).")
@click.option("--data", help="Task file or folder.")
@click.option(
    "--select",
    "selector_name",
    default="llm",
    show_default=True,
    help="llm | embedding | all | none.",
)
@click.option("--memory-budget", type=int, help="Token cap on the memory the selector sees.")
@click.option("--top-k", type=int, default=8, show_default=True)
@click.option("--embedder", default="tfidf", show_default=True, help="tfidf or openai:MODEL.")
@model_options
def select(
    task_id: str,
    memory_path: Path,
    benchmark: str,
    split: str | None,
    data: str | None,
    selector_name: str,
    memory_budget: int | None,
    top_k: int,
    embedder: str,
    **options: Any,
) -> None:
    """Print the entries selected for TASK_ID, the selector's reasoning and the solve view."""
    from arcmemo.benchmarks.base import create_benchmark
    from arcmemo.memory.ontology import Memory
    from arcmemo.pipeline import build_selector
    from arcmemo.runner import hide_own_concepts

    console = Console()
    with user_errors():
        bench = create_benchmark(benchmark)
        try:
            (task,) = bench.load(split=split, data=data, task_ids=[task_id], limit=None)
        finally:
            bench.close()
        memory = hide_own_concepts(Memory.load(memory_path), task_id)
        selector = build_selector(
            selector_name, memory_budget=memory_budget, top_k=top_k, embedder=embedder
        )
        model = open_cli_model(options) if selector_name == "llm" else None

        async def go() -> Any:
            try:
                return await selector.select(
                    memory, bench.describe(task), task_id=task_id, model=model
                )
            finally:
                if model is not None:
                    await model.aclose()

        selection = asyncio.run(go())
        console.rule(f"selected for {task_id} ({selector_name})")
        for name in selection.selected:
            console.print(f"- {name}")
        if selection.unknown:
            console.print(
                f"[yellow]names matching nothing in memory: {', '.join(selection.unknown)}"
            )
        if selection.trace:
            console.rule("why")
            console.print(selection.trace, markup=False)
        console.rule("solve-prompt concepts section")
        console.print(selector.render(memory, selection), markup=False)
