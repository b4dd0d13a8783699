"""Token prices: cost arithmetic, unknowns as null, user overrides."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arcmemo.core.tokens import Usage
from arcmemo.models import PriceTable
from arcmemo.models.prices import ModelPrice, PriceTableError


def test_cost_splits_uncached_cached_written_and_output_tokens() -> None:
    price = ModelPrice(input=3.0, cached_input=0.3, cache_write=3.75, output=15.0)
    usage = Usage(
        prompt_tokens=1_000_000,
        cached_tokens=500_000,
        cache_write_tokens=250_000,
        completion_tokens=100_000,
    )
    assert price.cost_usd(usage) == pytest.approx(0.75 + 0.15 + 0.9375 + 1.5)


def test_unknown_prices_are_null_never_guessed() -> None:
    table = PriceTable.load()
    assert table.cost_usd("openai:some-future-model", Usage(prompt_tokens=10)) is None
    no_cache_price = ModelPrice(input=1.0, output=1.0)
    assert no_cache_price.cost_usd(Usage(prompt_tokens=10, completion_tokens=1)) is not None
    assert no_cache_price.cost_usd(Usage(prompt_tokens=10, cached_tokens=5)) is None
    assert table.cost_usd("scripted:/any/file.yaml", Usage(prompt_tokens=10)) == 0.0


def test_override_file_extends_and_replaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    override = tmp_path / "p.json"
    override.write_text(json.dumps({"models": {"openai:gpt-4o": {"input": 1, "output": 1}}}))
    monkeypatch.setenv("ARCMEMO_PRICES", str(override))
    table = PriceTable.load()
    assert table.price_for("openai:gpt-4o") == ModelPrice(input=1, output=1)
    assert table.price_for("openai:o4-mini") is not None
    with pytest.raises(FileNotFoundError, match=r"missing\.json"):
        PriceTable.load(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{bad", "is not valid JSON (line 1 column 2"),
        ('{"models": {"openai:x": {"input": "a"}}}', "at models.openai:x.input: Input should be"),
    ],
)
def test_a_malformed_price_file_is_a_one_line_user_error(
    tmp_path: Path, text: str, expected: str
) -> None:
    from click.testing import CliRunner

    from arcmemo.cli.main import cli

    prices = tmp_path / "prices.json"
    prices.write_text(text)
    with pytest.raises(PriceTableError, match=re.escape(expected)):
        PriceTable.load(prices)
    result = CliRunner().invoke(
        cli,
        ["run", "arc-agi-1", "--split", "val100", "--model", "openai:o4-mini", "--dry-run",
         "--out", str(tmp_path / "dry")],
        env={"ARCMEMO_PRICES": str(prices)},
    )  # fmt: skip
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: price table {prices}")
    assert expected in lines[0]


def test_the_documented_anthropic_examples_are_current_priced_models() -> None:
    """Every Anthropic command of the README and the docs names a model the installed SDK
    lists, neither deprecated nor warned about with extended thinking, and the price table
    prices it."""
    import typing

    from anthropic._data import DEPRECATED_MODELS, MODELS_TO_WARN_WITH_THINKING_ENABLED
    from anthropic.types.model import Model

    root = Path(__file__).resolve().parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    named = set(re.findall(r"--model anthropic:([\w.-]+)", text))
    assert named, "neither the README nor the docs have an Anthropic example"
    known = {name for arg in typing.get_args(Model) for name in typing.get_args(arg)}
    table = PriceTable.load()
    for model in named:
        assert model in known and model not in DEPRECATED_MODELS, model
        assert model not in MODELS_TO_WARN_WITH_THINKING_ENABLED, model
        price = table.price_for(f"anthropic:{model}")
        assert price is not None and price.input and price.output, model
