"""``arcmemo train BENCHMARK``: train a memory over epochs and keep the one that validates best."""

from __future__ import annotations

import asyncio
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from arcmemo.abstraction.base import ABSTRACTORS
from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.cli.config_options import GroupedOption, config_options
from arcmemo.cli.console import print_table
from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import RegistryHelpCommand
from arcmemo.cli.run import (
    EXIT_INCOMPLETE,
    _span,
    build_config,
    progress_display,
    progress_every_option,
)
from arcmemo.core.settings import settings_of
from arcmemo.run.config import RunConfig
from arcmemo.sandbox import SANDBOXES
from arcmemo.selection.base import SELECTORS
from arcmemo.signals.base import WRITE_SIGNALS
from arcmemo.train.loop import (
    EpochEstimate,
    TrainingIncomplete,
    TrainingPlan,
    estimate_training,
    run_training,
)
from arcmemo.train.record import BEST_MEMORY_NAME, EpochRecord, TrainingError, TrainingRecord

# Run settings a training decides itself: train passes write online into the epoch's
# snapshot, validation passes never write, and an online pass is never sharded.
TRAINING_DECIDES = ("update", "memory_out", "shard")
ONLY: dict[str, Any] = {
    name: None for name in settings_of(RunConfig) if name not in TRAINING_DECIDES
}


def _ids(text: str | None) -> list[str] | None:
    if text is None:
        return None
    ids = [part.strip() for part in text.split(",") if part.strip()]
    return ids or None


def score_text(value: float | None, spread: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" + ("" if spread is None else f" ± {spread:.3f}")


def curve_table(record: TrainingRecord) -> Table:
    """The learning curve: per epoch the train and validation scores and the memory size."""
    table = Table(title=f"training · {record.benchmark} · validation {record.metric}")
    for column in ("epoch", "train", f"validation {record.metric}", "concepts", "lessons",
                   "functions", "added", "calls"):  # fmt: skip
        table.add_column(column, justify="right" if column != "epoch" else "left")
    for epoch in record.epochs:
        calls = epoch.validation.calls + (epoch.train.calls if epoch.train else 0)
        mark = " (best)" if epoch.epoch == record.best_epoch else ""
        table.add_row(
            f"{epoch.epoch}{mark}",
            score_text(epoch.train.score) if epoch.train else "-",
            score_text(epoch.validation.score, epoch.validation.spread),
            str(epoch.memory_size.concepts),
            str(epoch.memory_size.lessons),
            str(epoch.memory_size.functions),
            str(len(epoch.added)),
            str(calls),
        )
    return table


def estimate_table(estimates: list[EpochEstimate]) -> Table:
    table = Table(title="dry run: every epoch (estimate, low - high)")
    for column in ("epoch", "pass", "tasks", "calls", "cost"):
        table.add_column(column)
    for item in estimates:
        passes = [("train", item.train), ("validation", item.validation)]
        for name, estimate in passes:
            if estimate is None:
                continue
            table.add_row(
                str(item.epoch),
                name,
                str(estimate.n_tasks),
                _span(estimate.calls),
                _span(estimate.cost_usd, money=True),
            )
    return table


@click.command(
    "train",
    cls=RegistryHelpCommand,
    registries=(BENCHMARKS, SELECTORS, ABSTRACTORS, WRITE_SIGNALS, SANDBOXES),
    short_help="Train a memory over epochs; keep the best on a validation split.",
)
@config_options(RunConfig, only=ONLY)
@click.option("--val-split", cls=GroupedOption, group="Data", help="The validation split.")
@click.option(
    "--val-tasks", cls=GroupedOption, group="Data", help="Comma-separated validation task ids."
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    required=True,
    cls=GroupedOption,
    group="Memory",
    help="Train passes (epoch 0, the starting memory's validation, comes on top).",
)
@click.option(
    "--patience",
    type=click.IntRange(min=1),
    default=None,
    cls=GroupedOption,
    group="Memory",
    help="Stop after this many epochs without a better validation score (default: never).",
)
@click.option(
    "--revisit",
    type=click.Choice(["unsolved", "all"]),
    default="unsolved",
    show_default=True,
    cls=GroupedOption,
    group="Memory",
    help="Which train tasks a later epoch re-attempts: unsolved (those whose solution no "
    "earlier epoch wrote to memory; a written task would pay for the same answer and write "
    "its concepts twice) or all.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    cls=GroupedOption,
    group="Output",
    help="Estimate every epoch; call nothing.",
)
@progress_every_option
def train(**options: Any) -> None:
    """Train a memory on BENCHMARK's train tasks over epochs, validating after each, and
    keep the memory that validated best (DIR/best-memory.json; DIR/training.json records
    every epoch). Re-running the same command resumes."""
    console = Console(stderr=True)
    plan = TrainingPlan(
        val_split=options.pop("val_split"),
        val_tasks=_ids(options.pop("val_tasks")),
        epochs=options.pop("epochs"),
        patience=options.pop("patience"),
        revisit=options.pop("revisit"),
    )
    if plan.val_split is None and plan.val_tasks is None:
        raise click.UsageError("give the validation tasks: --val-split and/or --val-tasks")
    with user_errors():
        try:
            config = build_config(RunConfig, options, console)
            if options["dry_run"]:
                estimates = asyncio.run(estimate_training(config, plan))
                print_table(console, estimate_table(estimates))
                console.print(
                    "  assumed: every train pass over all train tasks with the starting memory "
                    "(later epochs revisit fewer tasks, with a larger memory)",
                    highlight=False,
                )
                return
            record = asyncio.run(
                run_training(
                    config,
                    plan,
                    progress=lambda: progress_display(console, options["progress_every"]),
                    on_pass=lambda name, _: console.print(f"{name} ...", highlight=False),
                    on_epoch=lambda entry, _: console.print(_epoch_line(entry), highlight=False),
                )
            )
        except TrainingIncomplete as error:
            console.print(f"[red]{error}", highlight=False)
            raise SystemExit(EXIT_INCOMPLETE) from None
        except TrainingError as error:
            raise click.ClickException(str(error)) from None
    print_table(console, curve_table(record))
    if record.stopped:
        console.print(f"stopped: {record.stopped}", highlight=False)
    console.print(
        f"best epoch: {record.best_epoch}; its memory: {config.out / BEST_MEMORY_NAME}",
        highlight=False,
    )
    click.echo(config.out / "training.json")


def _epoch_line(entry: EpochRecord) -> str:
    val = entry.validation
    train = f"train {score_text(entry.train.score)}, " if entry.train else ""
    return (
        f"epoch {entry.epoch}: {train}validation {val.metric} "
        f"{score_text(val.score, val.spread)}, {entry.memory_size.concepts} concepts "
        f"(+{len(entry.added)})"
    )
