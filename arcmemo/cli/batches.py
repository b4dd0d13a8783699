"""``arcmemo batches RUN [ID]... [--cancel]``: a ``--batch`` run's provider batches."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from arcmemo.cli.console import print_table
from arcmemo.cli.errors import user_errors


@click.command("batches", short_help="List or cancel the provider batches of a run.")
@click.argument("run", type=click.Path(path_type=Path))
@click.argument("ids", nargs=-1)
@click.option(
    "--cancel",
    is_flag=True,
    help="Cancel the provider batches still running (all of the run's, or the IDs given) "
    "through the provider's cancel endpoint; their requests not yet run are not billed, and a run "
    "waiting on them fails those requests instead of paying full price for them.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per provider batch on stdout."
)
def batches(run: Path, ids: tuple[str, ...], cancel: bool, as_json: bool) -> None:
    """List the provider batches of the run directory RUN (or only IDS): id, model, state,
    request counts, when created, why it failed; with --cancel, cancel them."""
    from arcmemo.run.provider_batches import cancel_batches, list_batches

    with user_errors():
        if cancel:
            rows = asyncio.run(cancel_batches(run, list(ids)))
        else:
            rows = asyncio.run(list_batches(run, list(ids)))
    if as_json:
        for row in rows:
            click.echo(row.model_dump_json())
        return
    console = Console()
    if not rows:
        console.print(f"{run}: no provider batches recorded", highlight=False)
        return
    table = Table(box=None, pad_edge=False)
    # An id is what `arcmemo batches RUN ID` takes: its column never shrinks below it.
    widest_id = max(len(row.batch_id) for row in rows)
    for column in ("batch", "model", "state", "done", "failed", "requests", "created", "reason"):
        table.add_column(
            column,
            no_wrap=column != "reason",
            min_width=widest_id if column == "batch" else None,
        )
    for row in rows:
        state = f"{row.state} (cancel sent)" if row.canceled else row.state
        table.add_row(
            row.batch_id,
            row.model,
            state,
            "" if row.done is None else str(row.done),
            "" if row.failed is None else str(row.failed),
            str(row.requests),
            _minute(row.created or row.submitted),
            row.reason or row.note or "",
        )
    print_table(console, table)
    if cancel and not any(row.canceled for row in rows):
        console.print("nothing to cancel: every provider batch chosen has ended", highlight=False)


def _minute(stamp: str) -> str:
    """An ISO time to the minute (``2026-12-07 11:36``): the seconds and the offset make the
    table wider than a log's line for nothing."""
    return stamp[:16].replace("T", " ") if len(stamp) >= 16 and stamp[10:11] == "T" else stamp
