"""Fake draft-head drafters."""

from __future__ import annotations

from jetspec.draft import TreeDrafter


class DraftHeadTreeDrafter(TreeDrafter):
    def __init__(
        self,
        head: object,
        target: object,
        block_size: int,
        target_layer_ids: list[int],
        draft_shift: bool = False,
    ) -> None:
        if target_layer_ids is None:
            raise TypeError("target_layer_ids is required")
        self.head = head
        self.target = target
        self.block_size = block_size
        self.target_layer_ids = target_layer_ids
        self.acceptance = 3  # accept_length per round (accepted + 1)
        self.resets = 0

    def reset_cache(self) -> None:
        self.resets += 1


class CompiledDraftHead(DraftHeadTreeDrafter):
    pass


class GraphedDraftHead(DraftHeadTreeDrafter):
    def __init__(self, head: object, *args: object, **kwargs: object) -> None:
        if not str(getattr(head, "device", "")).startswith("cuda"):
            raise RuntimeError("GraphedDraftHead requires a CUDA DraftHead")
        super().__init__(head, *args, **kwargs)
