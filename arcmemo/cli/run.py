"""``arcmemo run BENCHMARK``: solve a split with or without memory, resumably."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arcmemo.abstraction.base import ABSTRACTORS
from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.cli.benchmark_help import (
    BenchmarkHelpOption,
    retries_help,
    split_help,
    write_signal_help,
)
from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import (
    ComponentChoice,
    RegistryHelpCommand,
    parse_component_args,
    parse_model_args,
    sandbox_options,
    sandbox_spec,
    selector_args,
)
from arcmemo.config import ONLINE_SHARD_REFUSAL, RunConfig, SamplingConfig, ShardSpec
from arcmemo.estimate import RunEstimate, Span
from arcmemo.models.batch import BatchProgress, BatchSettings
from arcmemo.models.client import ModelConfig, ModelUnreachableError
from arcmemo.models.prices import BATCH_DISCOUNT
from arcmemo.pipeline import dry_run, resolve_config, run_benchmark, run_warnings
from arcmemo.progress import (
    PeriodicLines,
    ProgressEvent,
    ProgressSink,
    ProgressState,
    RunStarted,
    RunStopped,
    clock_text,
)
from arcmemo.registry import ComponentSpec
from arcmemo.report.summary import summary_rows
from arcmemo.sandbox import SANDBOXES
from arcmemo.selection.base import SELECTORS
from arcmemo.signals import WRITE_SIGNALS


class LiveProgress(ProgressSink):
    """On a terminal: a bar over the tasks with the stage, requests in flight, tokens, cost
    so far and an ETA, redrawn as events arrive."""

    def __init__(self, console: Console, clock: Callable[[], float] = time.monotonic) -> None:
        self.state = ProgressState(clock=clock)
        self.progress = Progress(
            TextColumn("{task.fields[stage]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=console,
            refresh_per_second=4,
        )
        self.task_id: Any = None

    def emit(self, event: ProgressEvent) -> None:
        self.state.apply(event)
        if isinstance(event, RunStarted):
            self.progress.start()
            self.task_id = self.progress.add_task("run", total=event.total, stage="", status="")
        if self.task_id is None:
            return
        state = self.state
        eta = state.eta_s()
        self.progress.update(
            self.task_id,
            completed=state.finished,
            stage=state.stage_text(),
            status=f"{state.solved_text()} | in flight {state.in_flight_text()} | "
            f"tokens {state.tokens:,} | {state.cost_text()} | "
            f"ETA {'unknown' if eta is None else clock_text(eta)}",
        )
        if isinstance(event, RunStopped):
            self.progress.stop()


def progress_display(console: Console, every_s: float) -> ProgressSink:
    """The live display on a terminal; plain lines every ``every_s`` seconds in a log."""
    if console.is_terminal:
        return LiveProgress(console)
    stream = console.file

    def write(line: str) -> None:
        stream.write(line + "\n")
        stream.flush()

    return PeriodicLines(write, every_s)


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def summary_table_rows(summary: dict[str, Any], metrics: tuple[str, ...]) -> list[tuple[str, str]]:
    """The run's numbers as (label, formatted value) rows: no Python reprs."""
    rows = [
        (label, value)
        for label, value in summary_rows(summary, metrics)
        if label not in ("model calls", "cache hits", "wall time")
    ]
    if "mode" in summary:
        rows.insert(1, ("mode", str(summary["mode"])))
    if summary.get("n_unlabelled") and "mode" not in summary:
        rows.append(("unlabelled tasks", _count(summary["n_unlabelled"]) + " (not scored)"))
    if "calls" in summary:
        rows.append(
            (
                "model calls",
                f"{_count(summary['calls'])} "
                f"({_count(summary.get('cache_hits', 0))} from the cache)",
            )
        )
    if "wall_seconds" in summary:
        rows.append(("wall time", clock_text(float(summary["wall_seconds"]))))
    precision = summary.get("write_precision")
    if isinstance(precision, dict) and precision.get("written"):
        rows.append(
            (
                "write precision",
                f"{precision['right']}/{precision['written']} written solutions right on the "
                f"test outputs ({precision['signal']})",
            )
        )
    return rows


def print_summary(console: Console, summary: dict[str, Any], metrics: tuple[str, ...]) -> None:
    """A readable table of the run's main numbers (``metrics``: the benchmark's headline)."""
    table = Table(title=f"{summary['benchmark']} · {summary['model']}", show_header=False)
    for label, value in summary_table_rows(summary, metrics):
        table.add_row(label, value)
    for warning in summary.get("warnings", []):
        table.add_row("WARNING", warning)
    console.print(table)
    print_errors(console, summary)


def _span(span: Span | None, money: bool = False) -> str:
    if span is None:
        return "unknown (no price)"
    if money:
        return f"${span.low:,.2f} - ${span.high:,.2f}"
    return f"{span.low:,.0f}" if span.low == span.high else f"{span.low:,.0f} - {span.high:,.0f}"


def print_estimate(console: Console, estimate: RunEstimate) -> None:
    """The dry run's estimate: every stage as a range, then the assumptions."""
    table = Table(title=f"dry run: {estimate.n_tasks} tasks (estimate, low - high)")
    for column in ("stage", "model", "calls", "prompt tokens", "output tokens", "cost"):
        table.add_column(column)
    for name, stage in estimate.stages.items():
        table.add_row(
            name,
            stage.model,
            _span(stage.calls),
            _span(stage.input_tokens),
            _span(stage.output_tokens),
            _span(stage.cost_usd, money=True),
        )
    table.add_row(
        "total",
        "",
        _span(estimate.calls),
        _span(estimate.input_tokens),
        _span(estimate.output_tokens),
        _span(estimate.cost_usd, money=True),
    )
    console.print(table)
    for assumption in estimate.assumptions:
        console.print(f"  assumed: {assumption}", highlight=False)


def print_batch_cost(console: Console, estimate: RunEstimate) -> None:
    """What ``--batch`` would make the estimate cost (the batch discount on every token)."""
    cost = estimate.cost_usd
    if cost is None:
        console.print("with --batch: cost unknown (a model has no price)", highlight=False)
        return
    batch = Span(low=cost.low * BATCH_DISCOUNT, high=cost.high * BATCH_DISCOUNT)
    saved = Span(low=cost.low - batch.low, high=cost.high - batch.high)
    console.print(
        f"with --batch: {_span(batch, money=True)} (saves {_span(saved, money=True)}; "
        f"batch price = {BATCH_DISCOUNT:g} x the price table)",
        highlight=False,
    )


def print_errors(console: Console, summary: dict[str, Any]) -> None:
    """Under the table: what ended tasks in error, by kind, with the first message of each."""
    errors = summary.get("errors") or {}
    if not errors and summary.get("complete", True):
        return
    console.print(
        f"[red]INCOMPLETE RUN: {summary.get('n_errors', 0)} of {summary.get('n_tasks', 0)} "
        "tasks ended on a model error; the numbers above are not a result. Re-run the same "
        "command to retry them (answered calls come from the cache).",
        highlight=False,
    )
    for kind, entry in errors.items():
        console.print(
            f"  {kind}: {entry['count']} task(s); first (task {entry['task']}): {entry['first']}",
            markup=False,
            highlight=False,
        )


@click.command(
    "run",
    cls=RegistryHelpCommand,
    registries=(BENCHMARKS, SELECTORS, ABSTRACTORS, WRITE_SIGNALS, SANDBOXES),
)
@click.argument("benchmark", type=ComponentChoice(BENCHMARKS))
@click.option("--benchmark-arg", "benchmark_args", multiple=True, help="Benchmark option k=v.")
@click.option("--split", cls=BenchmarkHelpOption, help_from=split_help)
@click.option("--data", help="A task file or folder instead of a split.")
@click.option("--tasks", help="Comma-separated task ids.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N tasks.")
@click.option(
    "--shard",
    help="I/N: only shard I (0..N-1) of the ordered task list, every N-th task from "
    "position I (SLURM: --shard $SLURM_ARRAY_TASK_ID/N); `arcmemo merge` joins the shards. "
    "Not with --update online.",
)
@click.option("--model", required=True, help="Solver model, provider:model (e.g. openai:o4-mini).")
@click.option(
    "--base-url",
    "base_urls",
    multiple=True,
    help="OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp, Ollama). Repeat it (or give "
    "URL,URL) for replicas of one deployment: requests are spread over them with failover.",
)
@click.option(
    "--model-arg",
    "model_args",
    multiple=True,
    help="Solver provider option key=value; `arcmemo models` lists each provider's options "
    "(openai: top_p, top_k, seed, stop, chat_template_kwargs, extra_body, timeout_s, ...).",
)
@click.option(
    "--aux-model",
    help="Model for selection, description and abstraction (default: --model). It has its "
    "own endpoint and options: --base-url and --model-arg apply to the solver only.",
)
@click.option(
    "--aux-base-url",
    "aux_base_urls",
    multiple=True,
    help="Endpoint of --aux-model (default: its provider's host); repeatable like --base-url.",
)
@click.option("--aux-model-arg", "aux_model_args", multiple=True, help="Aux provider option k=v.")
@click.option("--aux-temperature", type=float, help="Temperature of every aux-model call.")
@click.option(
    "--aux-max-tokens", type=click.IntRange(min=1), help="Token cap of every aux-model call."
)
@click.option("--memory", type=click.Path(path_type=Path), help="Memory file to read.")
@click.option("--memory-out", type=click.Path(path_type=Path), help="Final memory (online).")
@click.option(
    "--select",
    type=ComponentChoice(SELECTORS),
    help="Selector (default: the benchmark's, llm; none without --memory).",
)
@click.option("--select-arg", "select_args", multiple=True, help="Selector option k=v.")
@click.option(
    "--memory-budget",
    type=click.IntRange(min=1),
    help="Token cap on the memory a selector sees (budget_tokens).",
)
@click.option(
    "--top-k",
    type=click.IntRange(min=1),
    help="Entries kept by --select embedding (top_k; default 8).",
)
@click.option(
    "--embedder", help="For --select embedding: tfidf (default, offline) or openai:MODEL."
)
@click.option("--update", type=click.Choice(["none", "online"]), default="none", show_default=True)
@click.option("--update-every", type=click.IntRange(min=1), default=10, show_default=True)
@click.option(
    "--schedule",
    type=click.Choice(["passes", "tasks"]),
    help="When retries run. passes (default with --update online; the paper's): first "
    "tries of every task batch by batch, then one pass of retries after another over the "
    "attempts still failing, so a retry sees the memory written by every batch before it. "
    "tasks (default otherwise): each task's retries inline (more throughput).",
)
@click.option(
    "--reselect/--no-reselect",
    default=None,
    help="Retries select memory entries again, from the memory as it stands then "
    "(default: on with --update online, off otherwise).",
)
@click.option(
    "--update-signal",
    type=ComponentChoice(WRITE_SIGNALS),
    cls=BenchmarkHelpOption,
    help_from=write_signal_help,
)
@click.option(
    "--format",
    "memory_format",
    type=ComponentChoice(ABSTRACTORS),
    default="ps",
    show_default=True,
    help="What online updates write.",
)
@click.option("--format-arg", "format_args", multiple=True, help="Memory-format option k=v.")
@click.option(
    "--attribution-judge",
    is_flag=True,
    help="Online runs: the aux model judges which shown concepts each solution used "
    "(one call per task; default: the lexical check alone).",
)
@sandbox_options
@click.option("--attempts", type=click.IntRange(min=1), default=2, show_default=True)
@click.option(
    "--retries",
    type=click.IntRange(min=0),
    cls=BenchmarkHelpOption,
    help_from=retries_help,
)
@click.option("--concurrency", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--rpm", type=click.IntRange(min=1), help="Requests-per-minute limit.")
@click.option("--tpm", type=click.IntRange(min=1), help="Tokens-per-minute limit.")
@click.option("--temperature", type=float)
@click.option("--max-tokens", type=click.IntRange(min=1))
@click.option("--reasoning-effort", type=click.Choice(["low", "medium", "high"]))
@click.option("--thinking-budget", type=click.IntRange(min=1))
@click.option("--no-cache", is_flag=True, help="Do not read the response cache (still writes).")
@click.option("--cache-dir", type=click.Path(path_type=Path))
@click.option(
    "--out", type=click.Path(path_type=Path), help="Run directory (resumes if it exists)."
)
@click.option("--order-seed", type=int, help="Shuffle the task order with this seed.")
@click.option(
    "--sampling-seed",
    type=int,
    help="Seed sent to providers that honour one (sample i of a request: seed + i).",
)
@click.option(
    "--replicate",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Which independent repetition this run is: each replicate has its own cache "
    "namespace and seeds, so replicates 0, 1, 2 give the paper's three runs.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="Per-request timeout in seconds (default 600).",
)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    help="Retries of a failed request (default 6).",
)
@click.option(
    "--force-resume",
    is_flag=True,
    help="Continue the run in --out although settings that change results differ "
    "(each difference is recorded in config.json under forced_resume).",
)
@click.option(
    "--batch",
    is_flag=True,
    help="Send model requests as provider batches (OpenAI Batch API, Anthropic Message "
    "Batches): half price, answered within 24 h, same results; a rerun resumes the batches "
    "recorded in batches.jsonl instead of paying again.",
)
@click.option("--dry-run", is_flag=True, help="Render prompts and estimate cost; call nothing.")
@click.option(
    "--progress-every",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="When stderr is not a terminal (nohup, SLURM): seconds between plain progress lines.",
)
def run(benchmark: str, **options: Any) -> None:
    """Run BENCHMARK and write a run directory (re-running the same command resumes)."""
    console = Console(stderr=True)
    with user_errors():
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        config = RunConfig(
            benchmark=ComponentSpec(
                name=benchmark,
                options=parse_component_args(options["benchmark_args"], "--benchmark-arg"),
            ),
            split=options["split"],
            data=options["data"],
            tasks=[t.strip() for t in options["tasks"].split(",") if t.strip()]
            if options["tasks"]
            else None,
            limit=options["limit"],
            shard=_shard(options),
            model=options["model"],
            base_url=",".join(options["base_urls"]) or None,
            model_args=parse_model_args(options["model_args"]),
            aux_model=options["aux_model"],
            aux_base_url=",".join(options["aux_base_urls"]) or None,
            aux_model_args=parse_model_args(options["aux_model_args"]),
            aux_sampling=SamplingConfig(
                temperature=options["aux_temperature"], max_tokens=options["aux_max_tokens"]
            ),
            sampling=SamplingConfig(
                temperature=options["temperature"],
                max_tokens=options["max_tokens"],
                reasoning_effort=options["reasoning_effort"],
                thinking_budget=options["thinking_budget"],
            ),
            memory=options["memory"],
            memory_out=options["memory_out"],
            selector=_selector_spec(benchmark, options),
            update=options["update"],
            update_every=options["update_every"],
            schedule=options["schedule"],
            reselect=options["reselect"],
            write_signal=options["update_signal"],
            attribution_judge=options["attribution_judge"],
            memory_format=ComponentSpec(
                name=options["memory_format"],
                options=parse_component_args(options["format_args"], "--format-arg"),
            ),
            sandbox=sandbox_spec(options),
            attempts=options["attempts"],
            retries=options["retries"],
            order_seed=options["order_seed"],
            sampling_seed=options["sampling_seed"],
            replicate=options["replicate"],
            models=ModelConfig(
                **{
                    key: value
                    for key, value in (
                        ("timeout_s", options["timeout"]),
                        ("max_retries", options["max_retries"]),
                    )
                    if value is not None
                },
                concurrency=options["concurrency"],
                rpm=options["rpm"],
                tpm=options["tpm"],
                cache=not options["no_cache"],
                cache_dir=options["cache_dir"],
            ),
            out=options["out"] or Path("runs") / f"{stamp}-{benchmark}",
            created_at=datetime.now(timezone.utc),
            batch=options["batch"],
        )
        if options["dry_run"]:
            report = asyncio.run(dry_run(config))
            print_estimate(console, report.estimate)
            if config.batch:
                print_batch_cost(console, report.estimate)
            console.print(f"prompts written to {report.prompts_dir}")
            click.echo(report.estimate_path)  # stdout: the machine-readable estimate
            return
        # Resolved once here: run_benchmark keeps what a resolved config decided, so the
        # memory file (35 MB at 30,000 concepts) is not hashed a second time.
        config = resolve_config(config)
        for warning in run_warnings(config):
            console.print(f"[yellow]warning: {warning}", highlight=False)
        progress = progress_display(console, options["progress_every"])
        try:
            summary = asyncio.run(
                run_benchmark(
                    config,
                    progress=progress,
                    force_resume=options["force_resume"],
                    batch_settings=BatchSettings(on_progress=batch_progress_printer(console)),
                )
            )
        except ModelUnreachableError as error:
            raise RunIncomplete(
                f"{error} (partial summary: {config.out / 'summary.json'})"
            ) from None
        headline = BENCHMARKS.get(benchmark).factory.headline_metrics  # type: ignore[attr-defined]
        print_summary(console, summary, headline)
        console.print(f"run directory: {config.out}")
        # The one line on stdout: where a script finds the machine-readable numbers.
        click.echo(config.out / "summary.json")
        if not summary["complete"]:
            raise SystemExit(EXIT_INCOMPLETE)


def batch_progress_printer(console: Console) -> Callable[[BatchProgress], None]:
    """A ``--batch`` progress display: one line whenever a batch's status changes."""
    last: dict[str, tuple[str, int, int]] = {}

    def show(progress: BatchProgress) -> None:
        status = progress.status
        now = (status.state, status.done, status.failed)
        if last.get(progress.batch_id) == now:
            return
        last[progress.batch_id] = now
        console.print(
            f"batch {progress.batch_id} ({progress.model}): {status.state}, "
            f"{status.done}/{status.total} done, {status.failed} failed, "
            f"{progress.elapsed_s:.0f} s",
            markup=False,
            highlight=False,
        )

    return show


# Exit status of a run that finished with tasks in error, or was stopped because its model
# could not be reached (1 is a user error, 2 a usage error).
EXIT_INCOMPLETE = 3


class RunIncomplete(click.ClickException):
    exit_code = EXIT_INCOMPLETE


def _shard(options: dict[str, Any]) -> ShardSpec | None:
    if options["shard"] is None:
        return None
    if options["update"] == "online":
        raise click.BadParameter(ONLINE_SHARD_REFUSAL, param_hint="--shard")
    try:
        return ShardSpec.parse(options["shard"])
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--shard") from None


def _selector_spec(benchmark: str, options: dict[str, Any]) -> ComponentSpec | None:
    """--select with --select-arg and the named shortcuts for common selector options
    (which apply to the benchmark's default selector when --select is not given)."""
    values = selector_args(
        options["select_args"],
        memory_budget=options["memory_budget"],
        top_k=options["top_k"],
        embedder=options["embedder"],
    )
    name = options["select"]
    if name is None:
        if not values:
            return None
        name = BENCHMARKS.get(benchmark).factory.defaults.selector  # type: ignore[attr-defined]
    return ComponentSpec(name=name, options=values)
