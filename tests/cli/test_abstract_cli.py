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
    asyncio.run(run_benchmark(config, models={"solver": client}))
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


CORNERS = (
    "def transform(grid):\n    out = np.zeros_like(grid)\n"
    "    out[[0, 0, -1, -1], [0, -1, 0, -1]] = grid[[1, 1, 2, 2], [1, 2, 1, 2]]\n"
    "    return out\n"
)
MIRROR = "def transform(grid):\n    return np.flipud(grid)  # the grid upside down\n"
CONTRASTER = '''"""Scripted abstraction model: the fixture's answers and a contrast answer;
every prompt is appended to PROMPTS (one JSON string a line)."""
import json

import yaml

PROMPTS = {prompts!r}
ANSWERS = yaml.safe_load(open({fixture!r}, encoding="utf-8"))
CONTRAST = """```yaml
concepts:
  - name: corners from center
    kind: routine
    routine_subtype: grid manipulation
    description: copy a centered block's cells to the four corners
    parameters:
      - {{name: grid, type: grid}}
    output_type: grid
pitfall:
  situation: the output has the input's size with only the corners colored
  suggestion: look where the colored cells move before flipping the whole grid
  guards: corners from center
```"""


def respond(messages):
    text = messages[0].content
    with open(PROMPTS, "a", encoding="utf-8") as log:
        log.write(json.dumps(text) + "\\n")
    if "one passed the check, one failed it" in text:
        return CONTRAST
    return next(answer for pattern, answer in ANSWERS.items() if pattern in text)
'''


def two_attempt_run(tmp_path: Path, solves: list[str]) -> Path:
    """A finished (offline) ARC run of 66e6c45b with one attempt per program of ``solves``."""
    lm = load_loop_model()
    answers = [lm.program_answer(source) for source in solves]
    solver = lm.LoopModel(answers={("solve", "66e6c45b"): answers}, arc_ids=["66e6c45b"])
    config = RunConfig(
        benchmark="arc-agi-1", split="evaluation", tasks=["66e6c45b"], model="scripted:solver",
        attempts=len(solves), feedback_rounds=0, out=tmp_path / "run",
    )  # fmt: skip
    client = ModelClient(ScriptedProvider.from_script(solver, model="solver"))
    asyncio.run(run_benchmark(config, models={"solver": client}))
    return tmp_path / "run"


def contraster(tmp_path: Path) -> tuple[str, Path]:
    """The scripted abstraction model's ``--model`` value and its prompt log."""
    prompts = tmp_path / "prompts.jsonl"
    script = tmp_path / "contraster.py"
    fixture = str(LOOP / "run_abstraction.yaml")
    script.write_text(CONTRASTER.format(prompts=str(prompts), fixture=fixture), encoding="utf-8")
    return f"scripted:{script}", prompts


def prompts_of(log: Path) -> list[str]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_from_run_contrasts_a_passing_and_a_failing_attempt_and_resumes(
    tmp_path: Path, memory_path: Path
) -> None:
    run = two_attempt_run(tmp_path, [CORNERS, MIRROR])
    model, log = contraster(tmp_path)
    args = ["--from", str(run), "--memory", str(memory_path), "--model", model, "--no-cache"]
    plain = abstract(*args)  # without the option: no contrast, as online
    assert plain.exit_code == 0, plain.output
    assert not any("one passed the check" in p for p in prompts_of(log))
    before = len(prompts_of(log))
    result = abstract(*args, "--memory-format-arg", "contrast=true")
    assert result.exit_code == 0, result.output
    assert "1 verified solutions to abstract (ps), 1 with a passing and a failing" in result.output
    assert "abstracted 0 solutions and 1 contrasts" in result.output
    (prompt,) = prompts_of(log)[before:]  # the solution was written: only the contrast is asked
    assert "out[[0, 0, -1, -1], [0, -1, 0, -1]]" in prompt and "np.flipud(grid)" in prompt
    assert "example 1: wrong output" in prompt  # the failing one's feedback
    assert prompt.index("## The passing attempt") < prompt.index("## The failing attempt")
    memory = Memory.load(memory_path)
    concept = memory.find("corners from center")
    assert concept is not None and concept.provenance.sources == ["66e6c45b"]
    (pitfall,) = memory.lessons
    assert pitfall.kind == "pitfall" and pitfall.guards == "corners from center"
    assert pitfall.provenance.sources == ["66e6c45b"]
    again = abstract(*args, "--memory-format-arg", "contrast=true")
    assert again.exit_code == 0, again.output
    assert "abstracted 0 solutions and 0 contrasts" in again.output
    assert len(prompts_of(log)) == before + 1  # resumed: nothing asked twice


def test_from_run_sends_no_contrast_when_both_attempts_pass(
    tmp_path: Path, memory_path: Path
) -> None:
    run = two_attempt_run(tmp_path, [CORNERS, CORNERS])
    model, log = contraster(tmp_path)
    result = abstract(
        "--from", str(run), "--memory", str(memory_path), "--model", model,
        "--memory-format-arg", "contrast=true",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "abstracted 1 solutions:" in result.output
    assert prompts_of(log) and not any("one passed the check" in p for p in prompts_of(log))
    assert Memory.load(memory_path).lessons == []


def test_from_run_refuses_a_test_label_contrast_unless_named(
    tmp_path: Path, memory_path: Path
) -> None:
    run = two_attempt_run(tmp_path, [CORNERS, MIRROR])
    model, log = contraster(tmp_path)
    args = ["--from", str(run), "--memory", str(memory_path), "--model", model]
    args += ["--write-signal", "oracle", "--memory-format-arg", "contrast=true"]
    refused = abstract(*args)
    assert refused.exit_code == 1
    assert "contrast_signal=oracle" in refused.output and "Traceback" not in refused.output
    assert prompts_of(log) == []  # refused before any call
    named = abstract(*args, "--memory-format-arg", "contrast_signal=oracle")
    assert named.exit_code == 0, named.output
    assert "abstracted 1 solutions and 1 contrasts" in named.output
    assert sum("one passed the check" in p for p in prompts_of(log)) == 1


def test_contrast_from_programs_warns_that_nothing_is_contrasted(memory_path: Path) -> None:
    result = abstract(
        "--from-programs", str(PROGRAMS), "--memory", str(memory_path), "--model", LOOP_MODEL,
        "--memory-format-arg", "contrast=true",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "a folder of programs holds no failing attempt" in result.output
