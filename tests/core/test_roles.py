"""Separate models for selection and for abstraction in one run: each role's calls go to its
own model, are counted under its name, and the roles are result settings."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli
from arcmemo.core.progress import ProgressEvent, ProgressSink, ProgressState
from arcmemo.core.roles import for_role, role_of, with_fallbacks
from arcmemo.memory.schema import Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.models.base import ProviderError
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RESULT_FIELDS, RunConfig, result_values
from arcmemo.run.pipeline import legacy_role_keywords, run_benchmark
from tests.support.arc_solutions import CORNERS, CORNERS_CONCEPT, QUADRANTS
from tests.support.paths import FIXTURES
from tests.support.scripted_models import loop_model

lm = loop_model()
ARC_DIR = FIXTURES / "arc" / "eval"
TASKS = ["0c786b71", "66e6c45b"]


@dataclass
class OnlyStages:
    """A model that answers only prompts of ``stages`` (any other is recorded and refused)."""

    model: Any
    stages: frozenset[str]
    refused: list[str] = field(default_factory=list)
    answered: int = 0

    def __call__(self, messages: list[Any]) -> str:
        stage = lm.stage_of(messages)
        if stage not in self.stages:
            self.refused.append(stage)
            raise ProviderError(f"HTTP 400: this model answers no {stage} prompt", status=400)
        self.answered += 1
        return str(self.model(messages))


class Tally(ProgressSink):
    def __init__(self) -> None:
        self.state = ProgressState(clock=lambda: 0.0)

    def emit(self, event: ProgressEvent) -> None:
        self.state.apply(event)


def _client(model: Any, name: str, out: Path) -> ModelClient:
    return ModelClient(
        ScriptedProvider.from_script(model, model=name), call_log_path=out / "calls.jsonl"
    )


def test_selection_and_abstraction_each_call_their_own_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))
    memory_path = tmp_path / "memory.json"
    load_seed("arc").save(memory_path)
    shared = lm.LoopModel(
        answers={
            ("solve", "0c786b71"): lm.program_answer(QUADRANTS),
            ("solve", "66e6c45b"): lm.program_answer(CORNERS),
            ("select", None): "```yaml\n- no such concept\n```",
            ("concepts", None): CORNERS_CONCEPT,
        },
        arc_ids=TASKS,
    )
    solver = OnlyStages(shared, frozenset({"solve"}))
    select = OnlyStages(shared, frozenset({"select"}))
    abstract = OnlyStages(shared, frozenset({"pseudocode", "concepts"}))
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        tasks=TASKS,
        attempts=1,
        feedback_rounds=0,
        out=tmp_path / "run",
        memory=memory_path,
        selector="llm",
        update="online",
        update_every=1,
        roles={
            "solver": "scripted:solver",
            "select": "scripted:select",
            "abstract": "scripted:abstract",
        },
    )
    tally = Tally()
    summary = asyncio.run(
        run_benchmark(
            config,
            progress=tally,
            models={
                "solver": _client(solver, "solver", config.out),
                "select": _client(select, "select", config.out),
                "abstract": _client(abstract, "abstract", config.out),
            },
        )
    )
    assert (solver.refused, select.refused, abstract.refused) == ([], [], [])
    assert summary["complete"] is True and summary["n_solved"] == 2
    # Two tasks: two solves, two selections, and two writes of two calls each.
    assert (solver.answered, select.answered, abstract.answered) == (2, 2, 4)
    roles = {name: usage["calls"] for name, usage in summary["roles"].items()}
    assert roles == {"solver": 2, "select": 2, "abstract": 4}
    usage = tally.state.usage_text()
    assert "solver 2 calls" in usage and "select 2 calls" in usage and "abstract 4 calls" in usage
    # The memory records the abstract role's model as the author of what it wrote.
    written = Memory.load(memory_path).find("move center to corners")
    assert written is not None and "scripted:abstract" in written.provenance.authors


def test_a_role_without_a_model_of_its_own_is_counted_under_its_fallback() -> None:
    assert role_of("select") == role_of("attribute") == "aux"
    assert role_of("abstract", ("solver", "aux", "abstract")) == "abstract"
    assert role_of("select", ("solver", "aux", "abstract")) == "aux"
    assert role_of("retry") == "solver"


def test_a_role_left_out_of_a_mapping_gets_its_fallbacks_entry() -> None:
    every = with_fallbacks({"solver": "s", "abstract": "a"})
    assert every == {"solver": "s", "aux": "s", "select": "s", "abstract": "a"}
    assert with_fallbacks({"solver": "s", "aux": "x"})["select"] == "x"
    with pytest.raises(ValueError, match="no solver"):
        with_fallbacks({"aux": "x"})
    with pytest.raises(ValueError, match="unknown model role"):
        with_fallbacks({"solver": "s", "judge": "j"})


def test_one_role_is_looked_up_along_its_fallbacks_in_a_partial_mapping() -> None:
    # The agent facade and the select/abstract commands give no solver.
    assert for_role({"aux": "x"}, "select") == "x"
    assert for_role({"aux": "x", "abstract": "a"}, "abstract") == "a"
    assert for_role({"select": "c"}, "abstract") is None
    assert for_role({}, "select") is None
    with pytest.raises(ValueError, match="unknown model role 'judge'"):
        for_role({"solver": "s"}, "judge")


def test_the_retired_keywords_of_run_benchmark_warn_and_name_roles(tmp_path: Path) -> None:
    client = _client(["x"], "solver", tmp_path)
    with pytest.warns(DeprecationWarning, match="models="):
        given = legacy_role_keywords(solver=client, aux=None)
    assert given == {"solver": client}


def test_every_role_is_a_result_setting_and_falls_back_as_documented() -> None:
    plain = RunConfig(benchmark="arc-agi-1", model="openai:solver", out="run")
    assert "roles" in RESULT_FIELDS and "model" not in RESULT_FIELDS
    values = result_values(plain)
    assert {"roles.select.model", "roles.abstract.model", "roles.aux.sampling"} <= set(values)
    assert plain.role_model("abstract") == plain.role_model("select") == "openai:solver"
    given = RunConfig(
        benchmark="arc-agi-1",
        model="openai:solver",
        aux_model="openai:aux",
        aux_sampling={"temperature": 0.2, "max_tokens": 500},
        roles={"abstract": {"sampling": {"max_tokens": 900}}},
        out="run",
    )
    assert given.role_model("select") == given.role_model("abstract") == "openai:aux"
    assert given.model_owner("abstract") == "aux"
    sampling = given.role_sampling("abstract")
    assert (sampling.temperature, sampling.max_tokens) == (0.2, 900)
    assert given.role_sampling("aux").max_tokens == 500
    assert result_values(given)["roles.abstract.sampling"].max_tokens == 900


def test_an_abstraction_model_changes_the_results_so_a_resume_must_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "solver.yaml"
    script.write_text('"*": "```python\\ndef transform(grid):\\n    return grid\\n```"\n')
    other = tmp_path / "abstract.yaml"
    other.write_text('"*": "unused"\n')
    out = tmp_path / "run"
    command = ["run", "arc-agi-1", "--data", str(ARC_DIR), "--tasks", "66e6c45b"]
    command += ["--attempts", "1", "--model", f"scripted:{script}", "--out", str(out)]
    first = CliRunner().invoke(cli, command, env={"COLUMNS": "300"})
    assert first.exit_code == 0, first.output
    changed = [*command, "--model-role", f"abstract=scripted:{other}"]
    refused = CliRunner().invoke(cli, changed, env={"COLUMNS": "300"})
    assert refused.exit_code != 0
    assert f"roles.abstract.model: None -> 'scripted:{other}'" in refused.output
    forced = CliRunner().invoke(cli, [*changed, "--force-resume"], env={"COLUMNS": "300"})
    assert forced.exit_code == 0, forced.output
    saved = json.loads((out / "config.json").read_text())
    assert saved["roles"]["abstract"]["model"] == str(other)
    assert any("roles.abstract.model" in line for line in saved["forced_resume"])
