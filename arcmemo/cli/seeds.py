"""``arcmemo seeds``: hand-written seed solutions as verified ``transform`` programs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import sandbox_options, sandbox_spec
from arcmemo.sandbox.text import clean_text

REPORT_NAME = "import-report.json"


@click.group()
def seeds() -> None:
    """Import hand-written seed solutions (BARC) for `arcmemo abstract --from-programs`."""


@seeds.command("import-barc")
@click.argument("barc_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the <task id>.py programs (and the import report).",
)
@click.option(
    "--no-verify",
    is_flag=True,
    help="Write every converted program without running it on its train pairs.",
)
@sandbox_options
def import_barc_command(barc_dir: Path, out: Path, no_verify: bool, **options: Any) -> None:
    """Convert the seeds of a BARC checkout (BARC_DIR or BARC_DIR/seeds) into programs.

    Each seed gets BARC's helper library inlined (only what it uses), `main` renamed and
    wrapped as `transform` for ARC's rows-first grids, its `# concepts:` labels removed; it
    is written only if it passes its task's train pairs in the sandbox. Every file not used
    is listed with the reason (also in OUT/import-report.json).
    """
    from arcmemo.benchmarks.arc.barc import (
        LIBRARY_FILE,
        BarcSeedError,
        import_barc,
        verify_with_benchmark,
    )
    from arcmemo.benchmarks.base import BENCHMARKS, SharedSandbox
    from arcmemo.core.files import atomic_write_text

    with user_errors():
        benchmark = (
            None
            if no_verify
            else BENCHMARKS.create("arc-agi-1", sandbox=SharedSandbox(sandbox_spec(options)))
        )
        try:
            verify = verify_with_benchmark(benchmark) if benchmark is not None else None
            report = import_barc(barc_dir, out, verify=verify)
        except BarcSeedError as error:
            raise click.ClickException(str(error)) from None
        finally:
            if benchmark is not None:
                benchmark.close()
        atomic_write_text(out / REPORT_NAME, report.model_dump_json(indent=2) + "\n")
    checked = "each passes its task's train pairs" if report.verified else "not run"
    click.echo(f"imported {len(report.imported)} seed programs into {out} ({checked})")
    for item in report.not_used:
        click.echo(clean_text(f"not used: {item.file}: {item.reason}"))
    for left in report.library_left_out:
        place = f"{LIBRARY_FILE} line {left.line} ({left.statement!r})"
        click.echo(clean_text(f"not inlined: {place}: {left.reason}"))
    click.echo(f"report: {out / REPORT_NAME}")
