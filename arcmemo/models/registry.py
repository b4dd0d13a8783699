"""The provider registry, and providers created from ``provider:model`` specs.

Providers are components of the generic :class:`~arcmemo.core.registry.Registry`: each
registers under a name with a pydantic options model (its ``--model-arg key=value``
options, which arrive as strings and are coerced by pydantic). A built-in provider's module
(and the SDK it imports) is loaded only when a spec names it, so a missing optional SDK
costs nothing until that provider is used, and then gives an install hint instead of an
import error at start-up.
"""

from __future__ import annotations

from typing import Any

from arcmemo.core.registry import ComponentSpec, Registry, RegistryError
from arcmemo.models.base import Provider
from arcmemo.models.context import split_context_window

JETSPEC_INSTALL_HINT = (
    "JetSpec is not on PyPI; install it from source next to arcmemo: "
    "git clone https://github.com/hao-ai-lab/JetSpec && "
    "pip install -e './JetSpec[kernel]' 'transformers==4.57.6' 'tokenizers==0.22.2' "
    "'huggingface_hub==0.36.2' (needs torch; transformers must stay < 5). "
    "See the README section 'Local generation with JetSpec'."
)

# provider name -> (importable package it needs, how to install it)
INSTALL_HINTS: dict[str, tuple[str, str]] = {
    "openai": ("openai", "pip install 'openai>=1.40'"),
    "anthropic": ("anthropic", "pip install 'anthropic>=0.34'"),
    "jetspec": ("jetspec", JETSPEC_INSTALL_HINT),
}

PROVIDERS: Registry[Provider] = Registry(
    "model provider",
    modules={
        "openai": "arcmemo.models.openai_provider",
        "anthropic": "arcmemo.models.anthropic_provider",
        "scripted": "arcmemo.models.scripted",
        "jetspec": "arcmemo.models.jetspec.provider",
        "local": "arcmemo.models.local_server",
    },
    install_hints=INSTALL_HINTS,
)

register_provider = PROVIDERS.register
"""Decorator: make a provider available as ``NAME:MODEL``.

``register_provider(name, options=OptionsModel)`` on a class or factory called as
``factory(options, model=MODEL)`` with the validated options.
"""

_SPEC_EXAMPLES = "openai:o4-mini, anthropic:claude-haiku-4-5, scripted:answers.yaml"


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``provider:model`` at the first colon; the model part may hold ``:`` and ``/``.

    ``provider/model`` (the form LiteLLM and other tools use) is accepted when the part
    before the first slash is a known provider (``openai/gpt-4o``); ``openai:Qwen/Qwen3-8B``
    keeps its slash in the model name.
    """
    provider, separator, model = spec.partition(":")
    if not separator:
        head, slash, tail = spec.partition("/")
        if slash and head.strip().lower() in PROVIDERS.names():
            provider, separator, model = head, ":", tail
    if not separator or not provider or not model:
        raise RegistryError(
            f"model spec {spec!r} is not of the form provider:model (e.g. {_SPEC_EXAMPLES})"
        )
    return provider.strip().lower(), model


def create_provider(spec: str, *, base_url: str | None = None, **model_args: Any) -> Provider:
    """Build the provider named by ``spec`` (``provider:model``).

    ``model_args`` are validated against the provider's options model (an unknown or bad
    one is a :class:`~arcmemo.core.registry.RegistryError` naming the accepted options);
    ``base_url`` is one of them, passed on only when given (providers that take it fall back
    to their environment variable).
    """
    window, model_args = split_context_window(model_args)
    component, model = _provider_spec(spec, base_url, model_args)
    provider: Provider = PROVIDERS.create(component, model=model)
    if window is not None:
        provider.context_window = window
    return provider


def check_provider_options(spec: str, *, base_url: str | None = None, **model_args: Any) -> None:
    """Validate what :func:`create_provider` would, building nothing (a dry run opens no
    model, yet a bad option must fail it as it would fail the run)."""
    _, model_args = split_context_window(model_args)
    component, _ = _provider_spec(spec, base_url, model_args)
    PROVIDERS.options(component.name, component.options)


def _provider_spec(
    spec: str, base_url: str | None, model_args: dict[str, Any]
) -> tuple[ComponentSpec, str]:
    name, model = parse_spec(spec)
    if base_url is not None:
        model_args = {**model_args, "base_url": base_url}
    return ComponentSpec(name=name, options=model_args), model
