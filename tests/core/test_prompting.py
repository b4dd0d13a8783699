"""Prompt templates replaced from a folder (--prompts DIR, RunConfig.prompts, prompt_overlay)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli
from arcmemo.core import prompting
from arcmemo.core.prompting import PromptOverlayError, check_overlay, prompt_overlay
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import dry_run
from tests.support.paths import FIXTURES

ARC_DIR = FIXTURES / "arc" / "eval"
ARC_SCRIPT = FIXTURES / "scripts" / "arc_plan.py"

# Written here: a solve prompt in another layout, using only what the default solve template
# (arc/paper/solve.j2, the paper's layout) is given.
SOLVE = """\
PUZZLE IN OUR OWN LAYOUT
{% for pair in train %}
pair {{ loop.index }}: {{ pair.input_shape }} -> {{ pair.output_shape }}
Example {{ loop.index }} input ({{ pair.input_shape }}):
{{ pair.input }}
{{ pair.output }}
{% endfor %}
{% for test in tests %}
test {{ loop.index }}: {{ test.shape }}
{% endfor %}
"""


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "prompts"
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _config(out: Path, **changes: object) -> RunConfig:
    fields = {"benchmark": "arc-agi-1", "data": str(ARC_DIR), "model": "scripted:arc_plan"}
    return RunConfig.model_validate(fields | {"out": out} | changes)


def test_an_overlay_changes_what_a_dry_run_renders_and_is_recorded(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"arc/paper/solve.j2": SOLVE})
    plain = asyncio.run(dry_run(_config(tmp_path / "plain")))
    report = asyncio.run(dry_run(_config(tmp_path / "overlaid", prompts=folder)))
    task = sorted(report.prompts_dir.glob("*.txt"))[0].name
    overlaid = (report.prompts_dir / task).read_text()
    assert "PUZZLE IN OUR OWN LAYOUT" in overlaid and "pair 1: " in overlaid
    assert "### Your Puzzle Grids" not in overlaid
    assert "PUZZLE IN OUR OWN LAYOUT" not in (plain.prompts_dir / task).read_text()
    # Outside the run the package's templates are back.
    package = prompting.render(
        "arc/paper/solve", train=[], tests=[], library=[], hint="", reselected="", previous=None
    )
    assert "### Your Puzzle Grids" in package


def test_a_run_records_its_overlay_and_a_changed_one_is_another_run(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"arc/paper/solve.j2": SOLVE})
    args = ["run", "arc-agi-1", "--data", str(ARC_DIR), "--tasks", "66e6c45b",
            "--model", f"scripted:{ARC_SCRIPT}", "--attempts", "1",
            "--feedback-rounds", "0"]  # fmt: skip
    runner = CliRunner()
    plain = runner.invoke(cli, [*args, "--out", str(tmp_path / "plain")])
    assert plain.exit_code == 0, plain.output
    run = runner.invoke(cli, [*args, "--prompts", str(folder), "--out", str(tmp_path / "run")])
    assert run.exit_code == 0, run.output
    recorded = json.loads((tmp_path / "run" / "config.json").read_text())
    before = json.loads((tmp_path / "plain" / "config.json").read_text())
    assert recorded["prompts"] == str(folder.resolve()) and before["prompts"] is None
    assert recorded["fingerprints"]["prompts"] != before["fingerprints"]["prompts"]
    (folder / "arc" / "paper" / "solve.j2").write_text(SOLVE + "one more line\n")
    again = runner.invoke(cli, [*args, "--prompts", str(folder), "--out", str(tmp_path / "run")])
    assert again.exit_code != 0 and "prompts: the prompt templates changed" in again.output


def test_a_bad_folder_fails_the_run_at_start_in_one_line(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"arc/sovle.j2": "x"})
    result = CliRunner().invoke(
        cli,
        ["run", "arc-agi-1", "--data", str(ARC_DIR), "--model", "openai:o4-mini", "--dry-run",
         "--prompts", str(folder), "--out", str(tmp_path / "dry")],
    )  # fmt: skip
    assert result.exit_code != 0
    assert f"{folder / 'arc' / 'sovle.j2'}: replaces no template" in result.output
    assert not (tmp_path / "dry").exists()


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"arc/solv.j2": "x"}, r"arc/solv\.j2: replaces no template \(there is no prompts/arc/"),
        (
            {"arc/solve.j2": "{{ train }} {{ hint }}"},
            r"arc/solve\.j2: uses hint, which prompts/arc/solve\.j2 is not given \(it is given: "
            r"previous, tests, train\)",
        ),
        ({"arc/solve.j2": "{% for x in train %}"}, r"arc/solve\.j2:1: Unexpected end of template"),
        ({}, r"no \.j2 templates"),
    ],
)
def test_a_bad_folder_is_one_line_at_start(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    folder = _folder(tmp_path, files)
    folder.mkdir(exist_ok=True)
    with pytest.raises(PromptOverlayError, match=message) as error:
        check_overlay(folder)
    assert "\n" not in str(error.value)


def test_prompt_overlay_in_python(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"repair.j2": "fix: {{ error }}"})
    with prompt_overlay(folder):
        assert prompting.render("repair", error="bad json") == "fix: bad json\n"
    assert prompting.render("repair", error="bad json") != "fix: bad json\n"
    with pytest.raises(PromptOverlayError, match="not a folder"):
        check_overlay(tmp_path / "missing")
