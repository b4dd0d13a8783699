"""``arcmemo models``: the model providers this installation can use, and the price table."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from arcmemo.cli.console import print_table
from arcmemo.core.registry import ComponentUnavailableError
from arcmemo.models.prices import PRICES_ENV, PriceTable
from arcmemo.models.registry import INSTALL_HINTS, PROVIDERS


def _importable(module: str) -> bool:
    # find_spec checks availability without importing (torch and jetspec are slow to import).
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def provider_rows() -> list[dict[str, Any]]:
    """One row per registered provider: summary, SDK, availability, install hint, options."""
    rows = []
    for name in PROVIDERS.names():
        sdk, hint = INSTALL_HINTS.get(name, (None, None))
        try:
            entry = PROVIDERS.get(name)
        except ComponentUnavailableError as error:
            summary, options, available, hint = "", {}, False, str(error)
        else:
            summary = entry.summary
            options = {
                field: {"default": info.default, "description": info.description}
                for field, info in entry.options.model_fields.items()
            }
            available = sdk is None or _importable(sdk)
        rows.append(
            {
                "provider": name,
                "summary": summary,
                "sdk": sdk,
                "available": available,
                "install": None if available else hint,
                "options": options,
            }
        )
    return rows


def _money(value: float | None) -> str:
    return "null" if value is None else f"{value:g}"


@click.command()
@click.option(
    "--prices",
    "prices_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help=f"Price override file (JSON, same shape as the packaged table); default ${PRICES_ENV}.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def models(prices_path: Path | None, as_json: bool) -> None:
    """List model providers (whether their SDK is installed, their options) and token prices.

    Models are named PROVIDER:MODEL, e.g. openai:o4-mini, anthropic:claude-haiku-4-5,
    scripted:answers.yaml. Prices are USD per million tokens; null means unknown, and
    costs that need an unknown price are reported as null.
    """
    try:
        table = PriceTable.load(prices_path)
    except (FileNotFoundError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    rows = provider_rows()
    if as_json:
        prices = {spec: price.model_dump() for spec, price in sorted(table.prices.items())}
        click.echo(json.dumps({"providers": rows, "prices": prices}, indent=2, default=str))
        return
    console = Console()
    providers = Table(title="Providers")
    for column in ("provider", "summary", "SDK", "available"):
        providers.add_column(column)
    for row in rows:
        status = "yes" if row["available"] else f"no: {row['install']}"
        # Install hints and option texts hold brackets ("JetSpec[kernel]", "list[str]")
        # that rich would take for markup and drop.
        providers.add_row(
            row["provider"], escape(row["summary"]), row["sdk"] or "-", escape(status)
        )
    print_table(console, providers)
    options = Table(title="Provider options (--model-arg key=value)")
    for column in ("provider", "option", "default", "description"):
        options.add_column(column)
    for row in rows:
        for field, info in row["options"].items():
            options.add_row(
                row["provider"], field, escape(repr(info["default"])), escape(info["description"])
            )
    print_table(console, options)
    prices_table = Table(title="Prices (USD per 1M tokens)")
    for column in ("model", "input", "cached input", "cache write", "output"):
        prices_table.add_column(column, justify="left" if column == "model" else "right")
    for spec, price in sorted(table.prices.items()):
        prices_table.add_row(
            spec,
            _money(price.input),
            _money(price.cached_input),
            _money(price.cache_write),
            _money(price.output),
        )
    print_table(console, prices_table)
