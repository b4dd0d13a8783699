"""``arcmemo bench``: local-generation benchmarks (the logic is in the library).

``arcmemo bench generation --model jetspec:MODEL_DIR --model-arg draft=HEAD_DIR`` runs
:func:`arcmemo.models.jetspec.bench.run_generation_bench`: the same prompts decoded plainly
and speculatively through one JetSpec engine, tokens/s side by side, and a check that greedy
outputs are identical (use ``--model-arg dtype=fp32`` for an exact check).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click

from arcmemo.cli.options import parse_model_args
from arcmemo.core.files import atomic_write_text
from arcmemo.core.registry import RegistryError
from arcmemo.models.base import ProviderError
from arcmemo.models.jetspec.bench import (
    DEFAULT_PROMPTS,
    BenchError,
    format_result,
    read_prompt_file,
    repeat_prompts,
    run_generation_bench,
)


@click.group()
def bench() -> None:
    """Benchmarks of local components."""


@bench.command("generation")
@click.option("--model", "model_spec", required=True, help="jetspec:MODEL_DIR")
@click.option("--model-arg", "model_args", multiple=True, help="Provider option key=value.")
@click.option("--prompts", "prompt_count", type=click.IntRange(1), default=len(DEFAULT_PROMPTS))
@click.option(
    "--prompt-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='Prompts instead of the built-in ones: JSON Lines (.jsonl, a "prompt" field per '
    "line; prompts may span lines) or plain text (one prompt per line).",
)
@click.option("--max-tokens", type=click.IntRange(1), default=256, show_default=True)
@click.option("--warmup/--no-warmup", default=True, help="One untimed request per mode first.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path))
def generation(
    model_spec: str,
    model_args: tuple[str, ...],
    prompt_count: int,
    prompt_file: Path | None,
    max_tokens: int,
    warmup: bool,
    json_path: Path | None,
) -> None:
    """Plain vs speculative tokens/s on identical prompts; fails if greedy outputs differ."""
    provider_name, _, model_dir = model_spec.partition(":")
    if provider_name != "jetspec" or not model_dir:
        raise click.BadParameter("expected jetspec:MODEL_DIR", param_hint="--model")
    pool: list[str] | tuple[str, ...] = DEFAULT_PROMPTS
    if prompt_file is not None:
        try:
            pool = read_prompt_file(prompt_file)
        except BenchError as error:
            raise click.BadParameter(str(error), param_hint="--prompt-file") from error
        if not pool:
            raise click.BadParameter(f"{prompt_file} holds no prompt", param_hint="--prompt-file")
    try:
        result = asyncio.run(
            run_generation_bench(
                model_dir,
                parse_model_args(model_args),
                repeat_prompts(pool, prompt_count),
                max_tokens=max_tokens,
                warmup=warmup,
            )
        )
    except BenchError as error:
        raise click.UsageError(str(error)) from error
    except (ProviderError, RegistryError) as error:
        raise click.ClickException(str(error)) from error
    click.echo(format_result(result))
    if json_path is not None:
        atomic_write_text(json_path, json.dumps(result.model_dump(), indent=2) + "\n")
    if not result.identical:
        raise SystemExit(1)


if __name__ == "__main__":
    bench()
