"""The generation benchmark: plain vs speculative JetSpec decoding on identical prompts.

:func:`run_generation_bench` decodes the same prompts plainly and speculatively through one
``jetspec`` provider, totals tokens/s per mode and checks that greedy outputs are identical
(JetSpec is lossless; in bf16 a borderline argmax may flip after many tokens, so use
``dtype=fp32`` for an exact check). ``arcmemo bench generation`` and
``experiments/jetspec_gpu.py`` are thin wrappers around it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from arcmemo.models.base import Completion, GenerateParams, Message
from arcmemo.models.jetspec.provider import JetSpecProvider
from arcmemo.models.jetspec.stats import summarize_stats

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


class BenchError(ValueError):
    """The benchmark cannot run as asked (e.g. no draft to decode speculatively with)."""


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


def read_prompt_file(path: Path) -> list[str]:
    """The prompts of ``path``: JSON Lines (``.jsonl``: one object per line with a string
    ``prompt``, which may span several lines) or plain text (one prompt per line)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".jsonl":
        return [line.strip() for line in text.splitlines() if line.strip()]
    prompts = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise BenchError(f"{path}:{number}: not JSON ({error.msg})") from None
        prompt = record.get("prompt") if isinstance(record, dict) else None
        if not isinstance(prompt, str) or not prompt.strip():
            raise BenchError(f'{path}:{number}: expected an object with a "prompt" string')
        prompts.append(prompt)
    return prompts


def repeat_prompts(pool: Sequence[str], count: int) -> list[str]:
    """``count`` prompts taken from ``pool`` in order, starting over when it runs out."""
    if not pool:
        raise BenchError("no prompt to benchmark with")
    return [pool[i % len(pool)] for i in range(count)]


def _mode_result(mode: str, completions: list[Completion]) -> ModeResult:
    totals = summarize_stats(c.stats for c in completions)
    return ModeResult(
        mode=mode,
        prompts=len(completions),
        request_s=sum(c.latency_s for c in completions),
        **totals.model_dump(),
    )


async def compare_decoding(
    provider: JetSpecProvider, prompts: Sequence[str], *, max_tokens: int, warmup: bool = True
) -> tuple[list[Completion], list[Completion]]:
    """Greedy completions of every prompt, plain then speculative, through ``provider``.

    A warm-up request per mode (not returned) absorbs compilation and graph capture.
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
    """Build a ``jetspec`` provider from ``--model-arg`` style options; compare its modes.

    Raises :class:`BenchError` without a draft, :class:`~arcmemo.core.registry.RegistryError` on
    bad options and :class:`~arcmemo.models.base.ProviderError` when decoding fails.
    """
    provider = JetSpecProvider.open(model_dir, **options)
    try:
        if provider.settings.draft is None:
            raise BenchError(
                "speculative decoding needs a draft: draft=HEAD_DIR (or draft=random / echo)"
            )
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
