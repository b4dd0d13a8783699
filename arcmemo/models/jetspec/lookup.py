"""A draft tree from the context itself (prompt-lookup drafting), for any target model.

ARC prompts and answers repeat themselves: an output grid copies most rows of its input,
a program names the same variables again. :class:`PromptLookupDrafter` finds the latest
earlier places where the context's last ``n`` tokens (longest ``n`` first) occurred and
proposes the tokens that followed them, as JetSpec's tree drafters do: per-depth logits
``(1, depth, vocab)``, from which the engine's tree algorithm builds the draft tree. It
needs no trained head, so it drafts for every model JetSpec serves; the target verifies
every token, so decoding stays exactly the target's.

The context is indexed incrementally (only the tokens committed since the last round are
read back from the device); ``reset_cache`` (called by JetSpec at the start of a decode)
starts a new index.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

# Logit of the first candidate at a depth, and of each later one: far above the rest of
# the vocabulary (0), so the tree spends its budget on the candidates first.
FIRST_LOGIT = 30.0
NEXT_LOGIT = 20.0


class ContextIndex:
    """The end positions of every n-gram (n = 1..max_ngram) of a growing token list."""

    def __init__(self, max_ngram: int = 4, keep: int = 8) -> None:
        self.max_ngram = max_ngram
        self.keep = keep  # most recent end positions kept per n-gram
        self.tokens: list[int] = []
        self._ends: dict[tuple[int, ...], list[int]] = defaultdict(list)

    def extend(self, tokens: list[int]) -> None:
        """Append tokens, indexing the n-grams that end at each."""
        for token in tokens:
            self.tokens.append(token)
            end = len(self.tokens)
            for n in range(1, min(self.max_ngram, end) + 1):
                ends = self._ends[tuple(self.tokens[end - n : end])]
                ends.append(end)
                if len(ends) > self.keep:
                    del ends[0]

    def candidates(self, depth: int, width: int) -> list[list[int]]:
        """Up to ``width`` distinct continuations of ``depth`` tokens (some may be shorter),
        most recent match of the longest n-gram first."""
        tokens, found, seen = self.tokens, [], set()
        end_now = len(tokens)
        for n in range(min(self.max_ngram, end_now), 0, -1):
            for end in reversed(self._ends.get(tuple(tokens[end_now - n :]), ())):
                if end >= end_now:
                    continue  # the context's own suffix: nothing follows it yet
                continuation = tokens[end : end + depth]
                key = tuple(continuation)
                if continuation and key not in seen:
                    seen.add(key)
                    found.append(continuation)
                    if len(found) == width:
                        return found
        return found

    def per_depth(self, depth: int, width: int) -> list[list[int]]:
        """The distinct candidate tokens at each depth, in order of preference."""
        rows: list[list[int]] = [[] for _ in range(depth)]
        for continuation in self.candidates(depth, width):
            for level, token in enumerate(continuation):
                if token not in rows[level]:
                    rows[level].append(token)
        return rows


class PromptLookupDrafter:
    """JetSpec tree drafter (``propose_logits``) that drafts from the context itself."""

    def __init__(self, vocab_size: int, *, max_ngram: int = 4, width: int = 3) -> None:
        self.vocab_size = vocab_size
        self.max_ngram = max_ngram
        self.width = width
        self.index = ContextIndex(max_ngram)

    def reset_cache(self) -> None:
        """A new decode: forget the previous context."""
        self.index = ContextIndex(self.max_ngram)

    def _sync(self, context_ids: Any) -> None:
        known = len(self.index.tokens)
        length = int(context_ids.shape[1])
        if known and length >= known:
            # read back the new tokens and the last known one, to check it is the same context
            fresh = context_ids[0, known - 1 :].tolist()
            if fresh[0] == self.index.tokens[-1]:
                self.index.extend(fresh[1:])
                return
        self.index = ContextIndex(self.max_ngram)
        self.index.extend(context_ids[0].tolist())

    def propose_logits(
        self, context_ids: Any, depth: int, target_hidden: Any = None, **kwargs: Any
    ) -> Any:
        """``(1, depth, vocab)`` logits: the looked-up tokens far above the rest."""
        import torch

        self._sync(context_ids)
        rows = self.index.per_depth(depth, self.width)
        levels = [level for level, tokens in enumerate(rows) for _ in tokens]
        tokens = [token for row in rows for token in row]
        scores = [FIRST_LOGIT if i == 0 else NEXT_LOGIT for row in rows for i in range(len(row))]
        logits = torch.zeros((1, depth, self.vocab_size), device=context_ids.device)
        if tokens:
            device = context_ids.device
            logits[0, torch.tensor(levels, device=device), torch.tensor(tokens, device=device)] = (
                torch.tensor(scores, device=device)
            )
        return logits
