"""An online ARC run whose programs import library functions: the prompt shows them, the
default sandbox runs the import, and credit by import is recorded in the grown memory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from arcmemo.memory.schema import Concept, LibraryFunction, Memory
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import run_benchmark
from tests.fixtures.loop.load import loop_model

lm = loop_model()

TILE = LibraryFunction(
    name="tile_mirrored",
    source="import numpy as np\n\n\ndef tile_mirrored(grid):\n"
    '    """Three by three tiles of the grid, the middle row of tiles mirrored."""\n'
    "    row = np.hstack([grid] * 3)\n"
    "    flipped = np.hstack([grid[:, ::-1]] * 3)\n"
    "    return np.vstack([row, flipped, row])\n",
    signature="(grid: Grid) -> Grid",
    docstring="Three by three tiles of the grid, the middle row of tiles mirrored.",
    sources=["earlier-task"],
)
# Its words are all in the importing program, but its code is not what was imported.
DECOY = LibraryFunction(
    name="tile_plain",
    source="import numpy as np\n\n\ndef tile_plain(grid):\n    return np.tile(grid, (3, 3))\n",
    signature="(grid: Grid) -> Grid",
    sources=["earlier-task"],
)
IMPORTING = """
from arcmemo_library import tile_mirrored

def transform(grid):
    return tile_mirrored(grid)
"""


TASKS = ["00576224", "68b67ca3"]


def library_memory(path: Path) -> Path:
    """A memory whose two concepts carry the imported function and the decoy."""
    Memory(
        domain="arc",
        concepts=[
            Concept(name="mirrored tiles", kind="routine", functions=[TILE]),
            Concept(name="tile transform", kind="routine", functions=[DECOY]),
        ],
    ).save(path)
    return path


def importing_model() -> Any:
    """The scripted model: the first task's program imports ``tile_mirrored``."""
    return lm.LoopModel(
        answers={
            ("solve", "00576224"): lm.program_answer(IMPORTING),
            ("solve", "68b67ca3"): lm.program_answer(lm.IDENTITY),
            ("concepts", "00576224"): lm.yaml_block(
                "- name: mirrored tiles\n  kind: routine\n  description: tile and mirror"
            ),
        },
        arc_ids=TASKS,
    )


def assert_import_credited(memory_path: Path) -> None:
    """The grown memory credits the imported function's concept, not the decoy's."""
    memory = Memory.load(memory_path)
    mirrored, decoy = memory.find("mirrored tiles"), memory.find("tile transform")
    assert mirrored is not None and decoy is not None
    assert mirrored.functions[0].imported_by == ["00576224"]
    assert "00576224" in mirrored.stats.helpful
    assert decoy.functions[0].imported_by == [] and "00576224" in decoy.stats.unused


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
    asyncio.run(run_benchmark(config, solver=client))

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
        asyncio.run(run_benchmark(config, solver=model(stop=True)))
    assert retries == []
    asyncio.run(run_benchmark(config, solver=model(stop=False)))

    (retry,) = retries
    assert "`tile_mirrored(grid: Grid) -> Grid`" in retry
    (row,) = map(json.loads, (tmp_path / "run" / "results.jsonl").read_text().splitlines())
    first, second = row["attempts"][0]["steps"]
    assert first["verified"] is False and second["verified"] is True, second
    assert row["solved"] is True
