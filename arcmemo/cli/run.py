"""``arcmemo run BENCHMARK``: solve a split with or without memory, resumably."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arcmemo.abstraction.base import ABSTRACTORS
from arcmemo.analysis.report.summary import summary_rows, wall_time_text
from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.cli.config_options import GroupedOption, config_options, config_values
from arcmemo.cli.console import print_table
from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import RegistryHelpCommand
from arcmemo.core.progress import (
    PeriodicLines,
    ProgressEvent,
    ProgressSink,
    ProgressState,
    RunStarted,
    RunStopped,
    clock_text,
)
from arcmemo.models.batch import BatchProgress
from arcmemo.models.prices import BATCH_DISCOUNT
from arcmemo.models.retry import ModelUnreachableError
from arcmemo.run.config import ResolvedRunConfig, RunConfig
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.estimate import RunEstimate, Span
from arcmemo.run.pipeline import dry_run, interrupted, run_benchmark
from arcmemo.run.resolve import resolve_config
from arcmemo.run.summary import ABSTRACT_ERROR, summarize_directory
from arcmemo.run.warnings import run_warnings
from arcmemo.sandbox import SANDBOXES
from arcmemo.selection.base import SELECTORS
from arcmemo.signals.base import WRITE_SIGNALS


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
            f"{state.usage_text()} | "
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
        (label, value) for label, value in summary_rows(summary, metrics) if label != "wall time"
    ]
    if "mode" in summary:
        rows.insert(1, ("mode", str(summary["mode"])))
    if summary.get("n_unlabelled") and "mode" not in summary:
        rows.append(("unlabelled tasks", _count(summary["n_unlabelled"]) + " (not scored)"))
    wall = wall_time_text(summary)
    if wall is not None:
        rows.append(("wall time", wall))
    precision = summary.get("write_precision")
    if isinstance(precision, dict) and (precision.get("written") or precision.get("confirmed")):
        text = (
            f"{precision['right']}/{precision['written']} written solutions right on the "
            f"test outputs ({precision['signal']})"
        )
        confirmed = precision.get("confirmed")
        if confirmed is not None and confirmed != precision["written"]:
            text += (
                f"; {confirmed} confirmed, {confirmed - precision['written']} of them not "
                "written (the abstraction failed)"
            )
        rows.append(("write precision", text))
    return rows


def print_summary(console: Console, summary: dict[str, Any], metrics: tuple[str, ...]) -> None:
    """A readable table of the run's main numbers (``metrics``: the benchmark's headline)."""
    table = Table(title=f"{summary['benchmark']} · {summary['model']}", show_header=False)
    for label, value in summary_table_rows(summary, metrics):
        table.add_row(label, value)
    for warning in summary.get("warnings", []):
        table.add_row("WARNING", warning)
    print_table(console, table)
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
    columns = ("stage", "model", "calls", "samples", "prompt tokens", "output tokens", "cost")
    for column in columns:
        # a model name is copied into commands: never folded, whatever the width
        table.add_column(column, no_wrap=column == "model")
    for name, stage in estimate.stages.items():
        table.add_row(
            name,
            stage.model,
            _span(stage.calls),
            _span(stage.samples),
            _span(stage.input_tokens),
            _span(stage.output_tokens),
            _span(stage.cost_usd, money=True),
        )
    table.add_row(
        "total",
        "",
        _span(estimate.calls),
        _span(estimate.samples),
        _span(estimate.input_tokens),
        _span(estimate.output_tokens),
        _span(estimate.cost_usd, money=True),
    )
    print_table(console, table)
    for assumption in estimate.assumptions:
        console.print(f"  assumed: {assumption}", highlight=False)
    for line in estimate.too_long:
        console.print(f"[yellow]warning: {line}", highlight=False)


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
        f"provider-batch price = {BATCH_DISCOUNT:g} x the price table)",
        highlight=False,
    )


def print_errors(console: Console, summary: dict[str, Any]) -> None:
    """Under the table: the tasks whose prompt could not fit the model's window, the
    prompts cut to fit it, the answers cut at max_tokens, and what ended tasks in error, by
    kind, with the first message of each."""
    too_long = summary.get("prompt_too_long") or {}
    if too_long:
        console.print(
            f"[yellow]{len(too_long)} task(s) ended as prompt_too_long (a prompt longer than "
            "the model's context window; counted as unsolved, not as errors):",
            highlight=False,
        )
        for task_id, why in too_long.items():
            console.print(f"  {task_id}: {why}", markup=False, highlight=False)
    if summary.get("prompts_cut"):
        console.print(
            f"[yellow]{summary['prompts_cut']} prompt(s) were cut to fit the model's context "
            "window (what each lost: the report, or prompt_fit in results.jsonl).",
            highlight=False,
        )
    if summary.get("truncated"):
        console.print(
            f"[yellow]{summary['truncated']} answer(s) were cut at max_tokens "
            "(finish_reason 'length').",
            highlight=False,
        )
    errors = summary.get("errors") or {}
    if not errors and summary.get("complete", True):
        return
    unwritten = errors.get(ABSTRACT_ERROR, {}).get("count", 0)
    n_errors, n_tasks = summary.get("n_errors", 0), summary.get("n_tasks", 0)
    what = f"{n_errors} of {n_tasks} tasks ended on a model error"
    if unwritten:
        what += f", {unwritten} confirmed solution(s) could not be written to memory"
    console.print(
        f"[red]INCOMPLETE RUN: {what}; the numbers above are not a result. Re-run the same "
        "command to retry them (answered calls come from the cache).",
        highlight=False,
    )
    for kind, entry in errors.items():
        console.print(
            f"  {kind}: {entry['count']} task(s); first (task {entry['task']}): {entry['first']}",
            markup=False,
            highlight=False,
        )


def run_command(config_type: type[RunConfig] = RunConfig) -> click.Command:
    """``arcmemo run``: its options are the settings declared on ``config_type``'s fields
    (:mod:`arcmemo.cli.config_options`); only what is not a run setting is written here."""

    @click.command(
        "run",
        cls=RegistryHelpCommand,
        registries=(BENCHMARKS, SELECTORS, ABSTRACTORS, WRITE_SIGNALS, SANDBOXES),
    )
    @config_options(config_type)
    @click.option(
        "--force-resume",
        is_flag=True,
        cls=GroupedOption,
        group="Output",
        help="Continue the run in --out although settings that change results differ "
        "(each difference is recorded in config.json under forced_resume).",
    )
    @click.option(
        "--dry-run",
        is_flag=True,
        cls=GroupedOption,
        group="Output",
        help="Render prompts and estimate cost; call nothing.",
    )
    @progress_every_option
    def run(**options: Any) -> None:
        """Run BENCHMARK and write a run directory (re-running the same command resumes)."""
        console = Console(stderr=True)
        with user_errors():
            config = build_config(config_type, options, console)
            execute(config, options, console)

    return run


progress_every_option = click.option(
    "--progress-every",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    cls=GroupedOption,
    group="Output",
    help="When stderr is not a terminal (nohup, SLURM): seconds between plain progress lines.",
)
"""``--progress-every``, shared by the commands that show a run's live progress."""


def build_config(
    config_type: type[RunConfig], options: dict[str, Any], console: Console
) -> RunConfig:
    """The run's config from the parsed options (a setting left out keeps its default)."""

    def warn(message: str) -> None:
        console.print(f"[yellow]warning: {message}", highlight=False)

    values = config_values(config_type, options, warn=warn)
    now = datetime.now(timezone.utc)
    if values.get("out") is None:
        stamp = now.strftime("%Y%m%d-%H%M%S")
        root = Path(os.environ.get(OUT_ENV) or "runs")
        values["out"] = root / f"{stamp}-{values['benchmark']['name']}"
    try:
        return config_type(**values, created_at=now)
    except ValidationError as error:
        raise click.UsageError(validation_message(error)) from None


def write_interrupted_summary(config: ResolvedRunConfig, cause: str) -> Path:
    """The summary of a run that ``cause`` (a signal) stopped: the pipeline's, or (where the
    interrupt did not reach it as a cancellation, as on Python 3.10) one built from the run
    directory."""
    rundir = RunWriter(config.out)
    saved = rundir.read_summary()
    aborted = interrupted(cause)
    if saved is None or saved.get("aborted") != aborted:
        benchmark = BENCHMARKS.create(config.benchmark)
        try:
            summary = summarize_directory(rundir, config, benchmark)
        finally:
            benchmark.close()
        rundir.write_summary(summary.model_copy(update={"aborted": aborted, "complete": False}))
    return rundir.summary_path


def execute(config: RunConfig, options: dict[str, Any], console: Console) -> None:
    """Dry-run or run ``config`` and print what came of it."""
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
    resolved = resolve_config(config)
    for warning in run_warnings(resolved):
        console.print(f"[yellow]warning: {warning}", highlight=False)
    progress = progress_display(console, options["progress_every"])
    terminated: list[int] = []
    previous_handler = _stop_on_sigterm_as_on_ctrl_c(terminated)
    ignored_sigint = _listen_to_sigint()

    def stop_cause() -> str:
        """The signal that stopped the run: SIGTERM's handler raises SIGINT."""
        return signal.Signals(terminated[0]).name if terminated else "SIGINT (Ctrl-C)"

    try:
        summary = asyncio.run(
            run_benchmark(
                resolved,
                progress=progress,
                force_resume=options["force_resume"],
                batch_progress=batch_progress_printer(console),
                stop_cause=stop_cause,
            )
        )
    except ModelUnreachableError as error:
        raise RunIncomplete(f"{error} (partial summary: {resolved.out / 'summary.json'})") from None
    except KeyboardInterrupt:
        summary_path = write_interrupted_summary(resolved, stop_cause())
        console.print(
            f"[red]Interrupted by {stop_cause()}. Run the same command again to resume: "
            "finished tasks are kept and answered calls come from the cache (partial summary, "
            f"marked incomplete: {summary_path}).",
            highlight=False,
        )
        raise SystemExit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED) from None
    finally:
        if previous_handler is not None:
            signal.signal(signal.SIGTERM, previous_handler)
        if ignored_sigint:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    benchmark = BENCHMARKS.get(resolved.benchmark.name).cls
    print_summary(console, summary, benchmark.headline_metrics)
    console.print(f"run directory: {resolved.out}")
    # The one line on stdout: where a script finds the machine-readable numbers.
    click.echo(resolved.out / "summary.json")
    if not summary["complete"]:
        raise SystemExit(EXIT_INCOMPLETE)


# The folder new run directories go in when --out is not given (default: ./runs).
OUT_ENV = "ARCMEMO_OUT"


def validation_message(error: ValidationError) -> str:
    """A config's validation errors in one line, each naming its field."""
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) + ': ' if e['loc'] else ''}"
        f"{str(e['msg']).removeprefix('Value error, ')}"
        for e in error.errors()
    )


run = run_command()


def batch_progress_printer(console: Console) -> Callable[[BatchProgress], None]:
    """A ``--batch`` progress display: one line whenever a provider batch's status changes."""
    last: dict[str, tuple[str, int, int]] = {}

    def show(progress: BatchProgress) -> None:
        status = progress.status
        now = (status.state, status.done, status.failed)
        if last.get(progress.batch_id) == now:
            return
        last[progress.batch_id] = now
        console.print(
            f"provider batch {progress.batch_id} ({progress.model}): {status.state}, "
            f"{status.done}/{status.total} done, {status.failed} failed, "
            f"{progress.elapsed_s:.0f} s",
            markup=False,
            highlight=False,
        )

    return show


# Exit status of a run that finished with tasks in error, or was stopped because its model
# could not be reached (1 is a user error, 2 a usage error).
EXIT_INCOMPLETE = 3
# Exit status of a run stopped by Ctrl-C (the shell's 128 + SIGINT), and by SIGTERM (128 +
# SIGTERM: what `timeout`, `kill` and a batch scheduler's time limit send).
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


def _stop_on_sigterm_as_on_ctrl_c(terminated: list[int]) -> Any:
    """Make SIGTERM stop a run the way Ctrl-C does (asyncio cancels the run, the partial
    summary is written), noting it in ``terminated``; returns the handler it replaced, or
    None where no handler can be set (not the main thread)."""

    def on_sigterm(signum: int, frame: object) -> None:
        terminated.append(signum)
        signal.raise_signal(signal.SIGINT)

    try:
        return signal.signal(signal.SIGTERM, on_sigterm)
    except ValueError:  # signal handlers are only set from the main thread
        return None


def _listen_to_sigint() -> bool:
    """Stop on SIGINT even where it was inherited ignored; returns whether it was.

    A command started in the background by a non-interactive shell (a script's ``&``,
    many batch systems) starts with SIGINT ignored, and then neither SIGINT nor SIGTERM,
    whose handler raises SIGINT, would stop the run: ``timeout`` or a scheduler's time
    limit would end it by SIGKILL later, with no partial summary. asyncio's graceful
    cancel on SIGINT is only set up over Python's default handler, so that is restored
    for the run (a terminal's Ctrl-C never reaches a background job anyway)."""
    try:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            return True
    except ValueError:  # signal handlers are only set from the main thread
        pass
    return False


class RunIncomplete(click.ClickException):
    exit_code = EXIT_INCOMPLETE
