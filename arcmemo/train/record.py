"""``training.json``: what each epoch of a training did, and which memory scored best."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arcmemo.core.files import atomic_write_text

TRAINING_FORMAT = 1
RECORD_NAME = "training.json"
BEST_MEMORY_NAME = "best-memory.json"

Revisit = Literal["unsolved", "all"]


class TrainingError(ValueError):
    """A training that cannot start or go on as asked (one line for the user)."""


class RoleUsage(BaseModel):
    """What one model role spent in one run (summary.json's ``roles``)."""

    calls: int = 0
    cache_hits: int = 0
    cost_usd: float | None = 0.0


class RunPart(BaseModel):
    """One ordinary run of an epoch (its train pass or its validation pass)."""

    run_dir: str = Field(description="The run directory, relative to the training directory.")
    n_tasks: int
    n_solved: int | None = None
    score: float | None = Field(default=None, description="The benchmark's headline score.")
    complete: bool = True
    calls: int = 0
    cost_usd: float | None = 0.0
    roles: dict[str, RoleUsage] = Field(default_factory=dict)


class TrainPart(RunPart):
    """An epoch's pass over the train tasks (with memory writes)."""

    written: list[str] = Field(
        default_factory=list, description="Train tasks whose solution this pass wrote to memory."
    )


class ValidationPart(RunPart):
    """An epoch's frozen pass over the validation tasks (no writes)."""

    metric: str = Field(description="What `score` is (e.g. oracle@2 for ARC).")
    spread: float | None = Field(
        default=None,
        description="Sample std over attempt indices of the score of attempt j alone "
        "(None with one attempt).",
    )
    per_attempt: list[float] = Field(
        default_factory=list, description="The score of attempt j alone, j = 0, 1, ..."
    )
    metrics: dict[str, float] = Field(
        default_factory=dict, description="The benchmark's headline metrics by name."
    )


class MemorySize(BaseModel):
    concepts: int = Field(description="Concepts not retired.")
    lessons: int
    functions: int = Field(description="Library functions of concepts not retired.")


class EpochRecord(BaseModel):
    """Epoch 0 scores the starting memory; epoch k >= 1 trains, then validates."""

    model_config = ConfigDict(extra="forbid")

    epoch: int = Field(ge=0)
    train: TrainPart | None = Field(default=None, description="None for epoch 0.")
    validation: ValidationPart
    memory: str = Field(description="The epoch's memory snapshot, relative to the directory.")
    memory_size: MemorySize
    added: list[str] = Field(default_factory=list, description="Concepts the epoch added.")
    changed: list[str] = Field(
        default_factory=list, description="Concepts whose content (not statistics) changed."
    )
    retired: list[str] = Field(
        default_factory=list, description="Concepts the epoch retired or removed."
    )


class TrainingRecord(BaseModel):
    """``DIR/training.json``."""

    model_config = ConfigDict(extra="forbid")

    format_version: int = TRAINING_FORMAT
    benchmark: str
    train_split: str | None
    val_split: str | None
    train_tasks: list[str]
    val_tasks: list[str]
    epochs_planned: int
    patience: int | None
    revisit: Revisit
    metric: str = Field(description="The validation metric best_epoch is chosen by.")
    epochs: list[EpochRecord] = Field(default_factory=list)
    best_epoch: int | None = Field(
        default=None, description="Highest validation score, ties to the earliest epoch."
    )
    stopped: str | None = Field(
        default=None, description="Why training ended before the planned epochs."
    )
    complete: bool = False
    updated_at: datetime | None = None

    def save(self, directory: Path) -> Path:
        path = directory / RECORD_NAME
        atomic_write_text(path, self.model_dump_json(indent=2) + "\n")
        return path


def best_epoch(epochs: list[EpochRecord]) -> int | None:
    """The epoch of the highest validation score, the earliest among equals."""
    best: EpochRecord | None = None
    for epoch in epochs:
        score = epoch.validation.score
        if score is None:
            continue
        if best is None or score > (best.validation.score or 0.0):
            best = epoch
    return None if best is None else best.epoch


def read_record(directory: Path) -> TrainingRecord | None:
    """The training record in ``directory``; None where there is none."""
    path = directory / RECORD_NAME
    if not path.is_file():
        return None
    try:
        return TrainingRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as error:
        first = str(error).splitlines()[0]
        raise TrainingError(f"{path}: not a training record ({first})") from None


def is_training_dir(directory: Path) -> bool:
    return (directory / RECORD_NAME).is_file()
