"""Run directories and memories written by an older release (``tests/fixtures/legacy/``,
recorded with its own code, never edited) still load, resume and report."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arcmemo.analysis.report import load_run
from arcmemo.cli.main import cli
from arcmemo.memory.schema import Memory

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LEGACY = FIXTURES / "legacy" / "6eae7ae"
ROOT = Path(__file__).resolve().parent.parent
ARC_TASKS = ["66e6c45b", "00576224", "68b67ca3", "e345f17b", "bbb1b8b6", "ca8de6ea"]
ARC = str(FIXTURES / "arc" / "eval")
AIME = str(FIXTURES / "aime" / "problems.jsonl")


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("name", ["memory.json", "memory-online.json"])
def test_its_memories_load_validate_and_show(name: str) -> None:
    memory = Memory.load(LEGACY / name)
    assert memory.domain == "arc" and memory.concepts
    validated = _invoke("memory", "validate", str(LEGACY / name))
    assert validated.startswith(f"ok: {len(memory.concepts)} concepts")
    shown = _invoke("memory", "show", str(LEGACY / name), "--view", "full")
    assert memory.concepts[0].name in shown
    assert str(len(memory.concepts)) in _invoke("memory", "stats", str(LEGACY / name))


def test_the_online_run_wrote_what_it_learned() -> None:
    before, after = Memory.load(LEGACY / "memory.json"), Memory.load(LEGACY / "memory-online.json")
    names = {c.name for c in after.concepts} - {c.name for c in before.concepts}
    assert "corner copy" in names  # abstracted during the run, in the memory it wrote


@pytest.mark.parametrize(("run", "data", "tasks"), [
    ("arc-online", ARC, ARC_TASKS),
    ("aime", AIME, ["toy-1", "toy-2", "toy-3"]),
])  # fmt: skip
def test_its_runs_load_and_report(run: str, data: str, tasks: list[str], tmp_path: Path) -> None:
    loaded = load_run(LEGACY / run, data=data)
    assert sorted(r.task_id for r in loaded.results) == sorted(tasks)
    summary = json.loads((LEGACY / run / "summary.json").read_text())
    assert sum(r.solved for r in loaded.results) == summary["n_solved"] > 0
    page = tmp_path / "report.html"
    _invoke("report", str(LEGACY / run), "--data", data, "--out", str(page))
    text = page.read_text(encoding="utf-8")
    assert all(task in text for task in tasks)
    table = _invoke("table", str(LEGACY / run))
    assert run in table


@pytest.mark.slow
def test_the_interrupted_run_resumes_without_asking_the_model_again(tmp_path: Path) -> None:
    """The killed run continues: the requests answered before the kill come from its cache,
    only the one in flight is asked again, and every task ends with a result."""
    for name in ("arc-interrupted", "cache"):
        shutil.copytree(LEGACY / name, tmp_path / name)
    scripts, inputs = tmp_path / "inputs" / "scripts", tmp_path / "inputs" / "arc"
    scripts.mkdir(parents=True)
    shutil.copytree(ARC, inputs / "eval")  # the model finds its tasks beside itself
    for script in ("recorded_runs.py", "arc_plan.py"):
        shutil.copy(FIXTURES / "scripts" / script, scripts / script)
    log = tmp_path / "calls.txt"
    args = [
        "run", "arc-agi-1", "--data", "inputs/arc/eval", "--tasks", ",".join(ARC_TASKS),
        "--model", "scripted:inputs/scripts/recorded_runs.py", "--concurrency", "1",
        "--cache-dir", "cache", "--attempts", "2", "--feedback-rounds", "1",
        "--out", "arc-interrupted", "--force-resume",  # the data folder moved
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RECORDED_RUNS_CALL_LOG": str(log)}
    done = subprocess.run(
        [sys.executable, "-m", "arcmemo", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    before = (LEGACY / "arc-interrupted-calls.txt").read_text().split()
    in_flight = before[-1]  # the request the kill interrupted (its two answers)
    asked = set(log.read_text().split())
    assert asked & set(before) == {in_flight}
    rows = [json.loads(line) for line in (tmp_path / "arc-interrupted" / "results.jsonl").open()]
    assert sorted(r["task_id"] for r in rows) == sorted(ARC_TASKS)
