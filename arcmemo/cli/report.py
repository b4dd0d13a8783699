"""``arcmemo report``: one self-contained HTML page per run (grids, programs, plots)."""

from __future__ import annotations

from pathlib import Path

import click

_RUN_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.command("report")
@click.argument("run_dir", type=_RUN_DIR)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="HTML file to write (default: RUN_DIR/report.html).",
)
@click.option(
    "--compare",
    "compare",
    type=_RUN_DIR,
    multiple=True,
    help="Another run directory to show side by side, with per-task wins and losses (repeatable).",
)
@click.option(
    "--data",
    default=None,
    help="Reload the run's tasks from this file or folder (when the run's --data moved).",
)
def report(run_dir: Path, out: Path | None, compare: tuple[Path, ...], data: str | None) -> None:
    """Write an HTML report of RUN_DIR: summary, plots, tasks, attempts and memory."""
    from arcmemo.analysis.report import ReportError, write_report
    from arcmemo.memory.store import MemoryFileError
    from arcmemo.train.record import is_training_dir

    if is_training_dir(run_dir):  # a training: its learning curve (arcmemo train)
        from arcmemo.analysis.report.training import write_training_report

        click.echo(f"wrote {write_training_report(run_dir, out)}")
        return
    try:
        target = write_report(run_dir, out, compare=list(compare), data=data)
    except (ReportError, MemoryFileError) as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        raise click.ClickException(f"cannot write the report: {error}") from None
    click.echo(f"wrote {target}")
