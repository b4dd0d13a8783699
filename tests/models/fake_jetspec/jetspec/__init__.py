"""Fake JetSpec: the documented public surface, for CPU contract tests (see README.md)."""

import importlib

_LAZY = {
    "SamplingParams": "jetspec.inference_engine",
    "RandomTreeDrafter": "jetspec.draft",
    "TargetEchoTreeDrafter": "jetspec.draft",
    "DraftHeadTreeDrafter": "jetspec.draft_head_adapter",
    "load_draft_head": "jetspec.models.draft_head",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
