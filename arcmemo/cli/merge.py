"""``arcmemo merge OUT RUN...``: join the run directories of ``--shard I/N`` runs."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from arcmemo.cli.errors import user_errors


@click.command("merge")
@click.argument("out", type=click.Path(path_type=Path))
@click.argument(
    "runs", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True, file_okay=False)
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Merge although shards are missing or unfinished (the summary says complete: "
    "false and lists why under partial_merge).",
)
def merge(out: Path, runs: tuple[Path, ...], allow_partial: bool) -> None:
    """Merge the shard run directories RUN... into the new run directory OUT, whose summary
    is that of one unsharded run."""
    from arcmemo.shards import merge_runs

    console = Console(stderr=True)
    with user_errors():
        summary = merge_runs(out, list(runs), allow_partial=allow_partial)
    console.print(
        f"merged {len(runs)} shard(s) into {out}: {summary['n_tasks']} tasks, "
        f"{summary['n_solved']} solved, complete: {str(summary['complete']).lower()}",
        highlight=False,
    )
    for problem in summary.get("partial_merge", []):
        console.print(f"[yellow]partial: {problem}", highlight=False)
