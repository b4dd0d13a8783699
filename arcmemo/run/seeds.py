"""The seeds of a run's requests: each replicate and each order seed samples apart, and
each has its own namespace of the response cache."""

from __future__ import annotations

# Replicate r samples with seed sampling_seed + r * stride; sample i of a request adds i, so
# replicates never share a seed while there are fewer than this many attempts.
REPLICATE_SEED_STRIDE = 1000
# What a provider that would decode greedily samples at when a run asks for several attempts.
DEFAULT_SAMPLING_TEMPERATURE = 0.7


# Order seed o (without --share-samples) adds (o + 1) * stride to the seeds, past every
# replicate's.
ORDER_SEED_STRIDE = 1_000_000


def replicate_namespace(replicate: int, order: int | None = None) -> str:
    """The response-cache namespace of a replicate and an order seed that draws its own
    samples ("" for replicate 0 without one: plain runs)."""
    parts = [f"replicate-{replicate}"] if replicate else []
    if order is not None:
        parts.append(f"order-{order}")
    return "/".join(parts)
