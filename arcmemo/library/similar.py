"""How alike two programs' code is: the share of token n-grams they have in common.

``library refactor`` with a model shows programs together that share a concept, then those
whose code is alike (the routine they write inline is the likeliest to be shared), then the
rest. Code is compared by its Python tokens (names, operators, numbers; comments, strings
and layout dropped), as sets of :data:`NGRAM`-token windows, by Jaccard similarity.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Mapping, Sequence

NGRAM = 5
"""Tokens in one window."""
SIMILAR = 0.2
"""Jaccard similarity of two programs' windows from which they count as alike."""
_KEPT = {tokenize.NAME, tokenize.OP, tokenize.NUMBER}


def shingles(source: str, n: int = NGRAM) -> frozenset[tuple[str, ...]]:
    """The ``n``-token windows of ``source`` (empty for text that does not tokenize)."""
    try:
        tokens = [
            t.string
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type in _KEPT
        ]
    except (tokenize.TokenError, SyntaxError):
        return frozenset()
    return frozenset(tuple(tokens[i : i + n]) for i in range(max(len(tokens) - n + 1, 0)))


def jaccard(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    """|a & b| / |a | b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def similar_groups(
    sources: Mapping[str, str], tasks: Sequence[str], size: int, threshold: float = SIMILAR
) -> tuple[list[list[str]], list[str]]:
    """Groups of at least two of ``tasks`` whose code is alike, and the tasks left over.

    Greedy, in order: the first task left takes the up to ``size - 1`` others most like it
    (at least ``threshold``); a task alike to none is left over."""
    windows = {t: shingles(sources[t]) for t in tasks}
    left = list(tasks)
    groups: list[list[str]] = []
    alone: list[str] = []
    while left:
        seed, rest = left[0], left[1:]
        scored = sorted(
            ((jaccard(windows[seed], windows[t]), t) for t in rest),
            key=lambda pair: -pair[0],
        )
        members = [seed, *[t for score, t in scored if score >= threshold][: size - 1]]
        if len(members) < 2:
            alone.append(seed)
            left = rest
            continue
        groups.append(members)
        left = [t for t in left if t not in members]
    return groups, alone
