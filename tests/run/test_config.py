"""RunConfig: model roles as one mapping, and config.json files written before it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from arcmemo.core.registry import ComponentSpec
from arcmemo.run.config import AUX, SOLVER, RunConfig
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.roles import ModelRole
from tests.support.paths import FIXTURES

BEFORE_ROLES = FIXTURES / "config" / "before-roles.json"


def test_a_config_json_written_before_roles_loads_into_roles() -> None:
    config = RunConfig.model_validate_json(BEFORE_ROLES.read_text())
    assert config.roles[SOLVER] == ModelRole(
        provider=ComponentSpec(name="openai", options={"top_p": "0.9"}),
        model="o4-mini",
        sampling={"max_tokens": 1000},
    )
    assert config.roles[AUX].spec == "anthropic:claude-sonnet-4-5"
    assert config.roles[AUX].provider == ComponentSpec(
        name="anthropic", options={"prompt_cache": "false"}
    )
    assert config.roles[AUX].sampling.temperature == 0.3
    assert config.endpoints == {SOLVER: "http://127.0.0.1:8000/v1"}
    # the flat spellings read back what the roles hold
    assert (config.model, config.base_url, config.model_args) == (
        "openai:o4-mini",
        "http://127.0.0.1:8000/v1",
        {"top_p": "0.9"},
    )
    assert (config.aux_model, config.aux_base_url) == ("anthropic:claude-sonnet-4-5", None)
    # written again it has roles only, and reads back the same
    saved = json.loads(config.model_dump_json())
    assert "model" not in saved and "aux_sampling" not in saved
    assert RunConfig.model_validate(saved) == config


def test_a_run_directory_written_before_roles_resumes_with_the_same_command(
    tmp_path: Path,
) -> None:
    rundir = RunWriter(tmp_path / "run")
    rundir.path.mkdir()
    old = json.loads(BEFORE_ROLES.read_text()) | {"out": str(rundir.path)}
    rundir.config_path.write_text(json.dumps(old))
    flat = {k: v for k, v in old.items() if k not in ("versions",)}
    again = RunConfig.model_validate(flat)
    assert rundir.start(again).forced_resume == []  # no difference found
    moved = RunConfig.model_validate(flat | {"base_url": "http://127.0.0.1:9000/v1"})
    rundir.start(moved)  # a moved endpoint is the same run
    with pytest.raises(Exception, match="model"):
        rundir.start(RunConfig.model_validate(flat | {"model": "openai:gpt-4.1"}))


def test_roles_by_name_and_the_flat_spellings_make_the_same_config(tmp_path: Path) -> None:
    flat = RunConfig(
        benchmark="arc-agi-1",
        model="scripted:a",
        aux_model="scripted:b",
        aux_model_args={"k": "v"},
        aux_base_url="http://127.0.0.1:1/v1",
        out=tmp_path,
    )
    by_role = RunConfig(
        benchmark="arc-agi-1",
        roles={SOLVER: "scripted:a", AUX: {"spec": "scripted:b", "args": {"k": "v"}}},
        endpoints={AUX: "http://127.0.0.1:1/v1"},
        out=tmp_path,
    )
    assert flat == by_role
    alone = RunConfig(benchmark="arc-agi-1", model="scripted:a", out=tmp_path)
    assert alone.roles[AUX] == ModelRole() and alone.aux_spec == "scripted:a"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "a run needs a solver model"),
        ({"model": "scripted:a", "roles": {"judge": "scripted:b"}}, "unknown model role 'judge'"),
        ({"model": "scripted:a", "roles": {AUX: {"args": {"k": "v"}}}}, "needs the aux role's"),
    ],
)
def test_role_mistakes_are_named(tmp_path: Path, fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        RunConfig.model_validate({"benchmark": "arc-agi-1", "out": str(tmp_path), **fields})


def test_each_order_seed_samples_with_its_own_seeds_unless_they_share_samples(
    tmp_path: Path,
) -> None:
    def seed(**fields: Any) -> int | None:
        config = RunConfig(
            benchmark="arc-agi-1", model="scripted:a", sampling_seed=5, out=tmp_path, **fields
        )
        return config.request_seed

    seeds = {seed(), seed(order_seed=1), seed(order_seed=2), seed(order_seed=1, replicate=1)}
    assert len(seeds) == 4
    assert seed(order_seed=1, share_samples=True) == seed() == 5
