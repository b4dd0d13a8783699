"""``arcmemo models`` lists providers and prices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli


def test_lists_providers_and_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARCMEMO_PRICES", raising=False)
    result = CliRunner().invoke(cli, ["models", "--json"])
    assert result.exit_code == 0, result.output
    listing = json.loads(result.output)
    rows = {row["provider"]: row for row in listing["providers"]}
    assert {"openai", "anthropic", "scripted", "jetspec"} <= set(rows)
    assert rows["scripted"]["available"] and rows["openai"]["available"]
    api_key_env = rows["openai"]["options"]["api_key_env"]
    assert api_key_env["default"] == "OPENAI_API_KEY" and api_key_env["description"]
    assert "draft" in rows["jetspec"]["options"] and rows["scripted"]["options"] == {}
    assert listing["prices"]["openai:o4-mini"]["output"] == 4.4
    table = CliRunner().invoke(cli, ["models"])
    assert table.exit_code == 0 and "scripted" in table.output and "Prices" in table.output
    assert "Provider options" in table.output and "api_key_env" in table.output


def test_price_override_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    override = tmp_path / "prices.json"
    override.write_text(json.dumps({"models": {"openai:o4-mini": {"input": 9, "output": None}}}))
    monkeypatch.setenv("ARCMEMO_PRICES", str(override))
    listing = json.loads(CliRunner().invoke(cli, ["models", "--json"]).output)
    assert listing["prices"]["openai:o4-mini"] == {
        "input": 9.0,
        "cached_input": None,
        "cache_write": None,
        "output": None,
    }
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    result = CliRunner().invoke(cli, ["models", "--prices", str(broken)])
    assert result.exit_code != 0 and "broken.json" in result.output


def test_the_table_prints_brackets_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    # rich reads "[kernel]" as markup unless escaped, and the install hint lost it.
    from arcmemo.cli import models as models_cli

    rows = [
        {
            "provider": "jetspec",
            "summary": "local [GPU] decoding",
            "sdk": "jetspec",
            "available": False,
            "install": "pip install -e './JetSpec[kernel]'",
            "options": {"stop": {"default": ["[END]"], "description": "stops at list[str]"}},
        }
    ]
    monkeypatch.setattr(models_cli, "provider_rows", lambda: rows)
    monkeypatch.setenv("COLUMNS", "400")
    table = CliRunner().invoke(cli, ["models"])
    assert table.exit_code == 0, table.output
    for written in ("local [GPU] decoding", "./JetSpec[kernel]", "['[END]']", "list[str]"):
        assert written in table.output
