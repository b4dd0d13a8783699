"""``arcmemo puzzles generate | verify | show`` end to end with scripted models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli
from arcmemo.memory.seeds import load_seed

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "puzzles" / "samples"
RESPOND = REPO / "puzzles" / "handwritten" / "respond.py"


@pytest.fixture
def memory_file(tmp_path: Path) -> Path:
    path = tmp_path / "memory.json"
    load_seed("arc").save(path)
    return path


def invoke(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.output


def generate(memory_file: Path, out: Path, concepts: str, model: str, *extra: str) -> str:
    code, output = invoke(
        "puzzles",
        "generate",
        "--memory",
        memory_file,
        "--concepts",
        concepts,
        "--model",
        model,
        "--out",
        out,
        *extra,
    )
    assert code == 0, output
    return output


def test_generate_writes_verified_puzzles_that_verify_and_show(
    memory_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "puzzles"
    output = generate(
        memory_file,
        out,
        "reflect grid,Draw Lines",
        f"scripted:{RESPOND}",
        "--per-concept",
        "2",
        "--seed",
        "5",
    )
    assert "reflect-grid: 2/2 puzzles after 1 attempt(s)" in output
    assert "wrote 4 puzzles" in output
    assert sorted(p.stem for p in out.glob("*.json")) == [
        "draw-line-5",
        "draw-line-6",
        "reflect-grid-5",
        "reflect-grid-6",
    ]
    assert (out / "logs" / "calls.jsonl").is_file()
    code, output = invoke("puzzles", "verify", out)
    assert code == 0, output
    assert "4/4 puzzles pass every check" in output
    assert "[implements_concept] passed: property tests collinear" in output
    assert "[concept_is_crux] passed: 7 trivial baselines" in output
    meta = json.loads((out / "meta" / "reflect-grid-5.json").read_text())
    handwritten = {p.stem for p in RESPOND.parent.glob("*-*.py")}
    assert {r["concept_id"] for r in meta["references"]} == handwritten - {"reflect-grid"}
    code, output = invoke("puzzles", "show", out / "reflect-grid-5")
    assert "[implements_concept] passed: property tests involution, same_colors" in output
    assert code == 0, output
    task = json.loads((out / "reflect-grid-5.json").read_text())
    first_row = " ".join(str(cell) for cell in task["train"][0]["input"][0])
    assert "train 4" in output and "test 1" in output and first_row in output
    assert "concept reflect grid (reflect-grid" in output and "seed 5" in output


def test_generate_records_failures_after_the_repair_round(
    memory_file: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.json"
    bad = "```python\ndef concept_routine(grid, axis):\n    return grid\n```"
    script.write_text(json.dumps([bad, bad]))
    out = tmp_path / "puzzles"
    code, output = invoke(
        "puzzles",
        "generate",
        "--memory",
        memory_file,
        "--concepts",
        "reflect grid",
        "--model",
        f"scripted:{script}",
        "--out",
        out,
    )
    assert code == 1 and "no puzzle passed its checks" in output
    assert "reflect-grid: 0/1 puzzles after 2 attempt(s)" in output
    record = json.loads((out / "failures" / "reflect-grid.json").read_text())
    assert len(record["attempts"]) == 2
    assert "does not define generate_input(), transform()" in record["attempts"][1]["error"]


def test_generate_rejects_a_cheat_whose_rule_is_another_concept(
    memory_file: Path, tmp_path: Path
) -> None:
    cheat = (REPO / "tests/benchmarks/arc/puzzles/cheats/flip_one_pixel.py").read_text()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([f"```python\n{cheat}```"]))
    out = tmp_path / "puzzles"
    code, output = invoke(
        "puzzles",
        "generate",
        "--memory",
        memory_file,
        "--concepts",
        "recolor object",
        "--model",
        f"scripted:{script}",
        "--repairs",
        "0",
        "--out",
        out,
    )
    assert code == 1 and "concept_is_crux" in output
    record = json.loads((out / "failures" / "recolor-object.json").read_text())
    (report,) = record["attempts"][0]["reports"]
    crux = next(c for c in report["checks"] if c["name"] == "concept_is_crux")
    assert "'reflect grid (variant 2)' alone reproduces the outputs" in crux["details"][0]


def test_generate_rejects_unknown_concepts_and_missing_memory(
    memory_file: Path, tmp_path: Path
) -> None:
    args = ["--model", f"scripted:{RESPOND}", "--out", tmp_path / "out"]
    code, output = invoke(
        "puzzles", "generate", "--memory", memory_file, "--concepts", "teleport", *args
    )
    assert code == 1 and "unknown concept(s): teleport" in output
    code, output = invoke(
        "puzzles", "generate", "--memory", tmp_path / "none.json", "--concepts", "x", *args
    )
    assert code == 1 and "none.json" in output and "does not exist" in output


def test_the_committed_samples_pass_verify() -> None:
    code, output = invoke("puzzles", "verify", SAMPLES)
    assert code == 0, output
    count = len(list(SAMPLES.glob("*.json")))
    assert f"{count}/{count} puzzles pass every check" in output


def test_verify_exits_1_and_says_why_on_a_broken_puzzle(tmp_path: Path) -> None:
    folder = tmp_path / "samples"
    folder.mkdir()
    for sub in ("meta", "programs"):
        (folder / sub).mkdir()
    for name in ("reflect-grid-0", "draw-line-0"):
        (folder / f"{name}.json").write_text((SAMPLES / f"{name}.json").read_text())
        (folder / "meta" / f"{name}.json").write_text(
            (SAMPLES / "meta" / f"{name}.json").read_text()
        )
    meta_path = folder / "meta" / "draw-line-0.json"
    meta = json.loads(meta_path.read_text())
    meta["generator_source"] = meta["generator_source"].replace(
        "out = concept_routine(", "concept_routine("
    )
    meta_path.write_text(json.dumps(meta))
    code, output = invoke("puzzles", "verify", folder)
    assert code == 1
    assert "ok   reflect-grid-0" in output
    assert "FAIL draw-line-0: failed: well_formed, exercises_concept" in output
    assert "[exercises_concept]" in output and "not load-bearing" in output
    assert "1/2 puzzles pass every check" in output


def test_verify_and_show_errors_name_the_path(tmp_path: Path) -> None:
    code, output = invoke("puzzles", "verify", tmp_path)
    assert code == 1 and "no <id>.json puzzle files" in output
    code, output = invoke("puzzles", "show", tmp_path / "nope")
    assert code == 1 and "nope: no such puzzle" in output
