"""Provider specs, the provider registry and lazy provider loading."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arcmemo.core.registry import ComponentUnavailableError, RegistryError
from arcmemo.models.registry import PROVIDERS, create_provider, parse_spec


def test_parse_spec_keeps_colons_and_slashes_in_the_model() -> None:
    assert parse_spec("openai:o4-mini") == ("openai", "o4-mini")
    assert parse_spec("jetspec:/models/qwen:latest") == ("jetspec", "/models/qwen:latest")
    for bad in ("o4-mini", "openai:", ":model"):
        with pytest.raises(ValueError, match="provider:model"):
            parse_spec(bad)


def test_unknown_provider_lists_known_ones() -> None:
    with pytest.raises(RegistryError, match="unknown model provider 'nosuch'; known: anthropic"):
        create_provider("nosuch:model")


def test_every_builtin_provider_declares_described_options() -> None:
    assert {"openai", "anthropic", "scripted", "jetspec"} <= set(PROVIDERS.names())
    for entry in PROVIDERS.entries():
        for field, info in entry.options.model_fields.items():
            assert info.description, f"{entry.name}.{field} has no description"


@pytest.mark.parametrize(
    ("spec", "args", "expected"),
    [
        ("openai:m", {"reasoning_modle": "true"}, "reasoning_modle: Extra inputs"),
        ("openai:m", {"timeout_s": "soon"}, "timeout_s: Input should be a valid number"),
        ("anthropic:m", {"prompt_cache": "maybe"}, "prompt_cache: Input should be a valid bool"),
        ("scripted:answers.json", {"temperature": "0"}, "temperature: Extra inputs"),
        ("jetspec:/m", {"bugdet": "5"}, "bugdet: Extra inputs"),
    ],
)
def test_bad_model_args_are_one_line_errors_naming_the_accepted_ones(
    spec: str, args: dict[str, str], expected: str
) -> None:
    with pytest.raises(RegistryError) as caught:
        create_provider(spec, **args)
    message = str(caught.value)
    name = spec.partition(":")[0]
    assert message.startswith(f"model provider {name!r}: ") and expected in message
    assert "\n" not in message and "its options: " in message


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
    monkeypatch.delitem(PROVIDERS._entries, "openai", raising=False)
    with pytest.raises(ComponentUnavailableError, match="pip install 'openai"):
        create_provider("openai:gpt-4o")
