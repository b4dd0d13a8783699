"""``arcmemo bench``: local-generation benchmarks.

``arcmemo bench generation --model jetspec:MODEL_DIR --model-arg draft=HEAD_DIR`` decodes
the same prompts plainly and speculatively through one JetSpec engine, prints tokens/s
side by side and checks that greedy outputs are identical (JetSpec is lossless; in bf16 a
borderline argmax may flip after many tokens, so use ``--model-arg dtype=fp32`` for an
exact check).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel, Field

from arcmemo.cli.options import parse_model_args
from arcmemo.files import atomic_write_text
from arcmemo.models.base import Completion, GenerateParams, Message, ProviderError
from arcmemo.registry import RegistryError

# Short reasoning questions in the style of GSM8K / MATH; any text works.
DEFAULT_PROMPTS: tuple[str, ...] = (
    "A farmer has 17 sheep and buys 3 times as many goats. How many animals does he have?",
    "What is the sum of the first 20 positive odd numbers? Explain step by step.",
    "A train travels 180 km in 2.5 hours. What is its average speed in km per hour?",
    "Solve for x: 3x + 7 = 2x - 5. Show your work.",
    "How many ways can 4 books be arranged on a shelf? Explain.",
    "If a rectangle has perimeter 30 and length 9, what is its area?",
    "Write a Python function that returns the n-th Fibonacci number.",
    "What is 15 percent of 240? Show the calculation.",
)


class ModeResult(BaseModel):
    """Totals of one decoding mode over all prompts (warm-up excluded)."""

    mode: str
    prompts: int
    generated_tokens: int
    generation_s: float = Field(description="Sum of the engine's decode times.")
    request_s: float = Field(description="Sum of request wall times through the provider.")
    tokens_per_s: float = Field(description="generated_tokens / generation_s.")
    rounds: int
    tokens_per_round: float | None
    mean_accept_length: float | None


class GenerationBenchResult(BaseModel):
    """Plain vs speculative decoding on identical prompts."""

    model: str
    options: dict[str, str]
    max_tokens: int
    plain: ModeResult
    speculative: ModeResult
    speedup: float | None = Field(description="speculative tokens/s over plain tokens/s.")
    identical: bool = Field(description="Every greedy output text matched.")
    mismatches: list[int] = Field(
        default_factory=list, description="Indexes of prompts that differ."
    )


def _mode_result(mode: str, completions: list[Completion]) -> ModeResult:
    tokens = sum(c.stats["generated_tokens"] for c in completions)
    seconds = sum(c.stats["generation_s"] for c in completions)
    rounds = sum(c.stats["rounds"] for c in completions)
    accept_sum = sum(
        c.stats["mean_accept_length"] * c.stats["rounds"]
        for c in completions
        if c.stats.get("mean_accept_length") is not None
    )
    accept_rounds = sum(
        c.stats["rounds"] for c in completions if c.stats.get("mean_accept_length") is not None
    )
    return ModeResult(
        mode=mode,
        prompts=len(completions),
        generated_tokens=tokens,
        generation_s=seconds,
        request_s=sum(c.latency_s for c in completions),
        tokens_per_s=tokens / seconds if seconds > 0 else 0.0,
        rounds=rounds,
        tokens_per_round=tokens / rounds if rounds else None,
        mean_accept_length=accept_sum / accept_rounds if accept_rounds else None,
    )


async def compare_decoding(
    provider: Any, prompts: Sequence[str], *, max_tokens: int, warmup: bool = True
) -> tuple[list[Completion], list[Completion]]:
    """Greedy completions of every prompt, plain then speculative, through ``provider``.

    ``provider`` is a :class:`arcmemo.models.jetspec.JetSpecProvider`; a warm-up request
    per mode (not returned) absorbs compilation and graph capture.
    """
    params = GenerateParams(max_tokens=max_tokens, temperature=0.0)
    results: dict[bool, list[Completion]] = {}
    for speculative in (False, True):
        if warmup and prompts:
            await provider.generate_mode(
                [Message(role="user", content=prompts[0])], params, speculative=speculative
            )
        results[speculative] = [
            (
                await provider.generate_mode(
                    [Message(role="user", content=prompt)], params, speculative=speculative
                )
            )[0]
            for prompt in prompts
        ]
    return results[False], results[True]


async def run_generation_bench(
    model_dir: str,
    options: dict[str, str],
    prompts: Sequence[str],
    *,
    max_tokens: int,
    warmup: bool = True,
) -> GenerationBenchResult:
    """Build a ``jetspec`` provider and compare its two decoding modes."""
    from arcmemo.models.jetspec import JetSpecProvider

    provider = JetSpecProvider.open(model_dir, **options)
    if provider.settings.draft is None:
        raise click.UsageError(
            "speculative decoding needs --model-arg draft=HEAD_DIR (or random/echo)"
        )
    try:
        plain, speculative = await compare_decoding(
            provider, prompts, max_tokens=max_tokens, warmup=warmup
        )
    finally:
        await provider.aclose()
    mismatches = [
        i
        for i, (a, b) in enumerate(zip(plain, speculative, strict=True))
        if (a.reasoning, a.text, a.usage.completion_tokens)
        != (b.reasoning, b.text, b.usage.completion_tokens)
    ]
    plain_result = _mode_result("plain", plain)
    spec_result = _mode_result("speculative", speculative)
    return GenerationBenchResult(
        model=model_dir,
        options=options,
        max_tokens=max_tokens,
        plain=plain_result,
        speculative=spec_result,
        speedup=spec_result.tokens_per_s / plain_result.tokens_per_s
        if plain_result.tokens_per_s > 0
        else None,
        identical=not mismatches,
        mismatches=mismatches,
    )


def _format(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def format_result(result: GenerationBenchResult) -> str:
    """The side-by-side table printed by ``arcmemo bench generation``."""
    plain, spec = result.plain, result.speculative
    rows = [
        ("tokens", str(plain.generated_tokens), str(spec.generated_tokens)),
        ("decode s", _format(plain.generation_s, ".3f"), _format(spec.generation_s, ".3f")),
        ("tokens/s", _format(plain.tokens_per_s, ".1f"), _format(spec.tokens_per_s, ".1f")),
        (
            "tokens/round",
            _format(plain.tokens_per_round, ".2f"),
            _format(spec.tokens_per_round, ".2f"),
        ),
        ("accept length", "-", _format(spec.mean_accept_length, ".2f")),
    ]
    lines = [f"{'':14} {'plain':>12} {'speculative':>12}"]
    lines += [f"{name:14} {a:>12} {b:>12}" for name, a, b in rows]
    lines.append(f"speed-up: {_format(result.speedup, '.2f')}x")
    count = result.plain.prompts
    if result.identical:
        lines.append(f"greedy outputs identical: yes ({count}/{count})")
    else:
        lines.append(
            f"greedy outputs identical: NO ({count - len(result.mismatches)}/{count}; "
            f"differing prompts {result.mismatches})"
        )
    return "\n".join(lines)


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
    help="One prompt per line instead of the built-in ones.",
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
    if prompt_file is not None:
        pool = [line.strip() for line in prompt_file.read_text().splitlines() if line.strip()]
        if not pool:
            raise click.BadParameter(f"{prompt_file} holds no prompt", param_hint="--prompt-file")
    else:
        pool = list(DEFAULT_PROMPTS)
    prompts = [pool[i % len(pool)] for i in range(prompt_count)]
    try:
        result = asyncio.run(
            run_generation_bench(
                model_dir,
                parse_model_args(model_args),
                prompts,
                max_tokens=max_tokens,
                warmup=warmup,
            )
        )
    except (ProviderError, RegistryError) as error:
        raise click.ClickException(str(error)) from error
    click.echo(format_result(result))
    if json_path is not None:
        atomic_write_text(json_path, json.dumps(result.model_dump(), indent=2) + "\n")
    if not result.identical:
        raise SystemExit(1)


if __name__ == "__main__":
    bench()
