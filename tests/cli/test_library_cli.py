"""``arcmemo library build/stats/test/refactor`` and ``memory show`` of functions, through
click's CliRunner on the fixture programs of ``tests/fixtures/library``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arcmemo.cli.main import cli
from arcmemo.memory.store import load_memory, save_memory
from tests.support.library_programs import PROGRAMS, TASKS


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "300"})


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    memory = tmp_path_factory.mktemp("library") / "memory.json"
    result = invoke(
        "library",
        "build",
        "--from-programs",
        str(PROGRAMS),
        "--memory",
        str(memory),
        "--data",
        str(TASKS),
    )
    if "unavailable" in result.output:
        pytest.skip(result.output)
    assert result.exit_code == 0, result.output
    assert "6 library functions (6 with tests" in result.output
    assert "dropped aaaa0003:shifted" in result.output
    report = json.loads(Path(f"{memory}.library-build.json").read_text(encoding="utf-8"))
    assert report["functions"] == 6
    return memory


def test_stats_and_test_on_a_built_library(built: Path) -> None:
    stats = invoke("library", "stats", str(built))
    assert stats.exit_code == 0, stats.output
    assert "functions            6 (6 with tests)" in stats.output
    counted = json.loads(invoke("library", "stats", str(built), "--json").output)
    assert counted["functions"] == 6
    tested = invoke("library", "test", str(built))
    assert tested.exit_code == 0, tested.output
    assert "6/6 functions pass all theirs" in tested.output


def test_a_failing_recorded_test_fails_the_command(built: Path, tmp_path: Path) -> None:
    memory = load_memory(built)
    function = next(f for c in memory.concepts for f in c.functions if f.name == "crop")
    function.tests[0].result = [[9]]
    broken = tmp_path / "broken.json"
    save_memory(memory, broken)
    result = invoke("library", "test", str(broken))
    assert result.exit_code == 1
    assert "FAIL crop: test 0" in result.output


def test_refactor_writes_passing_programs_and_the_report(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "refactored"
    result = invoke(
        "library",
        "refactor",
        "--from-programs",
        str(PROGRAMS),
        "--memory",
        str(built),
        "--out",
        str(out),
        "--data",
        str(TASKS),
    )
    assert result.exit_code == 0, result.output
    assert "3/3 programs pass (3 import library functions)" in result.output
    assert "from arcmemo_library import" in (out / "aaaa0001.py").read_text(encoding="utf-8")
    report = json.loads((out / "refactor-report.json").read_text(encoding="utf-8"))
    assert len(report["programs"]) == 3


def test_memory_show_lists_functions_and_a_chosen_concept_s_code(built: Path) -> None:
    whole = invoke("memory", "show", str(built))
    assert whole.exit_code == 0, whole.output
    assert "function crop(grid, background=Color.BLACK)" in whole.output
    assert "xs, ys = np.nonzero" not in whole.output
    chosen = invoke("memory", "show", str(built), "--concept", "crop")
    assert "xs, ys = np.nonzero(grid != background)" in chosen.output


def test_bad_input_is_a_one_line_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke(
        "library", "build", "--from-programs", str(empty), "--memory", str(tmp_path / "m.json")
    )
    assert result.exit_code == 1
    assert (
        result.output.strip().splitlines()[-1] == f"Error: {empty}: no <task id>.py program files"
    )
    assert not (tmp_path / "m.json").exists()
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    result = invoke("library", "stats", str(bad))
    assert result.exit_code == 1 and "bad.json" in result.output
