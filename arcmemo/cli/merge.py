"""``arcmemo merge RUN... --out OUT``: join the run directories of ``--shard I/N`` runs."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from arcmemo.cli.errors import user_errors


@click.command("merge", short_help="Join the shards of a run into one run directory.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="The new run directory to write (the old form `merge OUT RUN...` still works).",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Merge although shards are missing or unfinished (the summary says complete: "
    "false and lists why under partial_merge).",
)
def merge(runs: tuple[Path, ...], out: Path | None, allow_partial: bool) -> None:
    """Merge the shard run directories RUN... into the new run directory --out, whose
    summary is that of one unsharded run."""
    console = Console(stderr=True)
    if out is None:
        if len(runs) < 2:
            raise click.UsageError(
                "give the shard directories and --out DIR: merge RUN... --out DIR"
            )
        out, runs = runs[0], runs[1:]
        console.print(
            f"[yellow]warning: `arcmemo merge OUT RUN...` is the old form; write "
            f"`arcmemo merge RUN... --out {out}`",
            highlight=False,
        )
    for run in runs:
        if not run.is_dir():
            raise click.BadParameter(f"{run} is not a run directory", param_hint="RUNS")
    from arcmemo.analysis.shards import merge_runs

    with user_errors():
        summary = merge_runs(out, list(runs), allow_partial=allow_partial)
    console.print(
        f"merged {len(runs)} shard(s) into {out}: {summary['n_tasks']} tasks, "
        f"{summary['n_solved']} solved, complete: {str(summary['complete']).lower()}",
        highlight=False,
    )
    for problem in summary.get("partial_merge", []):
        console.print(f"[yellow]partial: {problem}", highlight=False)
