"""The CLI is derived from the settings declared on RunConfig: one field is one option."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import pytest
from click.testing import CliRunner, Result
from pydantic import Field

import arcmemo.cli.run
from arcmemo.cli.main import cli
from arcmemo.cli.run import run_command
from arcmemo.core.settings import Setting, result_fields
from arcmemo.run.config import RESULT_FIELDS, RunConfig

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ARC_DIR = FIXTURES / "arc" / "eval"
ARC_SCRIPT = FIXTURES / "scripts" / "arc_plan.py"
TASK = "66e6c45b"


def arc_args(out: Path, *extra: str) -> list[str]:
    model = f"scripted:{ARC_SCRIPT}"
    return ["arc-agi-1", "--data", str(ARC_DIR), "--model", model, "--out", str(out), *extra]


def invoke(*args: str, **env: str) -> Result:
    return CliRunner().invoke(cli, ["run", *args], env={"COLUMNS": "300", **env})


class WithNudge(RunConfig):
    """A run setting added the way a contributor adds one: a field with its Setting."""

    nudge: Annotated[int, Setting("--nudge", group="Solving", results=True)] = Field(
        default=3, ge=0, description="How hard to nudge the solver (a test's own setting)."
    )


def section(help_text: str, heading: str) -> str:
    """The lines of one help section (from its heading to the next blank line)."""
    return help_text.split(f"\n{heading}:\n", 1)[1].split("\n\n", 1)[0]


def test_a_field_added_to_the_config_is_an_option_in_its_help_group_and_in_config_json(
    tmp_path: Path,
) -> None:
    command = run_command(WithNudge)
    runner = CliRunner()
    help_text = runner.invoke(command, ["--help"], env={"COLUMNS": "200"}).output
    solving = section(help_text, "Solving")
    assert "--nudge" in solving and "How hard to nudge the solver" in solving
    assert "[default: 3; x>=0]" in solving
    assert "--nudge" not in section(help_text, "Data")
    assert "nudge" in result_fields(WithNudge) and "nudge" not in RESULT_FIELDS

    out = tmp_path / "run"
    args = arc_args(out, "--tasks", TASK, "--nudge", "5")
    env = {"ARC_SCRIPT_CALL_LOG": str(tmp_path / "calls.txt"), "COLUMNS": "300"}
    result = runner.invoke(command, args, env=env)
    assert result.exit_code == 0, result.output
    assert json.loads((out / "config.json").read_text())["nudge"] == 5
    refused = runner.invoke(command, ["arc-agi-1", "--model", "scripted:x", "--nudge", "-1"])
    assert refused.exit_code == 2 and "--nudge" in refused.output


def test_run_help_has_the_sections_of_a_run() -> None:
    help_text = invoke("--help").output
    headings = [
        line[:-1] for line in help_text.splitlines() if line.endswith(":") and line[0] != " "
    ]
    assert headings[:7] == [
        "Data",
        "Model roles",
        "Solving",
        "Memory",
        "Sandbox",
        "Scale",
        "Output",
    ]
    assert "Sandboxes:" in help_text and "Sandboxs" not in help_text
    assert "--attempts" in section(help_text, "Solving")
    assert "--concurrency" in section(help_text, "Scale")
    assert "default: 16;" in section(help_text, "Scale")  # ModelConfig's default, stated once


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[RunConfig]:
    """The configs `arcmemo run` builds, caught before anything runs."""
    configs: list[RunConfig] = []
    monkeypatch.setattr(arcmemo.cli.run, "execute", lambda config, *_: configs.append(config))
    return configs


def test_deprecated_spellings_still_work_and_say_their_new_name(
    tmp_path: Path, built: list[RunConfig]
) -> None:
    renamed = {
        "--format": ("--memory-format", "oe"),
        "--format-arg": ("--memory-format-arg", "pitfalls=true"),
        "--retries": ("--feedback-rounds", "1"),
        "--update-signal": ("--write-signal", "oracle"),
    }
    for old, (new, value) in renamed.items():
        configs = []
        for flag in (new, old):
            result = invoke(*arc_args(tmp_path, flag, value))
            assert result.exit_code == 0, result.output
            assert (f"{old} is deprecated; use {new}" in result.output) == (flag == old)
            configs.append(built.pop().model_dump(exclude={"created_at"}))
        assert configs[0] == configs[1]
    default = invoke(*arc_args(tmp_path))
    assert default.exit_code == 0 and "deprecated" not in default.output
    assert built.pop().memory_format.name == "ps"
    both = invoke(*arc_args(tmp_path, "--memory-format", "oe", "--format", "cheatsheet"))
    assert both.exit_code == 0
    assert built.pop().memory_format.name == "oe"  # the new spelling wins


def test_settings_left_unset_keep_the_configs_defaults(
    tmp_path: Path, built: list[RunConfig]
) -> None:
    assert invoke(*arc_args(tmp_path)).exit_code == 0
    plain = RunConfig(
        benchmark="arc-agi-1", data=str(ARC_DIR), model=f"scripted:{ARC_SCRIPT}", out=tmp_path
    )
    assert built.pop().model_dump(exclude={"created_at"}) == plain.model_dump(
        exclude={"created_at"}
    )


def test_environment_fallbacks(tmp_path: Path, built: list[RunConfig]) -> None:
    args = ["arc-agi-1", "--data", str(ARC_DIR), "--model", "scripted:x"]
    result = invoke(*args, ARCMEMO_OUT=str(tmp_path / "mine"), ARCMEMO_CONCURRENCY="3")
    assert result.exit_code == 0, result.output
    config = built.pop()
    assert config.out.parent == tmp_path / "mine" and config.out.name.endswith("-arc-agi-1")
    assert config.models.concurrency == 3
    assert invoke(*args, "--concurrency", "5", ARCMEMO_CONCURRENCY="3").exit_code == 0
    assert built.pop().models.concurrency == 5  # the flag wins over the environment


def test_model_roles_by_name_are_the_flat_flags(tmp_path: Path, built: list[RunConfig]) -> None:
    base = ["arc-agi-1", "--data", str(ARC_DIR), "--out", str(tmp_path)]
    flat = [
        *("--model", "scripted:a", "--model-arg", "x=1", "--base-url", "http://127.0.0.1:1/v1"),
        *("--aux-model", "scripted:b", "--aux-model-arg", "k=v", "--aux-temperature", "0.3"),
    ]
    by_role = [
        *("--model-role", "solver=scripted:a", "--model-role-arg", "solver.x=1"),
        *("--endpoint", "solver=http://127.0.0.1:1/v1", "--aux-temperature", "0.3"),
        *("--model-role", "aux=scripted:b", "--model-role-arg", "aux.k=v"),
    ]
    for args in (flat, by_role):
        result = invoke(*base, *args)
        assert result.exit_code == 0, result.output
    by_name, by_flag = built.pop(), built.pop()
    assert by_name.model_dump(exclude={"created_at"}) == by_flag.model_dump(exclude={"created_at"})
    assert by_name.aux.provider is not None and by_name.aux.provider.options == {"k": "v"}
    unknown = invoke(*base, "--model", "scripted:a", "--model-role", "judge=scripted:b")
    assert unknown.exit_code == 2 and "unknown model role 'judge'" in unknown.output
