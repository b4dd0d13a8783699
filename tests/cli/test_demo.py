"""``arcmemo demo``: the loop on real ARC-AGI-1 tasks with the shipped scripted model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from arcmemo.cli.demo import model as demo_model
from arcmemo.core.records import TaskResult
from arcmemo.memory.schema import Memory
from arcmemo.run.directory.reader import RunDirectory

WRITER, USER = "00576224", "0c786b71"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    out = tmp_path_factory.mktemp("demo") / "demo"
    env = {**os.environ}
    env.pop("COLUMNS", None)  # as in a log file: the width is arcmemo's choice
    done = subprocess.run(
        [sys.executable, "-m", "arcmemo", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = (out / "run" / "results.jsonl").read_text().splitlines()
    results = {r.task_id: r for r in map(TaskResult.model_validate_json, lines)}
    return SimpleNamespace(
        out=out,
        stdout=done.stdout,
        stderr=done.stderr,
        results=results,
        memory=Memory.load(out / "memory.json"),
    )


@pytest.mark.slow
def test_a_concept_written_from_one_task_is_selected_used_and_credited_on_a_later_one(
    demo: SimpleNamespace,
) -> None:
    concept = demo.memory.find("mirror tiling")
    assert concept is not None and concept.kind == "routine"
    assert [p.name for p in concept.parameters] == ["tile", "repeats"]  # typed
    added = [h for h in demo.memory.history if h.target == concept.id and h.op == "add"]
    assert [h.task_id for h in added] == [WRITER]
    # written before the later task started: the snapshot after the writer's batch has it
    order = json.loads((demo.out / "run" / "task_order.json").read_text())
    assert order.index(WRITER) < order.index(USER)
    rundir = RunDirectory(demo.out / "run")
    after_writer = rundir.snapshot_memory(
        demo.out / "run" / "memory" / f"batch-{order.index(WRITER):04d}.delta.json"
    )
    assert after_writer.find("mirror tiling") is not None
    initial = Memory.load(demo.out / "run" / "memory" / "initial.json")
    assert initial.find("mirror tiling") is None
    later = demo.results[USER]
    assert later.selection is not None and "mirror tiling" in later.selection.selected
    (step,) = later.attempts[0].steps
    assert "mirror tiling" in step.concepts and step.verified and later.solved
    assert USER in concept.stats.helpful and concept.stats.selected_solved == 1


@pytest.mark.slow
def test_a_failed_check_goes_back_as_feedback_and_the_next_round_is_verified(
    demo: SimpleNamespace,
) -> None:
    first, second = demo.results[WRITER].attempts[0].steps
    assert (first.round, first.verified) == (0, False)
    assert (second.round, second.verified) == (1, True)
    assert not any(h.task_id == "bbb1b8b6" for h in demo.memory.history)


@pytest.mark.slow
def test_the_output_says_what_was_scripted_and_what_was_real_and_names_the_report(
    demo: SimpleNamespace,
) -> None:
    assert "SCRIPTED: the model" in demo.stdout and "REAL: the tasks" in demo.stdout
    assert f"selected: mirror tiling (written from {WRITER})" in demo.stdout
    report = demo.out / "run" / "report.html"
    assert f"report: {report}" in demo.stdout and report.stat().st_size > 0
    assert not demo.results["bbb1b8b6"].solved


def test_the_scripted_solver_gives_the_right_program_only_when_the_concept_is_shown() -> None:
    entry = demo_model.script()["answers"][USER]
    shown = demo_model.solve(entry, "...\n- concept: mirror tiling\n    - cue\n")
    hidden = demo_model.solve(entry, "...\n- other concepts: mirror tiling\n")
    assert "def mirror_tiling" in shown and "np.tile(grid, (2, 2))" in hidden


def test_the_demo_script_ships_inside_the_package() -> None:
    import arcmemo

    package = Path(arcmemo.__file__).parent
    assert demo_model.SCRIPT.is_relative_to(package) and demo_model.SCRIPT.is_file()


@pytest.mark.slow
def test_the_table_summary_and_call_log_count_the_same_requests(demo: SimpleNamespace) -> None:
    summary = json.loads((demo.out / "run" / "summary.json").read_text())
    requests = sum(stage["requests"] for stage in summary["stages"].values())
    samples = sum(stage["samples"] for stage in summary["stages"].values())
    logged = (demo.out / "run" / "calls.jsonl").read_text().splitlines()
    assert requests == len(logged) > 0
    row = re.search(
        r"model requests\s*│\s*([\d,]+) \(([\d,]+) samples; (\d+) replayed", demo.stderr
    )
    assert row is not None, demo.stderr[-3000:]
    assert (int(row[1]), int(row[2]), int(row[3])) == (requests, samples, 0)


@pytest.mark.slow
def test_off_a_terminal_no_line_of_the_final_table_is_longer_than_120(
    demo: SimpleNamespace,
) -> None:
    table = [line for line in demo.stderr.splitlines() if line[:1] in "┌│└┏┃┗├"]
    assert table and max(map(len, table)) <= 120


@pytest.mark.slow
@pytest.mark.parametrize("command", [["models"], ["memory", "stats", "MEMORY"]])
def test_off_a_terminal_models_and_memory_stats_fit_120_columns(
    demo: SimpleNamespace, command: list[str]
) -> None:
    args = [str(demo.out / "memory.json") if a == "MEMORY" else a for a in command]
    env = {**os.environ}
    env.pop("COLUMNS", None)
    done = subprocess.run(
        [sys.executable, "-m", "arcmemo", *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert max(map(len, done.stdout.splitlines())) <= 120
