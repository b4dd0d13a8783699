"""Create providers from ``provider:model`` specs, importing provider modules lazily.

A provider module (and the SDK it imports) is loaded only when a spec names it, so a
missing optional SDK costs nothing until that provider is used, and then gives an
install hint instead of an import error at start-up.
"""

from __future__ import annotations

import importlib
from typing import Any

from arcmemo.models.base import Provider, registered_providers

# provider name -> module that registers it (via @register_provider) when imported
PROVIDER_MODULES: dict[str, str] = {
    "openai": "arcmemo.models.openai_provider",
    "anthropic": "arcmemo.models.anthropic_provider",
    "scripted": "arcmemo.models.scripted",
    "jetspec": "arcmemo.models.jetspec",
}

# provider name -> (importable package it needs, how to install it)
SDK_REQUIREMENTS: dict[str, tuple[str, str]] = {
    "openai": ("openai", "pip install 'openai>=1.40'"),
    "anthropic": ("anthropic", "pip install 'anthropic>=0.34'"),
    "jetspec": (
        "jetspec",
        "JetSpec is installed from source (with torch); see the README section "
        "'Local generation with JetSpec'",
    ),
}

_SPEC_EXAMPLES = "openai:o4-mini, anthropic:claude-sonnet-4-5, scripted:answers.yaml"


class ProviderUnavailableError(RuntimeError):
    """A provider exists but its module or SDK cannot be imported here."""


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``provider:model`` at the first colon; the model part may hold ``:`` and ``/``."""
    provider, separator, model = spec.partition(":")
    if not separator or not provider or not model:
        raise ValueError(
            f"model spec {spec!r} is not of the form provider:model (e.g. {_SPEC_EXAMPLES})"
        )
    return provider.strip().lower(), model


def known_providers() -> list[str]:
    """Every provider name a spec may use (registered or lazily loadable)."""
    return sorted(set(PROVIDER_MODULES) | set(registered_providers()))


def load_provider_module(name: str) -> None:
    """Import the module that registers provider ``name``; explain what to install if absent."""
    if name in registered_providers():
        return
    module_name = PROVIDER_MODULES.get(name)
    if module_name is None:
        raise ValueError(f"unknown model provider {name!r}; known providers: {known_providers()}")
    try:
        importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        sdk, hint = SDK_REQUIREMENTS.get(name, (None, None))
        missing = error.name or ""
        if missing == module_name:
            raise ProviderUnavailableError(
                f"provider {name!r} is not available in this installation "
                f"(module {module_name} is missing)"
            ) from error
        if sdk is not None and (missing == sdk or missing.startswith(f"{sdk}.")):
            raise ProviderUnavailableError(
                f"provider {name!r} needs the {sdk!r} package, which is not installed: {hint}"
            ) from error
        raise
    if name not in registered_providers():
        raise ProviderUnavailableError(f"module {module_name} did not register provider {name!r}")


def provider_status(name: str) -> tuple[bool, str]:
    """Whether provider ``name`` can be created here, and why not when it cannot."""
    try:
        load_provider_module(name)
    except (ProviderUnavailableError, ValueError, ImportError) as error:
        return False, str(error)
    return True, "ok"


def create_provider(spec: str, *, base_url: str | None = None, **options: Any) -> Provider:
    """Build the provider named by ``spec`` (``provider:model``).

    ``base_url`` is passed on only when given (providers fall back to their environment
    variable); ``options`` go to the provider's constructor unchanged.
    """
    name, model = parse_spec(spec)
    load_provider_module(name)
    factory = registered_providers()[name]
    if base_url is not None:
        options["base_url"] = base_url
    return factory(model, **options)
