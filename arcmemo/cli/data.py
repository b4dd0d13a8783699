"""``arcmemo data fetch``: download a benchmark's data that the package does not ship."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("data")
def data() -> None:
    """Benchmark data the package does not ship (AIME problems)."""


@data.command("fetch")
@click.argument("benchmark", type=click.Choice(["aime"]))
@click.option(
    "--split",
    "splits",
    multiple=True,
    required=True,
    help="A year to fetch (repeatable), e.g. --split 2024 --split 2025.",
)
@click.option(
    "--source",
    default=None,
    metavar="REPO[@REVISION]",
    help="A Hugging Face dataset of Parquet files (default: each year's, docs/getting-started.md).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder to write aime_YEAR.jsonl in (default: the user data folder, which "
    "`arcmemo run aime --split YEAR` reads when ARCMEMO_DATA_DIR is unset).",
)
def fetch(benchmark: str, splits: tuple[str, ...], source: str | None, out: Path | None) -> None:
    """Download BENCHMARK's problems, convert them to JSON Lines and record their origin."""
    from arcmemo.benchmarks.aime.data import AimeDataError
    from arcmemo.benchmarks.aime.fetch import fetch_aime

    for split in splits:
        try:
            record = fetch_aime(split, source, out)
        except AimeDataError as error:
            raise click.ClickException(str(error)) from None
        folder = out or _default_folder()
        click.echo(
            f"{benchmark} {split}: {record.problems} problems from {record.repo}@{record.revision} "
            f"-> {folder / record.written} (sha256 {record.sha256[:16]}...)"
        )


def _default_folder() -> Path:
    from arcmemo.benchmarks.aime.data import user_aime_dir

    return user_aime_dir()
