"""``arcmemo memory`` commands: happy paths and error exits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from arcmemo import Concept, Memory
from arcmemo.cli.main import cli
from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.render import VIEWS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "memory"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["memory", *args])


def assert_clean_error(result: Result, code: int) -> None:
    """A failure exits with ``code`` through click, never with a Python traceback."""
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output


@pytest.fixture
def arc_file(tmp_path: Path) -> Path:
    path = tmp_path / "arc.json"
    result = run("init", "--domain", "arc", "--out", str(path))
    assert result.exit_code == 0, result.output
    return path


def test_init_writes_a_valid_seed_memory(arc_file: Path) -> None:
    memory = Memory.load(arc_file)
    assert memory.domain == "arc" and len(memory.concepts) >= 15


def test_init_is_reproducible(tmp_path: Path, arc_file: Path) -> None:
    again = tmp_path / "again.json"
    assert run("init", "--domain", "arc", "--out", str(again)).exit_code == 0
    assert again.read_bytes() == arc_file.read_bytes()


def test_init_refuses_to_overwrite_without_force(arc_file: Path) -> None:
    arc_file.write_text("keep me")
    result = run("init", "--domain", "aime", "--out", str(arc_file))
    assert_clean_error(result, 1)
    assert "already exists; pass --force" in result.output
    assert arc_file.read_text() == "keep me"
    forced = run("init", "--domain", "aime", "--out", str(arc_file), "--force")
    assert forced.exit_code == 0, forced.output
    assert Memory.load(arc_file).domain == "aime"


def test_init_rejects_unknown_domain(tmp_path: Path) -> None:
    result = run("init", "--domain", "chess", "--out", str(tmp_path / "x.json"))
    assert_clean_error(result, 2)
    assert "'chess' has no seed ontology" in result.output
    assert not (tmp_path / "x.json").exists()


def test_validate_ok(arc_file: Path) -> None:
    result = run("validate", str(arc_file))
    assert result.exit_code == 0
    assert result.output.startswith("ok: 25 concepts, 23 types")


@pytest.mark.parametrize(
    ("fixture", "place"),
    [
        ("bad_truncated.json", "at line 9"),
        ("bad_unknown_kind.json", "at $.concepts[0].kind"),
        ("bad_dangling_type.json", "at $.concepts[0].parameters[1].type"),
    ],
)
def test_validate_reports_bad_files(fixture: str, place: str) -> None:
    result = run("validate", str(FIXTURES / fixture))
    assert_clean_error(result, 1)
    assert fixture in result.output and place in result.output


def test_show_text_lists_groups_and_concepts(arc_file: Path) -> None:
    result = run("show", str(arc_file))
    assert result.exit_code == 0, result.output
    assert "structures (6)" in result.output
    assert "routines: grid manipulation (10)" in result.output
    assert "selection criteria := Callable[[object], bool]" in result.output  # not eaten as markup
    assert "- recolor object" in result.output
    assert "\x1b[" not in result.output  # no colors when not a terminal


def test_show_one_concept_as_yaml_and_json(arc_file: Path) -> None:
    as_yaml = run("show", str(arc_file), "--concept", "Recolor Objects", "--format", "yaml")
    assert as_yaml.exit_code == 0, as_yaml.output
    assert [c["name"] for c in yaml.safe_load(as_yaml.output)] == ["recolor object"]
    as_json = run("show", str(arc_file), "--format", "json")
    assert Memory.model_validate(json.loads(as_json.output)) == Memory.load(arc_file)
    text = run("show", str(arc_file), "--concept", "draw line")
    assert "- draw line" in text.output and "- recolor object" not in text.output


@pytest.mark.parametrize("view", VIEWS)
def test_show_view_prints_the_rendering(arc_file: Path, view: str) -> None:
    result = run("show", str(arc_file), "--view", view)
    assert result.exit_code == 0, result.output
    assert result.output == Memory.load(arc_file).render(view)


def test_show_solve_view_uses_the_chosen_concepts(arc_file: Path) -> None:
    result = run("show", str(arc_file), "--view", "solve", "--concept", "draw line")
    expected = Memory.load(arc_file).render("solve", selected=["draw line"])
    assert result.output == expected
    assert "- concept: draw line" in result.output


def test_show_errors(arc_file: Path) -> None:
    unknown = run("show", str(arc_file), "--concept", "recolr object")
    assert_clean_error(unknown, 1)
    assert "no concept named 'recolr object'; did you mean: recolor object" in unknown.output
    assert_clean_error(run("show", str(arc_file), "--view", "full", "--format", "json"), 2)
    assert_clean_error(run("show", str(arc_file), "--view", "full", "--concept", "draw line"), 2)
    missing = run("show", str(arc_file.with_name("missing.json")))
    assert_clean_error(missing, 1)
    assert "missing.json: invalid memory file" in missing.output


def test_stats_counts_and_token_sizes(arc_file: Path) -> None:
    result = run("stats", str(arc_file))
    assert result.exit_code == 0, result.output
    memory = Memory.load(arc_file)
    lines = result.output.splitlines()
    assert lines[0] == f"{arc_file}:" and "25 concepts" in lines[1]
    assert any(line.split() == ["structures", "6"] for line in lines)
    assert any(line.split() == ["1", "25"] for line in lines)  # every seed is used once
    for view in VIEWS:
        tokens = estimate_tokens(memory.render(view))
        assert any(line.split() == [view, str(tokens)] for line in lines), view


def test_diff_reports_added_removed_and_changed(tmp_path: Path, arc_file: Path) -> None:
    memory = Memory.load(arc_file)
    memory.delete("rotate grid")
    memory.add(Concept(name="gravity", kind="routine", routine_subtype="grid manipulation"))
    memory.add(Concept(name="draw line", kind="routine", cues=["rays from pixels"]), task_id="t1")
    changed = tmp_path / "changed.json"
    memory.save(changed)
    result = run("diff", str(arc_file), str(changed))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "+ gravity (routine)" in lines
    assert "- rotate grid (routine)" in lines
    assert "~ draw line" in lines
    assert "    cues: +'rays from pixels'" in lines
    assert "    provenance.sources: +'t1'" in lines
    assert "history entries: 25 -> 28" in lines
    assert "~ recolor object" not in lines


def test_diff_of_identical_files(tmp_path: Path, arc_file: Path) -> None:
    copy = tmp_path / "copy.json"
    shutil.copyfile(arc_file, copy)
    result = run("diff", str(arc_file), str(copy))
    assert (result.exit_code, result.output) == (0, "no differences\n")


def test_diff_with_a_bad_file_fails(arc_file: Path) -> None:
    result = run("diff", str(arc_file), str(FIXTURES / "bad_not_object.json"))
    assert_clean_error(result, 1)
    assert "expected a JSON object" in result.output


def test_schema_is_json_with_descriptions() -> None:
    result = run("schema")
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["properties"]["schema_version"]["description"]
    assert "Concept" in schema["$defs"]
