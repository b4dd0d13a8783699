"""Options shared by the commands that call a model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from arcmemo.models.client import ModelClient, ModelConfig, open_model


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
    """``--model``, ``--base-url``, ``--model-arg``, ``--concurrency`` and ``--no-cache``."""
    for option in reversed(
        [
            click.option("--model", required=True, help="provider:model (e.g. openai:gpt-4.1)."),
            click.option("--base-url", help="OpenAI-compatible endpoint."),
            click.option("--model-arg", "model_args", multiple=True, help="Provider option k=v."),
            click.option("--concurrency", type=int, default=16, show_default=True),
            click.option("--no-cache", is_flag=True, help="Do not read the response cache."),
        ]
    ):
        function = option(function)
    return function


def open_cli_model(options: dict[str, Any], call_log_path: Any = None) -> ModelClient:
    """The model client described by :func:`model_options` values."""
    return open_model(
        options["model"],
        base_url=options["base_url"],
        model_args=parse_model_args(options["model_args"]),
        config=ModelConfig(concurrency=options["concurrency"], cache=not options["no_cache"]),
        call_log_path=call_log_path,
    )
