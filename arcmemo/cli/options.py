"""Options shared by the commands that call a model."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from arcmemo.models.base import SamplingConfig
from arcmemo.models.client import ModelClient, ModelConfig, open_model
from arcmemo.registry import ComponentSpec, Registry, RegistryError


def parse_model_args(values: tuple[str, ...]) -> dict[str, str]:
    """``("key=value", ...)`` from repeated ``--model-arg`` options."""
    parsed = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected key=value, got {value!r}", param_hint="--model-arg")
        parsed[key.strip()] = val.strip()
    return parsed


def model_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--model``, ``--base-url``, ``--model-arg``, ``--temperature``, ``--max-tokens``,
    ``--concurrency`` and ``--no-cache``."""
    for option in reversed(
        [
            click.option("--model", required=True, help="provider:model (e.g. openai:gpt-4.1)."),
            click.option("--base-url", help="OpenAI-compatible endpoint."),
            click.option("--model-arg", "model_args", multiple=True, help="Provider option k=v."),
            click.option("--temperature", type=float, help="Temperature of every call."),
            click.option(
                "--max-tokens", type=click.IntRange(min=1), help="Token cap of every call."
            ),
            click.option(
                "--concurrency", type=click.IntRange(min=1), default=16, show_default=True
            ),
            click.option("--no-cache", is_flag=True, help="Do not read the response cache."),
        ]
    ):
        function = option(function)
    return function


def open_cli_model(options: dict[str, Any], call_log_path: Any = None) -> ModelClient:
    """The model client described by :func:`model_options` values."""
    client = open_model(
        options["model"],
        base_url=options["base_url"],
        model_args=parse_model_args(options["model_args"]),
        config=ModelConfig(concurrency=options["concurrency"], cache=not options["no_cache"]),
        call_log_path=call_log_path,
    )
    client.defaults = SamplingConfig(
        temperature=options["temperature"], max_tokens=options["max_tokens"]
    )
    return client


class ComponentChoice(click.ParamType):
    """A registered component's name; the choices come from its registry.

    Listing the names imports nothing; a wrong name fails with the registry's one-line
    message (known names and the closest match).
    """

    def __init__(self, registry: Registry[Any]) -> None:
        self.registry = registry
        self.name = registry.kind

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.registry.names()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            self.registry.get(str(value))
        except RegistryError as error:
            self.fail(str(error), param, ctx)
        return str(value)


def parse_component_args(values: tuple[str, ...], option: str) -> dict[str, Any]:
    """Options of a component from repeated ``--X-arg key=value``.

    A dotted key sets a nested option (``limits.timeout_s=5``); a value starting with ``[``
    or ``{`` is read as JSON; anything else stays a string for the options model to coerce.
    """
    parsed: dict[str, Any] = {}
    for value in values:
        key, sep, raw = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected key=value, got {value!r}", param_hint=option)
        item: Any = raw.strip()
        if item[:1] in "[{":
            try:
                item = json.loads(item)
            except json.JSONDecodeError as error:
                raise click.BadParameter(
                    f"{key}: not valid JSON ({error.msg})", param_hint=option
                ) from None
        target = parsed
        *parents, leaf = key.strip().split(".")
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = item
    return parsed


class RegistryHelpCommand(click.Command):
    """A command whose help ends with the registered components it can use.

    The list is built only when help is shown, so importing the command stays cheap.
    """

    def __init__(self, *args: Any, registries: tuple[Registry[Any], ...] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.registries = registries

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        for registry in self.registries:
            with formatter.section(f"{registry.kind.capitalize()}s"):
                formatter.write_dl([(entry.name, entry.describe()) for entry in registry.entries()])


def sandbox_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--sandbox NAME`` and ``--sandbox-arg k=v`` (where model-written programs run)."""
    from arcmemo.sandbox import SANDBOXES

    for option in reversed(
        [
            click.option(
                "--sandbox",
                type=ComponentChoice(SANDBOXES),
                default="bwrap",
                show_default=True,
                help="Where model-written programs run: bwrap (kernel namespaces) or process "
                "(weaker; recorded in config.json and summary.json).",
            ),
            click.option(
                "--sandbox-arg",
                "sandbox_args",
                multiple=True,
                help='Sandbox option k=v (e.g. limits.timeout_s=5, packages=["numpy"]).',
            ),
        ]
    ):
        function = option(function)
    return function


def sandbox_spec(options: dict[str, Any]) -> ComponentSpec:
    """The sandbox chosen by :func:`sandbox_options` values."""
    return ComponentSpec(
        name=options["sandbox"],
        options=parse_component_args(options["sandbox_args"], "--sandbox-arg"),
    )


def selector_args(
    select_args: tuple[str, ...],
    *,
    memory_budget: int | None,
    top_k: int | None,
    embedder: str | None,
) -> dict[str, Any]:
    """Selector options from ``--select-arg k=v`` and the named shortcuts for common ones
    (``--memory-budget`` is ``budget_tokens``)."""
    values = parse_component_args(select_args, "--select-arg")
    for key, value in (("budget_tokens", memory_budget), ("top_k", top_k), ("embedder", embedder)):
        if value is not None:
            values[key] = value
    return values
