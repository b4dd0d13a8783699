"""How a run talks to its models: :class:`ModelConfig` (a run config's ``models``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from arcmemo.core.spellings import MODEL_CONFIG_FIELDS, renamed_fields


class ModelConfig(BaseModel):
    """How a run talks to its models (limits, request retries, cache, prices)."""

    concurrency: int = Field(default=16, ge=1, description="Requests in flight at once, run-wide.")
    rpm: int | None = Field(
        default=None, ge=1, description="Requests-per-minute ceiling; None = none."
    )
    tpm: int | None = Field(
        default=None, ge=1, description="Tokens-per-minute ceiling; None = none."
    )
    request_retries: int = Field(
        default=6, ge=0, description="Repeats of a failed request after its first try."
    )
    retry_budget_s: float = Field(
        default=300, ge=0, description="Give up once retrying would run past this many seconds."
    )
    backoff_base_s: float = Field(default=1.0, ge=0, description="First backoff ceiling (doubles).")
    backoff_max_s: float = Field(default=60.0, ge=0, description="Largest backoff ceiling.")
    timeout_s: float = Field(default=600, gt=0, description="Per-request timeout (then retried).")
    cache: bool = Field(
        default=True, description="Read the response cache (--no-cache sets False)."
    )
    cache_write: bool = Field(
        default=True, description="Write the response cache; with cache=False too, none is opened."
    )
    cache_dir: Path | None = Field(
        default=None, description="Cache folder; None = ARCMEMO_CACHE_DIR."
    )
    prices_path: Path | None = Field(
        default=None, description="Price override file; None = ARCMEMO_PRICES."
    )
    cache_namespace: str = Field(
        default="",
        description="Part of every cache key: runs in different namespaces (replicates of an "
        "experiment) never share cached answers; the same namespace replays them.",
    )

    @model_validator(mode="before")
    @classmethod
    def _current_spellings(cls, values: Any) -> Any:
        return renamed_fields(values, MODEL_CONFIG_FIELDS)
