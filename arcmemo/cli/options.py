"""Options shared by the commands that call a model."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import click

from arcmemo.cli.config_options import (
    ComponentChoice as ComponentChoice,
)
from arcmemo.cli.config_options import (
    config_options,
    config_values,
    format_grouped_options,
    parse_key_values,
)
from arcmemo.cli.config_options import (
    parse_component_args as parse_component_args,
)
from arcmemo.core.registry import ComponentSpec, Registry
from arcmemo.models.base import SamplingConfig
from arcmemo.models.client import ModelClient, open_model
from arcmemo.models.config import ModelConfig


def parse_model_args(values: tuple[str, ...]) -> dict[str, str]:
    """``("key=value", ...)`` from repeated ``--model-arg`` options."""
    return parse_key_values(values, "--model-arg")


# The run settings a command that calls one model takes: the solver role's model, endpoint,
# options and sampling, and the run's concurrency and cache (declared on RunConfig).
MODEL_SETTINGS: dict[str, Iterable[str] | None] = {
    "model": None,
    "base_url": None,
    "model_args": None,
    "sampling": ("temperature", "max_tokens"),
    "models": ("concurrency", "cache"),
}


def model_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--model``, ``--base-url``, ``--model-arg``, ``--temperature``, ``--max-tokens``,
    ``--concurrency`` and ``--no-cache``: the options of ``arcmemo run`` of these names."""
    from arcmemo.run.config import RunConfig

    return config_options(RunConfig, MODEL_SETTINGS)(function)


def role_model_options(role: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """:func:`model_options` for a command whose model plays ``role`` (its ``--model`` help
    says which: "the abstract role's model ...")."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        function = model_options(function)
        for param in getattr(function, "__click_params__", []):
            if param.name == "model" and isinstance(param, click.Option):
                param.help = f"The {role} role's model, provider:model (e.g. openai:o4-mini)."
        return function

    return decorate


def open_cli_model(options: dict[str, Any], call_log_path: Any = None) -> ModelClient:
    """The model client described by :func:`model_options` values."""
    base_url = options["base_url"]
    if isinstance(base_url, (tuple, list)):  # repeated --base-url: replicas
        base_url = ",".join(base_url) or None
    concurrency = options["concurrency"]
    return open_model(
        options["model"],
        base_url=base_url,
        model_args=parse_model_args(options["model_args"]),
        config=ModelConfig(
            **({} if concurrency is None else {"concurrency": concurrency}),
            cache=not options["no_cache"],
        ),
        call_log_path=call_log_path,
        defaults=SamplingConfig(
            temperature=options["temperature"], max_tokens=options["max_tokens"]
        ),
    )


# The settings of a command that calls one role's model and names it as a run does: the
# solver's (--model ...), the aux model's (--aux-model ...) and any role's (--model-role
# ROLE=SPEC, --model-role-arg, --endpoint), with the run's concurrency and cache; the role
# falls back along arcmemo.core.roles.FALLBACK as in a run.
ROLE_SETTINGS: dict[str, Iterable[str] | None] = {
    **MODEL_SETTINGS,
    "aux_model": None,
    "aux_base_url": None,
    "aux_model_args": None,
    "aux_sampling": ("temperature", "max_tokens"),
    "roles": None,
    "endpoints": None,
}


def run_role_options(role: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The model options of ``arcmemo run`` (:data:`ROLE_SETTINGS`) for a command whose
    model plays ``role``; none of them given means the command calls no model."""
    from arcmemo.run.config import RunConfig

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        function = config_options(RunConfig, ROLE_SETTINGS)(function)
        for param in getattr(function, "__click_params__", []):
            if param.name == "model" and isinstance(param, click.Option):
                param.help = (
                    f"Model the {role} role falls back to when neither --model-role "
                    f"{role}=SPEC nor --aux-model names one, provider:model."
                )
        return function

    return decorate


def open_role_model(
    options: dict[str, Any], role: str, call_log_path: Any = None
) -> ModelClient | None:
    """The client ``role`` calls, from :func:`run_role_options` values, as a run would open
    it (its own model, else its fallback's: endpoint, options and sampling); None when no
    option names a model."""
    from arcmemo.core.roles import FALLBACK
    from arcmemo.run.config import RunConfig

    values = config_values(RunConfig, options, only=ROLE_SETTINGS)
    named = {name: given.get("spec") for name, given in values.get("roles", {}).items()}
    chain: list[str] = []
    step: str | None = role
    while step is not None:
        chain.append(step)
        step = FALLBACK[step]
    flat = {"aux": values.get("aux_model"), "solver": values.get("model")}
    spec = next((named.get(r) or flat.get(r) for r in chain if named.get(r) or flat.get(r)), None)
    if spec is None:
        return None
    # The roles are resolved by a run's config, which always has a solver, a benchmark and
    # a folder: a command that names only its role's model stands it in as the solver
    # (never called: the role's own model comes first in the fallback chain), and the
    # benchmark and folder are never read.
    values.setdefault("model", spec)
    config = RunConfig.model_validate({"benchmark": "arc-agi-1", "out": ".", **values})
    owner = config.model_owner(role)
    spec, endpoint, provider_options = config.role_spec(owner)
    client = open_model(
        spec,
        base_url=endpoint,
        model_args=provider_options,
        config=config.models,
        call_log_path=call_log_path,
    )
    client.defaults = config.role_sampling(role)
    return client


class RegistryHelpCommand(click.Command):
    """A command whose help ends with the registered components it can use.

    The list is built only when help is shown, so importing the command stays cheap.
    """

    def __init__(self, *args: Any, registries: tuple[Registry[Any], ...] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.registries = registries

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        format_grouped_options(self, ctx, formatter)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        for registry in self.registries:
            with formatter.section(plural(registry.kind).capitalize()):
                formatter.write_dl([(entry.name, entry.describe()) for entry in registry.entries()])


def plural(noun: str) -> str:
    """``sandbox`` -> ``sandboxes``, ``selector`` -> ``selectors``."""
    return noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")


def sandbox_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--sandbox NAME`` and ``--sandbox-arg k=v`` (where model-written programs run), as
    ``arcmemo run`` declares them."""
    from arcmemo.run.config import RunConfig

    return config_options(RunConfig, {"sandbox": None})(function)


def sandbox_spec(options: dict[str, Any]) -> ComponentSpec:
    """The sandbox chosen by :func:`sandbox_options` values (the run's default if none)."""
    from arcmemo.run.config import RunConfig

    chosen = config_values(RunConfig, options, only={"sandbox": None}).get("sandbox")
    if chosen is None:
        default: ComponentSpec = RunConfig.model_fields["sandbox"].get_default()
        return default
    return ComponentSpec.model_validate(chosen)


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


def warn_retired(old: str, new: str) -> None:
    """Say on stderr that ``old`` is a retired spelling of ``new`` (arcmemo.core.spellings)."""
    click.echo(f"warning: {old} is deprecated; use {new}", err=True)


class RetiringChoice(click.Choice[str]):
    """A choice that also reads the retired spellings of its values (``retired``: old ->
    new), with a warning naming the new one; the help lists the current values only."""

    def __init__(self, choices: Iterable[str], retired: Mapping[str, str]) -> None:
        super().__init__(list(choices))
        self.retired = retired

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value in self.retired:
            flag = param.opts[0] if param is not None and param.opts else ""
            warn_retired(f"{flag} {value}".strip(), f"{flag} {self.retired[value]}".strip())
            value = self.retired[value]
        return super().convert(value, param, ctx)


def retired_flag(old: str, dest: str, **kwargs: Any) -> Callable[..., Any]:
    """A hidden option spelled ``old`` (a retired spelling) that gives its value as
    ``dest``; the command reads it with :func:`current_flag`."""
    return click.option(old, dest, hidden=True, default=None, **kwargs)


def current_flag(value: Any, retired_value: Any, old: str, new: str) -> Any:
    """The value of ``new``, else of its retired spelling ``old`` (with a warning)."""
    if retired_value is None:
        return value
    warn_retired(old, new)
    return retired_value if value is None else value
