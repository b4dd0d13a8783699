"""Whether the real local model (SmolLM2 through llama.cpp's server) can run here: the one
check every real-model test skips on."""

from __future__ import annotations

from arcmemo.models.base import ProviderError
from arcmemo.models.local_server import gguf_path, missing_server_package


def real_model_missing() -> str | None:
    """Why the real local model cannot run here, or None when it can."""
    missing = missing_server_package()
    if missing is not None:
        return f"{missing} is not installed (pip install 'arcmemo[local]')"
    try:
        gguf_path("smollm2")
    except ProviderError as error:
        return str(error)
    return None
