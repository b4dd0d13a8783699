"""An online ARC run whose programs import library functions: the prompt shows them, the
default sandbox runs the import, and credit by import is recorded in the grown memory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import run_benchmark
from tests.support.library_run import (
    IMPORTING,
    TASKS,
    assert_import_credited,
    importing_model,
    library_memory,
    lm,
)


def test_an_online_run_imports_library_functions_and_credits_them(tmp_path: Path) -> None:
    memory_path = library_memory(tmp_path / "memory.json")
    model = importing_model()
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        tasks=TASKS,
        model="scripted:solver",
        attempts=1,
        feedback_rounds=0,
        out=tmp_path / "run",
        memory=memory_path,
        selector="all",
        update="online",
        update_every=2,
        write_signal="train",
    )
    client = ModelClient(ScriptedProvider.from_script(model, model="solver"))
    asyncio.run(run_benchmark(config, models={"solver": client}))

    (solve,) = model.of("solve", "00576224")
    assert "from arcmemo_library import tile_mirrored" in solve.last
    assert "`tile_plain(grid: Grid) -> Grid`" in solve.last
    results = {
        r["task_id"]: r
        for r in map(json.loads, (tmp_path / "run" / "results.jsonl").read_text().splitlines())
    }
    step = results["00576224"]["attempts"][0]["steps"][0]
    assert step["verified"] is True, step
    assert results["00576224"]["solved"] is True
    assert_import_credited(memory_path)


def test_a_retry_resumed_between_passes_keeps_the_library(tmp_path: Path) -> None:
    """A passes run stopped before its retries and resumed: the retry's prompt lists the
    library and its program's import runs, as without the stop (the library is rebuilt from
    the recorded selection, since it is not saved between passes)."""
    memory_path = library_memory(tmp_path / "memory.json")
    retries: list[str] = []

    def model(stop: bool) -> Any:
        async def respond(messages: list[Any]) -> str:
            text = "\n".join(m.content for m in messages)
            if lm.IDENTITY.strip() not in text:  # a first try
                return lm.program_answer(lm.IDENTITY)
            if stop:
                raise asyncio.CancelledError  # as Ctrl-C cancels the run
            retries.append(text)
            return lm.program_answer(IMPORTING)

        return ModelClient(ScriptedProvider.from_script(respond, model="solver"))

    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        tasks=TASKS[:1],
        model="scripted:solver",
        attempts=1,
        feedback_rounds=1,
        schedule="passes",
        out=tmp_path / "run",
        memory=memory_path,
        selector="all",
        write_signal="train",
    )
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(run_benchmark(config, models={"solver": model(stop=True)}))
    assert retries == []
    asyncio.run(run_benchmark(config, models={"solver": model(stop=False)}))

    (retry,) = retries
    assert "`tile_mirrored(grid: Grid) -> Grid`" in retry
    (row,) = map(json.loads, (tmp_path / "run" / "results.jsonl").read_text().splitlines())
    first, second = row["attempts"][0]["steps"]
    assert first["verified"] is False and second["verified"] is True, second
    assert row["solved"] is True
