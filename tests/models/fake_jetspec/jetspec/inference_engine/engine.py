"""Fake ``jetspec.inference_engine.engine``: the module whose ``sample`` the engine calls.

As in the real engine, ``sample`` is looked up here at every decoding step (so arcmemo's
step checkpoint, installed over it, runs once per plain step and at tree prefill).
"""

from __future__ import annotations

from typing import Any

import torch


def sample(logits: Any, temperature: float = 0.0) -> int:
    """Greedy below 1e-5 (the real threshold), else one draw from torch's generator."""
    return torch.fake_draw() if temperature >= 1e-5 else 0
