"""``arcmemo table RUN [RUN...]``: runs side by side in the layout of the paper's tables."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import click

from arcmemo.benchmarks.outputs import CONVENTIONS, Convention
from arcmemo.cli.benchmark_help import BenchmarkHelpOption, convention_help, strict_help
from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import RetiringChoice
from arcmemo.core.spellings import SCORING_CONVENTIONS
from arcmemo.sandbox.text import visible_text

_RUN_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.command("table", short_help="Lay out runs side by side in their benchmark's table.")
@click.argument("runs", nargs=-1, required=True, type=_RUN_DIR)
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="Row label of each RUN, in order (repeatable; default: the folder name).",
)
@click.option("--strict", is_flag=True, cls=BenchmarkHelpOption, help_from=lambda: strict_help())
@click.option(
    "--convention",
    type=RetiringChoice(CONVENTIONS, SCORING_CONVENTIONS),
    default=CONVENTIONS[0],
    show_default=True,
    cls=BenchmarkHelpOption,
    help_from=lambda: convention_help(),
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "csv", "latex"]),
    default="md",
    show_default=True,
    help="md and latex carry their notes; csv is data only, its notes go to stderr.",
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="File to write.")
@click.option(
    "--compare",
    nargs=2,
    type=_RUN_DIR,
    default=None,
    help="A B: paired comparison of run A against run B, runs of the same number of attempts "
    "(per-task differences, bootstrap CI, sign and McNemar tests), printed under the table.",
)
@click.option("--paired", is_flag=True, help="Paired comparison of the first two RUNs.")
@click.option(
    "--over-orders",
    is_flag=True,
    help="RUNs are one setting over several task orders (--order-seed, --replicate): per "
    "metric the mean over orders with their std, then each order's value. Runs that differ "
    "in anything else are refused, naming the field.",
)
def table(
    runs: tuple[Path, ...],
    labels: tuple[str, ...],
    strict: bool,
    convention: Convention,
    fmt: str,
    out: Path | None,
    compare: tuple[Path, Path] | None,
    paired: bool,
    over_orders: bool,
) -> None:
    """Lay out RUNs side by side in their benchmark's table (for ARC and AIME, the paper's),
    with notes saying what each column is."""
    from arcmemo.analysis import tables
    from arcmemo.train.record import is_training_dir

    if len(runs) == 1 and is_training_dir(runs[0]) and not (paired or compare or labels):
        # A training: its epochs' validation runs side by side, best epoch against epoch 0.
        runs, labels, compare = tables.training_runs(runs[0])
    if len(labels) > len(runs):
        raise click.UsageError(f"{len(labels)} --label for {len(runs)} runs")
    if paired and compare:
        raise click.UsageError("give --paired or --compare A B, not both")
    if over_orders and (paired or compare):
        raise click.UsageError("--over-orders lays out one setting; it has no paired comparison")
    if paired and len(runs) != 2:
        raise click.UsageError(f"--paired compares two runs; {len(runs)} were given")
    with user_errors():
        try:
            loaded = [
                tables.load_run(path, labels[i] if i < len(labels) else None, convention)
                for i, path in enumerate(runs)
            ]
            by_path = {path.resolve(): run for path, run in zip(runs, loaded, strict=True)}
            pair = (runs[0], runs[1]) if paired else compare
            comparison = None
            if pair is not None:
                first, second = (
                    by_path.get(p.resolve()) or tables.load_run(p, convention=convention)
                    for p in pair
                )
                tables.check_comparable([*loaded, first, second])
                comparison = tables.paired(first, second, strict=strict, convention=convention)
            if over_orders:
                laid_out = tables.orders_table(loaded, strict=strict, convention=convention)
            else:
                laid_out = tables.build_table(loaded, strict=strict, convention=convention)
            form = cast(tables.Format, fmt)
            text = tables.render(laid_out, form, comparison=comparison)
            notes = tables.footnotes(laid_out, form, comparison=comparison)
        except tables.TableError as error:
            raise click.ClickException(str(error)) from None
    for note in notes:
        # CSV holds data only; its notes go to stderr, apart from the file or the pipe.
        click.echo(f"# {visible_text(note)}", err=True)
    if out is None:
        # Run labels and task ids come from run folders that someone else may have written.
        click.echo(visible_text(text), nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as error:
        raise click.ClickException(f"cannot write {out}: {error}") from None
    click.echo(f"wrote {out}", err=True)
