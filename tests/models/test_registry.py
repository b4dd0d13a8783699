"""Provider specs and lazy provider loading."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arcmemo.models.registry import (
    ProviderUnavailableError,
    create_provider,
    load_provider_module,
    parse_spec,
)


def test_parse_spec_keeps_colons_and_slashes_in_the_model() -> None:
    assert parse_spec("openai:o4-mini") == ("openai", "o4-mini")
    assert parse_spec("jetspec:/models/qwen:latest") == ("jetspec", "/models/qwen:latest")
    for bad in ("o4-mini", "openai:", ":model"):
        with pytest.raises(ValueError, match="provider:model"):
            parse_spec(bad)


def test_unknown_provider_lists_known_ones() -> None:
    with pytest.raises(ValueError, match="known providers"):
        create_provider("nosuch:model")


def test_importing_the_package_does_not_import_sdks() -> None:
    code = "import sys, arcmemo.models; print('openai' in sys.modules, 'anthropic' in sys.modules)"
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.split() == ["False", "False"]


def test_missing_sdk_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes `import openai` raise ModuleNotFoundError.
    monkeypatch.setitem(sys.modules, "openai", None)
    monkeypatch.delitem(sys.modules, "arcmemo.models.openai_provider", raising=False)
    from arcmemo.models import base

    monkeypatch.setattr(
        base, "_REGISTRY", {k: v for k, v in base._REGISTRY.items() if k != "openai"}
    )
    with pytest.raises(ProviderUnavailableError, match="pip install"):
        load_provider_module("openai")


def test_unwritten_provider_module_is_reported_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    from arcmemo.models import registry

    monkeypatch.setitem(registry.PROVIDER_MODULES, "ghost", "arcmemo.models.ghost_provider")
    with pytest.raises(ProviderUnavailableError, match="not available"):
        load_provider_module("ghost")
