"""``arcmemo run BENCHMARK``: solve a split with or without memory, resumably."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arcmemo.benchmarks.base import TaskResult
from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import parse_model_args
from arcmemo.config import RunConfig, SamplingConfig
from arcmemo.models.client import ModelConfig
from arcmemo.models.prices import ModelPrice, PriceTable
from arcmemo.pipeline import ProgressSink, dry_run, run_benchmark


class RichProgress(ProgressSink):
    """A progress bar with tasks done, solved, tokens and cost."""

    def __init__(self, console: Console, price: ModelPrice | None = None) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=console,
        )
        self.solved = 0
        self.tokens = 0
        self.price = price
        self.cost: float | None = 0.0 if price is not None else None
        self.task_id: Any = None

    def start(self, total: int, already_done: int) -> None:
        self.progress.start()
        self.task_id = self.progress.add_task(
            "solving", total=total, completed=already_done, status=""
        )

    def task_done(self, result: TaskResult) -> None:
        self.solved += result.solved
        self.tokens += result.tokens.prompt_tokens + result.tokens.completion_tokens
        if self.cost is not None and self.price is not None:
            # Priced at the solver's rates (selection by another model is approximate);
            # summary.json has the exact figure from the call log.
            task_cost = self.price.cost_usd(result.tokens)
            self.cost = None if task_cost is None else self.cost + task_cost
        cost = f"~${self.cost:.2f}" if self.cost is not None else "cost unknown"
        self.progress.update(
            self.task_id,
            advance=1,
            status=f"solved {self.solved}  tokens {self.tokens:,}  {cost}",
        )

    def stop(self) -> None:
        self.progress.stop()


def print_summary(console: Console, summary: dict[str, Any]) -> None:
    """A readable table of the run's main numbers."""
    table = Table(title=f"{summary['benchmark']} · {summary['model']}", show_header=False)
    keys = [
        "n_tasks",
        "n_solved",
        "score",
        "strict_score",
        "oracle",
        "pass@1",
        "avg@k",
        "pass@k",
        "maj@k",
        "score_by_retry",
        "n_errors",
        "calls",
        "cache_hits",
        "tokens",
        "cost_usd",
        "wall_seconds",
    ]
    for key in keys:
        if key in summary:
            value = summary[key]
            if isinstance(value, float):
                value = f"{value:.4f}"
            table.add_row(key, str(value))
    if summary.get("leaks_test_labels"):
        table.add_row("WARNING", "memory writes used test labels (--update-signal oracle)")
    console.print(table)


@click.command("run")
@click.argument("benchmark")
@click.option("--split", help="training | evaluation | val100 (ARC); a year such as 2025 (AIME).")
@click.option("--data", help="A task file or folder instead of a split.")
@click.option("--tasks", help="Comma-separated task ids.")
@click.option("--limit", type=int, help="Only the first N tasks.")
@click.option("--model", required=True, help="Solver model, provider:model (e.g. openai:o4-mini).")
@click.option("--base-url", help="OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp, Ollama).")
@click.option("--model-arg", "model_args", multiple=True, help="Provider option key=value.")
@click.option("--aux-model", help="Model for selection and abstraction (default: --model).")
@click.option("--memory", type=click.Path(path_type=Path), help="Memory file to read.")
@click.option("--memory-out", type=click.Path(path_type=Path), help="Final memory (online).")
@click.option(
    "--select", default="llm", show_default=True, help="Selector: llm | embedding | all | none."
)
@click.option("--memory-budget", type=int, help="Token cap on the memory a selector sees.")
@click.option("--top-k", type=int, default=8, show_default=True, help="For --select embedding.")
@click.option(
    "--embedder",
    default="tfidf",
    show_default=True,
    help="For --select embedding: tfidf (offline) or openai:MODEL.",
)
@click.option("--update", type=click.Choice(["none", "online"]), default="none", show_default=True)
@click.option("--update-every", type=int, default=10, show_default=True)
@click.option(
    "--update-signal",
    type=click.Choice(["train", "consistency", "oracle"]),
    help="What confirms a solution for memory writes. Default: train (ARC: all train pairs "
    "pass), consistency (AIME: a majority answer over attempts); oracle uses test labels "
    "(reproduction only; leaks).",
)
@click.option(
    "--format",
    "memory_format",
    type=click.Choice(["ps", "oe", "cheatsheet"]),
    default="ps",
    show_default=True,
    help="What online updates write.",
)
@click.option("--attempts", type=int, default=2, show_default=True)
@click.option("--retries", type=int, help="Feedback rounds per attempt (default: 2 ARC, 0 AIME).")
@click.option("--concurrency", type=int, default=16, show_default=True)
@click.option("--rpm", type=int, help="Requests-per-minute limit.")
@click.option("--tpm", type=int, help="Tokens-per-minute limit.")
@click.option("--temperature", type=float)
@click.option("--max-tokens", type=int)
@click.option("--reasoning-effort", type=click.Choice(["low", "medium", "high"]))
@click.option("--thinking-budget", type=int)
@click.option("--no-cache", is_flag=True, help="Do not read the response cache (still writes).")
@click.option("--cache-dir", type=click.Path(path_type=Path))
@click.option(
    "--out", type=click.Path(path_type=Path), help="Run directory (resumes if it exists)."
)
@click.option("--seed", type=int, help="Shuffle the task order with this seed.")
@click.option("--dry-run", is_flag=True, help="Render prompts and estimate cost; call nothing.")
def run(benchmark: str, **options: Any) -> None:
    """Run BENCHMARK (arc-agi-1, aime) and write a run directory."""
    from arcmemo.benchmarks.base import benchmark_names, create_benchmark

    console = Console(stderr=True)
    with user_errors():
        if benchmark not in benchmark_names():
            raise click.BadParameter(
                f"unknown benchmark {benchmark!r}; choose from {', '.join(benchmark_names())}"
            )
        defaults = create_benchmark(benchmark)
        retries = options["retries"]
        if retries is None:
            retries = defaults.default_retries
        update_signal = options["update_signal"] or defaults.default_update_signal
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        config = RunConfig(
            benchmark=benchmark,
            split=options["split"],
            data=options["data"],
            tasks=[t.strip() for t in options["tasks"].split(",") if t.strip()]
            if options["tasks"]
            else None,
            limit=options["limit"],
            model=options["model"],
            base_url=options["base_url"],
            model_args=parse_model_args(options["model_args"]),
            aux_model=options["aux_model"],
            sampling=SamplingConfig(
                temperature=options["temperature"],
                max_tokens=options["max_tokens"],
                reasoning_effort=options["reasoning_effort"],
                thinking_budget=options["thinking_budget"],
            ),
            memory=options["memory"],
            memory_out=options["memory_out"],
            select=options["select"],
            memory_budget=options["memory_budget"],
            top_k=options["top_k"],
            embedder=options["embedder"],
            update=options["update"],
            update_every=options["update_every"],
            update_signal=update_signal,
            memory_format=options["memory_format"],
            attempts=options["attempts"],
            retries=retries,
            seed=options["seed"],
            models=ModelConfig(
                concurrency=options["concurrency"],
                rpm=options["rpm"],
                tpm=options["tpm"],
                cache=not options["no_cache"],
                cache_dir=options["cache_dir"],
            ),
            out=options["out"] or Path("runs") / f"{stamp}-{benchmark}",
            created_at=datetime.now(timezone.utc),
        )
        if options["dry_run"]:
            report = asyncio.run(dry_run(config))
            cost = (
                f"${report.cost_usd:.4f}" if report.cost_usd is not None else "unknown (no price)"
            )
            console.print(
                f"dry run: {report.n_tasks} tasks, {report.calls} calls, "
                f"~{report.prompt_tokens:,} prompt tokens, estimated prompt cost {cost}\n"
                f"prompts written to {report.prompts_dir}"
            )
            return
        price = PriceTable.load(config.models.prices_path).price_for(config.model)
        progress = RichProgress(console, price)
        summary = asyncio.run(run_benchmark(config, progress=progress))
        print_summary(console, summary)
        console.print(f"run directory: {config.out}")
