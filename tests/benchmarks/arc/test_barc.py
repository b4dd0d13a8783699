"""BARC seeds: conversion (library, entry point, [x, y] grids, labels) and verified import."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from arcmemo.benchmarks import BENCHMARKS
from arcmemo.benchmarks.arc.barc import (
    BarcSeedError,
    convert_seed,
    import_barc,
    load_library,
    seeds_folder,
    strip_concept_labels,
    verify_with_benchmark,
)
from arcmemo.cli.main import cli
from arcmemo.core.inlined_library import without_library
from tests.support.barc import FLIP, TILE, write_checkout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return write_checkout(tmp_path / "BARC")


def _run(source: str, grid: list[list[int]]) -> list[list[int]]:
    namespace: dict[str, object] = {}
    exec(compile(source, "<seed>", "exec"), namespace)
    return np.asarray(namespace["transform"](np.array(grid))).tolist()  # type: ignore[operator]


def test_concept_labels_are_removed_entirely_and_the_description_kept() -> None:
    for text in (FLIP, TILE):
        stripped = strip_concept_labels(text)
        assert "concepts" not in stripped and "SECRET" not in stripped
        assert "# description:" in stripped
    text = "# concepts:\n# a\n# b\n# description:\n# keep me\ncode = 1\n"
    assert strip_concept_labels(text) == "# description:\n# keep me\ncode = 1\n"


def test_a_seed_becomes_a_transform_program(checkout: Path) -> None:
    library = load_library(checkout / "seeds" / "common.py")
    seed = convert_seed(FLIP, library, task_id="68b16354")
    source = seed.source
    assert "from common import" not in source and "generate_input" not in source
    assert "remove below this point" not in source and "__main__" not in source
    assert "def transform_xy(input_grid):" in source and "def main" not in source
    assert '# "main" in a string or comment is not renamed; neither is main_axis' in source
    assert "main_axis = 1" in source
    assert seed.description == "In the input you will see a grid of colors. Turn it upside down."
    # [x, y] indexing: flipping BARC's second axis turns the ARC grid upside down.
    assert _run(source, [[1, 2], [3, 4]]) == [[3, 4], [1, 2]]


def test_only_the_library_definitions_a_seed_needs_are_inlined(checkout: Path) -> None:
    library = load_library(checkout / "seeds" / "common.py")
    seed = convert_seed(TILE, library, task_id="a416b8f3")
    assert seed.library_names == ("_stack", "repeat_along_x")
    assert "def unused_helper" not in seed.source and "class Color" not in seed.source
    assert _run(seed.source, [[1, 2], [3, 4]]) == [[1, 2, 1, 2], [3, 4, 3, 4]]
    shown = without_library(seed.source)
    assert "def _stack" not in shown and "def transform_xy" in shown
    assert "# (definitions from BARC common.py left out here: _stack, repeat_along_x)" in shown


def test_unconvertible_seeds_say_why(checkout: Path) -> None:
    library = load_library(checkout / "seeds" / "common.py")
    with pytest.raises(BarcSeedError, match="not valid Python"):
        convert_seed("def main(:\n", library, task_id="x")
    with pytest.raises(BarcSeedError, match="defines no main"):
        convert_seed("def solve(grid):\n    return grid\n", library, task_id="x")
    with pytest.raises(BarcSeedError, match="no BARC seeds here"):
        seeds_folder(checkout / "seeds" / "ConceptARC")


def test_import_verifies_in_the_sandbox_and_reports_every_file_not_used(
    checkout: Path, tmp_path: Path
) -> None:
    out = tmp_path / "programs"
    bench = BENCHMARKS.create("arc-agi-1")
    try:
        report = import_barc(checkout, out, verify=verify_with_benchmark(bench))
    finally:
        bench.close()
    assert report.imported == ["68b16354", "a416b8f3"]
    assert sorted(p.name for p in out.iterdir()) == ["68b16354.py", "a416b8f3.py"]
    reasons = {item.file: item.reason for item in report.not_used}
    assert reasons == {
        "0000000f.py": "0000000f is not an ARC-AGI-1 task",
        "3c9b0459.py": "cannot convert: not valid Python ('(' was never closed, line 1)",
        "6150a2bd.py": "fails train pair 1: the output differs from the expected one",
        "ConceptARC/": "a folder, not a seed",
        "a416b8f3_Kevin.py": "its name is not a task id (an alternative solution of "
        "a416b8f3; a416b8f3.py is the seed)",
        "common.py": "the helper library, inlined into each seed that uses it",
        "template.py": "BARC's template for writing a new seed",
        "notes.txt": "not a Python file",
    }
    # The written programs are what `abstract --from-programs` checks again.
    bench = BENCHMARKS.create("arc-agi-1")
    try:
        (task,) = bench.find_tasks(["68b16354"])
        check = bench.check(task, f"```python\n{(out / '68b16354.py').read_text()}```")
    finally:
        bench.close()
    assert check.verified


def test_without_the_transposition_the_seed_would_fail(checkout: Path) -> None:
    library = load_library(checkout / "seeds" / "common.py")
    source = convert_seed(FLIP, library, task_id="68b16354").source
    untransposed = source.replace("np.asarray(grid).T)).T", "np.asarray(grid)))")
    assert _run(untransposed, [[1, 2], [3, 4]]) == [[2, 1], [4, 3]]  # left-right: wrong


def test_cli_import_barc_writes_programs_and_the_report(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "seeds-out"
    result = CliRunner().invoke(cli, ["seeds", "import-barc", str(checkout), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"imported 2 seed programs into {out} (each passes its task's train pairs)" in (
        result.output
    )
    assert "not used: 6150a2bd.py: fails train pair 1" in result.output
    report = json.loads((out / "import-report.json").read_text())
    assert report["imported"] == ["68b16354", "a416b8f3"] and report["verified"] is True
    missing = CliRunner().invoke(
        cli, ["seeds", "import-barc", str(checkout / "seeds" / "ConceptARC"), "--out", str(out)]
    )
    assert missing.exit_code == 1 and "no BARC seeds here" in missing.output
