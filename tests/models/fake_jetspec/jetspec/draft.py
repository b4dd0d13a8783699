"""Fake stub tree drafters."""

from __future__ import annotations


class TreeDrafter:
    def propose_logits(
        self, context_ids: object, depth: int, target_hidden: object = None
    ) -> object:
        return None  # the fake engine only counts the calls (one per verify round)


class RandomTreeDrafter(TreeDrafter):
    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size
        self.acceptance = 1  # accepts nothing: one token per round


class TargetEchoTreeDrafter(TreeDrafter):
    def __init__(self, model: object) -> None:
        self.model = model
        self.acceptance = None  # accepts the full depth every round
