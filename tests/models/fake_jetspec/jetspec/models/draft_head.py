"""Fake ``load_draft_head``: a directory with ``config.json`` holding ``dflash_config``."""

from __future__ import annotations

import json
from pathlib import Path


class FakeDraftHead:
    def __init__(self, block_size: int, target_layer_ids: list[int], device: str) -> None:
        self.block_size = block_size
        self.target_layer_ids = target_layer_ids
        self.device = device


def load_draft_head(
    repo_or_path: str, device: str = "cuda", dtype: object = None, attn_implementation: str = "sdpa"
) -> FakeDraftHead:
    config_path = Path(repo_or_path) / "config.json"
    if not config_path.is_file():
        raise OSError(f"{repo_or_path} does not appear to have a file named config.json")
    config = json.loads(config_path.read_text())
    dflash = config.get("dflash_config")
    if dflash is None:
        raise RuntimeError("size mismatch for fc.weight (config has no dflash_config)")
    return FakeDraftHead(int(config["block_size"]), list(dflash["target_layer_ids"]), device)
