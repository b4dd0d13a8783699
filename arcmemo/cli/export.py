"""``arcmemo export``: a run's predictions in other tools' formats."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from arcmemo.cli.errors import user_errors


@click.group("export")
def export() -> None:
    """Write a finished run's predictions in another format."""


@export.command("submission")
@click.argument("run", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where to write (default: RUN/submission.json).",
)
def submission(run: Path, out: Path | None) -> None:
    """RUN's predictions as an ARC Prize / Kaggle submission.json (attempt_1, attempt_2 per
    test input; train-verified attempts first when a task has more than two)."""
    from arcmemo.benchmarks.arc.export import export_submission

    with user_errors():
        target = out or run / "submission.json"
        count = export_submission(run, target)
    Console(stderr=True).print(f"{count} tasks written to {target}", highlight=False)
