"""``arcmemo models``: the model providers this installation can use, and the price table."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from arcmemo.models.prices import PRICES_ENV, PriceTable
from arcmemo.models.registry import PROVIDER_MODULES, SDK_REQUIREMENTS, known_providers


def _importable(module: str) -> bool:
    # find_spec checks availability without importing (the SDKs are slow to import).
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def provider_rows() -> list[dict[str, str | bool | None]]:
    """One row per provider: module, SDK, whether both can be imported, install hint."""
    rows = []
    for name in known_providers():
        module = PROVIDER_MODULES.get(name)
        sdk, hint = SDK_REQUIREMENTS.get(name, (None, None))
        available = (module is None or _importable(module)) and (sdk is None or _importable(sdk))
        rows.append(
            {
                "provider": name,
                "module": module,
                "sdk": sdk,
                "available": available,
                "install": None if available else hint or f"module {module} is missing",
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
    """List model providers (and whether their SDK is installed) and token prices.

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
        click.echo(json.dumps({"providers": rows, "prices": prices}, indent=2))
        return
    console = Console()
    providers = Table(title="Providers")
    for column in ("provider", "module", "SDK", "available"):
        providers.add_column(column)
    for row in rows:
        status = "yes" if row["available"] else f"no: {row['install']}"
        providers.add_row(str(row["provider"]), str(row["module"]), str(row["sdk"] or "-"), status)
    console.print(providers)
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
    console.print(prices_table)
