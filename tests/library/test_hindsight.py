"""Hindsight programs: a failed program that runs feeds the library, never a solved count.

A scripted run's only attempt at an ARC task fails its train pairs with a program that
still returns a valid grid for every input; ``library build --from RUN --hindsight`` admits
its helper as a function marked hindsight (source ``hindsight:<task>``) whose recorded tests
pass, while the run's result, its table and every concept leave the task unsolved.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arcmemo.cli.main import cli
from arcmemo.core.records import PairCheck, Step
from arcmemo.library.hindsight import hindsight_pairs, valid_grid
from arcmemo.memory.store import load_memory
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.pipeline import run_benchmark

TASK = "66e6c45b"
MIRROR = """```python
import numpy as np

def mirror(grid):
    return np.fliplr(grid)

def transform(grid):
    return mirror(grid)
```"""


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "300"})


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hindsight") / "run"
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        tasks=[TASK],
        model="scripted:solver",
        attempts=1,
        feedback_rounds=0,
        out=out,
    )
    client = ModelClient(ScriptedProvider.from_script(lambda _: MIRROR, model="solver"))
    asyncio.run(run_benchmark(config, models={"solver": client, "aux": client}))
    return out


def test_a_failed_running_program_adds_hindsight_functions_only(
    failed_run: Path, tmp_path: Path
) -> None:
    memory_path = tmp_path / "memory.json"
    built = invoke("library", "build", "--from", str(failed_run), "--hindsight",
                   "--memory", str(memory_path))  # fmt: skip
    if "unavailable" in built.output:
        pytest.skip(built.output)
    assert built.exit_code == 0, built.output
    assert "1 hindsight programs of 1 tasks without a verified one" in built.output
    memory = load_memory(memory_path)
    (function,) = [f for c in memory.concepts for f in c.functions]
    assert function.name == "mirror" and function.hindsight == [TASK]
    assert function.sources == [f"hindsight:{TASK}"] and function.only_hindsight
    assert function.tests
    # no concept claims the original task
    assert all(TASK not in c.provenance.sources for c in memory.concepts)
    tested = invoke("library", "test", str(memory_path))
    assert tested.exit_code == 0 and "1/1 functions pass all theirs" in tested.output
    stats = invoke("library", "stats", str(memory_path))
    assert "hindsight only       1" in stats.output
    shown = invoke("memory", "show", str(memory_path))
    assert f"hindsight of {TASK}" in shown.output
    # the task stays unsolved: the run's result and its table
    (result,) = RunDirectory(failed_run).ordered_results()
    assert result.solved is False
    table = invoke("table", str(failed_run))
    assert table.exit_code == 0, table.output
    assert "| 0 | run | 0.00 | 0.00 |" in table.output


def test_without_hindsight_a_failed_program_adds_nothing(failed_run: Path, tmp_path: Path) -> None:
    memory_path = tmp_path / "memory.json"
    built = invoke("library", "build", "--from", str(failed_run), "--memory", str(memory_path))
    if "unavailable" in built.output:
        pytest.skip(built.output)
    assert built.exit_code == 0, built.output
    assert "0 library functions" in built.output
    assert invoke("library", "build", "--hindsight", "--memory", str(memory_path)).exit_code == 2


def test_only_a_program_with_a_valid_grid_for_every_input_defines_a_hindsight_task() -> None:
    grid = [[1, 2], [3, 4]]

    def step(outputs: list[object], prediction: object, verified: bool = False) -> Step:
        checks = [
            PairCheck(index=i, correct=False, output=o, error=None if o else "boom")
            for i, o in enumerate(outputs)
        ]
        return Step(round=0, completion="c", candidate="prog", checks=checks,
                    verified=verified, prediction=prediction)  # fmt: skip

    pairs = hindsight_pairs(step([grid], [grid]), [[[0]]], [[[5]]])
    assert pairs == [([[0]], grid), ([[5]], grid)]
    assert hindsight_pairs(step([grid], [grid], verified=True), [[[0]]], [[[5]]]) is None
    assert hindsight_pairs(step([None], [grid]), [[[0]]], [[[5]]]) is None  # an error
    assert hindsight_pairs(step([grid], [None]), [[[0]]], [[[5]]]) is None  # no test output
    assert hindsight_pairs(step([grid], [[[10]]]), [[[0]]], [[[5]]]) is None  # not a color
    assert not valid_grid([[1, 2], [3]]) and not valid_grid([]) and not valid_grid([[True]])


def test_hindsight_tasks_are_saved_as_helper_puzzles_of_their_concept(
    failed_run: Path, tmp_path: Path
) -> None:
    import json

    memory_path, puzzles = tmp_path / "memory.json", tmp_path / "puzzles"
    built = invoke("library", "build", "--from", str(failed_run), "--hindsight",
                   "--memory", str(memory_path), "--puzzles", str(puzzles))  # fmt: skip
    if "unavailable" in built.output:
        pytest.skip(built.output)
    assert built.exit_code == 0, built.output
    assert "1 hindsight puzzles written to" in built.output
    memory = load_memory(memory_path)
    (concept,) = [c for c in memory.concepts if c.functions]
    (task_file,) = puzzles.glob("*.json")
    assert task_file.stem == f"{concept.id}-hindsight-{TASK}"
    meta = json.loads((puzzles / "meta" / task_file.name).read_text())
    assert meta["origin"] == "hindsight" and meta["hindsight_of"] == TASK
    assert meta["exercised_by"] == "mirror" and meta["concept_id"] == concept.id
    assert (puzzles / "programs" / f"{task_file.stem}.py").read_text() == meta["generator_source"]
    # the puzzle's expected outputs are the failed program's own: mirrored inputs
    content = json.loads(task_file.read_text())
    first = content["train"][0]
    assert first["output"] == [row[::-1] for row in first["input"]]
    shown = invoke("puzzles", "show", str(task_file))
    assert shown.exit_code == 0, shown.output
    assert f"origin hindsight of {TASK}" in shown.output and "calling mirror" in shown.output
    verified = invoke("puzzles", "verify", str(puzzles))
    assert verified.exit_code == 0, verified.output
    assert "1/1 puzzles pass every check" in verified.output
    # a file whose outputs are not the program's own fails the re-check
    content["train"][0]["output"] = first["input"]
    task_file.write_text(json.dumps(content))
    tampered = invoke("puzzles", "verify", str(puzzles))
    assert tampered.exit_code == 1
    assert "pair 1: the program's output differs from the file's" in tampered.output
    # the original task stays unsolved; the puzzles' folder is apart from the run
    (result,) = RunDirectory(failed_run).ordered_results()
    assert result.solved is False
    assert invoke("library", "build", "--from", str(failed_run), "--puzzles", str(puzzles),
                  "--memory", str(memory_path)).exit_code == 2  # fmt: skip
