"""``arcmemo abstract``: bootstrap a memory from a run or a folder of programs."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arcmemo.cli.main import cli
from arcmemo.memory.schema import Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import run_benchmark
from tests.support.scripted_models import loop_model as load_loop_model

LOOP = Path(__file__).resolve().parent.parent / "fixtures" / "loop"
PROGRAMS = LOOP / "programs"
LOOP_MODEL = f"scripted:{LOOP / 'loop_model.py'}"


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "300")  # rich must not wrap the messages under test


@pytest.fixture
def memory_path(tmp_path: Path) -> Path:
    path = tmp_path / "memory.json"
    load_seed("arc").save(path)
    return path


def abstract(*args: str) -> Result:
    return CliRunner().invoke(cli, ["abstract", *args])


def calls_of(memory_path: Path) -> list[dict[str, object]]:
    log = memory_path.with_name(memory_path.name + ".calls.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_from_programs_abstracts_verified_programs_and_skips_wrong_ones(
    memory_path: Path,
) -> None:
    result = abstract(
        "--from-programs", str(PROGRAMS), "--memory", str(memory_path), "--model", LOOP_MODEL
    )
    assert result.exit_code == 0, result.output
    assert "skipped 74dd1130: the program fails its train pairs" in result.output
    assert "2 verified solutions to abstract (ps)" in result.output
    assert "abstracted 2 solutions: 4 entries written, 0 with failures" in result.output
    memory = Memory.load(memory_path)
    assert set(memory.solutions) == {"67a3c6ac", "68b16354"}
    assert "74dd1130" not in memory.solutions
    mirror = memory.find("mirror the whole grid")
    assert mirror is not None
    assert mirror.provenance.sources == ["67a3c6ac", "68b16354"]
    assert mirror.provenance.authors == [LOOP_MODEL]
    reflect = memory.find("reflect grid")
    assert reflect is not None and reflect.provenance.sources == ["seed", "67a3c6ac", "68b16354"]
    log = memory_path.with_name("memory.json.abstraction.jsonl").read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in log] == ["67a3c6ac", "68b16354"]
    assert [c["stage"] for c in calls_of(memory_path)] == ["abstract"] * 4


def test_a_second_run_resumes_and_calls_nothing(memory_path: Path) -> None:
    args = ["--from-programs", str(PROGRAMS), "--memory", str(memory_path)]
    first = abstract(*args, "--model", LOOP_MODEL, "--no-cache")
    assert first.exit_code == 0, first.output
    assert len(calls_of(memory_path)) == 4
    before = memory_path.read_text()
    again = abstract(*args, "--model", LOOP_MODEL, "--no-cache")
    assert again.exit_code == 0, again.output
    assert "abstracted 0 solutions" in again.output
    assert len(calls_of(memory_path)) == 4  # no new model call
    assert memory_path.read_text() == before


def test_from_run_abstracts_the_runs_train_verified_solutions(
    tmp_path: Path, memory_path: Path
) -> None:
    lm = load_loop_model()
    corners = (
        "def transform(grid):\n    out = np.zeros_like(grid)\n"
        "    out[[0, 0, -1, -1], [0, -1, 0, -1]] = grid[[1, 1, 2, 2], [1, 2, 1, 2]]\n"
        "    return out\n"
    )
    solver = lm.LoopModel(
        answers={
            ("solve", "66e6c45b"): lm.program_answer(corners),
            ("solve", "bbb1b8b6"): lm.program_answer(lm.IDENTITY),
        },
        arc_ids=["66e6c45b", "bbb1b8b6"],
    )
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        tasks=["66e6c45b", "bbb1b8b6"],
        model="scripted:solver",
        attempts=1,
        out=tmp_path / "run",
    )
    client = ModelClient(ScriptedProvider.from_script(solver, model="solver"))
    asyncio.run(run_benchmark(config, solver=client))
    script = LOOP / "run_abstraction.yaml"
    result = abstract(
        "--from", str(tmp_path / "run"), "--memory", str(memory_path),
        "--model", f"scripted:{script}",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 verified solutions to abstract (ps)" in result.output
    memory = Memory.load(memory_path)
    assert set(memory.solutions) == {"66e6c45b"}
    assert memory.solutions["66e6c45b"].program.startswith("def transform(grid):")
    corners_concept = memory.find("move center to corners")
    assert corners_concept is not None
    assert corners_concept.provenance.sources == ["66e6c45b"]
    assert corners_concept.provenance.authors == [f"scripted:{script}"]


def test_malformed_answers_are_reported_and_recorded_not_fatal(
    tmp_path: Path, memory_path: Path
) -> None:
    programs = tmp_path / "programs"
    programs.mkdir()
    shutil.copy(PROGRAMS / "67a3c6ac.py", programs)
    script = LOOP / "broken_concepts.yaml"
    result = abstract(
        "--from-programs", str(programs), "--memory", str(memory_path),
        "--model", f"scripted:{script}",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "67a3c6ac: concepts failed: item 1: parameters: expected a list" in result.output
    assert "1 entries written, 1 with failures" in result.output
    (line,) = memory_path.with_name("memory.json.abstraction.jsonl").read_text().splitlines()
    (failure,) = json.loads(line)["failures"]
    assert failure["stage"] == "concepts"
    assert len(failure["raw"]) == 2 and "name: [unclosed" in failure["raw"][0]
    memory = Memory.load(memory_path)
    assert memory.find("mirror image") is not None  # the valid item of the last answer
    assert memory.find("mirror rows") is None


def test_exactly_one_source_is_required(memory_path: Path, tmp_path: Path) -> None:
    neither = abstract("--memory", str(memory_path), "--model", LOOP_MODEL)
    assert neither.exit_code == 2
    assert "give exactly one of --from RUN_DIR or --from-programs DIR" in neither.output
    both = abstract(
        "--from", str(tmp_path), "--from-programs", str(PROGRAMS),
        "--memory", str(memory_path), "--model", LOOP_MODEL,
    )  # fmt: skip
    assert both.exit_code == 2


def test_a_missing_memory_file_says_how_to_create_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    result = abstract(
        "--from-programs", str(PROGRAMS), "--memory", str(missing), "--model", LOOP_MODEL
    )
    assert result.exit_code == 1
    assert "does not exist; create it first with `arcmemo memory init" in result.output
    assert "Traceback" not in result.output
