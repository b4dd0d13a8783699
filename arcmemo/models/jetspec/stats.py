"""What one JetSpec decode reports (``Completion.stats``), and its aggregate over many."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field


class GenerationStats(BaseModel):
    """What one JetSpec decode reports; stored as ``Completion.stats``."""

    mode: Literal["speculative", "plain"]
    device: str
    engine: int = Field(description="Index of the engine (one per device) that served it.")
    prompt_tokens: int
    generated_tokens: int
    rounds: int = Field(description="Verify rounds (speculative) or decode steps (plain).")
    tokens_per_round: float = Field(description="JetSpec's tpf; 1.0 for plain decoding.")
    mean_accept_length: float | None = Field(
        default=None, description="sum(accept_lengths) / rounds; None when no round ran."
    )
    mean_tree_size: float | None = Field(default=None, description="Mean tree nodes per round.")
    generation_s: float = Field(description="Decode wall time, synchronized on CUDA.")
    tokens_per_s: float
    queue_s: float = Field(
        default=0.0,
        description="Wait before the engine started the request: queued behind other "
        "requests (and, for the first ones, the model load). Not part of generation_s.",
    )
    temperature: float = Field(default=0.0, description="Temperature it was decoded at.")
    sample: int = Field(default=0, description="Index of this sample within its request.")
    seed: int | None = Field(
        default=None, description="torch seed set before this sample; None: not reseeded."
    )


# Numeric fields of GenerationStats that identify rather than measure: never aggregated.
STAT_LABELS = frozenset({"engine", "sample", "seed"})


class StatsSummary(BaseModel):
    """Decode totals of many :class:`GenerationStats` (e.g. one mode of a benchmark)."""

    generated_tokens: int = Field(default=0, description="All generated tokens.")
    generation_s: float = Field(default=0.0, description="Sum of the engine's decode times.")
    tokens_per_s: float = Field(default=0.0, description="generated_tokens / generation_s.")
    rounds: int = Field(default=0, description="Verify rounds (speculative) or decode steps.")
    tokens_per_round: float | None = Field(default=None, description="Generated tokens / rounds.")
    mean_accept_length: float | None = Field(
        default=None, description="Round-weighted mean acceptance length."
    )


def summarize_stats(stats: Iterable[Mapping[str, Any]]) -> StatsSummary:
    """Aggregate ``Completion.stats`` dicts produced by this provider (others are skipped)."""
    summary = StatsSummary()
    accepted_weighted = 0.0
    accepted_rounds = 0
    for raw in stats:
        if raw.get("mode") not in ("speculative", "plain"):
            continue
        item = GenerationStats.model_validate(raw)
        summary.generated_tokens += item.generated_tokens
        summary.generation_s += item.generation_s
        summary.rounds += item.rounds
        if item.mean_accept_length is not None:
            accepted_weighted += item.mean_accept_length * item.rounds
            accepted_rounds += item.rounds
    if summary.generation_s > 0:
        summary.tokens_per_s = summary.generated_tokens / summary.generation_s
    if summary.rounds:
        summary.tokens_per_round = summary.generated_tokens / summary.rounds
    if accepted_rounds:
        summary.mean_accept_length = accepted_weighted / accepted_rounds
    return summary
