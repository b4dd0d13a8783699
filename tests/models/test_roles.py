"""Solver and aux model each talk to their own endpoint with their own key and options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli
from arcmemo.memory.seeds import load_seed
from tests.support.fake_llm_server import FakeLLMServer

ARC_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "arc" / "eval"


def _headers_text(server: FakeLLMServer) -> str:
    return json.dumps([r.headers for r in server.requests])


def test_a_local_solver_and_a_hosted_anthropic_aux_each_get_only_their_own_key(
    tmp_path: Path, api_keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory.json"
    load_seed("arc").save(memory)
    with FakeLLMServer() as solver_host, FakeLLMServer() as aux_host:
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "arc-agi-1",
                "--data",
                str(ARC_DIR),
                "--tasks",
                "66e6c45b",
                "--attempts",
                "1",
                "--feedback-rounds",
                "0",
                "--memory",
                str(memory),
                "--select",
                "llm",
                "--model",
                "openai:local-solver",
                "--base-url",
                solver_host.openai_base_url,
                "--model-arg",
                "timeout_s=5",
                "--aux-model",
                "anthropic:claude-test",
                "--aux-base-url",
                aux_host.url,
                "--aux-temperature",
                "0.3",
                "--aux-max-tokens",
                "1024",
                "--out",
                str(tmp_path / "run"),
            ],
            env={"COLUMNS": "300"},
        )
        assert result.exit_code == 0, result.output
        solver_requests, aux_requests = solver_host.requests, aux_host.requests
    assert solver_requests and all(r.path.endswith("/chat/completions") for r in solver_requests)
    assert aux_requests and all(r.path.endswith("/v1/messages") for r in aux_requests)
    solver_headers, aux_headers = _headers_text(solver_host), _headers_text(aux_host)
    assert api_keys["openai"] in solver_headers and api_keys["anthropic"] not in solver_headers
    assert api_keys["anthropic"] in aux_headers and api_keys["openai"] not in aux_headers
    # The aux role's own sampling reached its calls; the solver's options did not.
    assert {r.body.get("temperature") for r in aux_requests} == {0.3}
    assert {r.body.get("max_tokens") for r in aux_requests} == {1024}
    assert all(r.body.get("model") == "local-solver" for r in solver_requests)
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["endpoints"]["aux"] == aux_host.url
    assert saved["roles"]["aux"]["sampling"]["temperature"] == 0.3


def test_the_aux_model_inherits_neither_the_solvers_endpoint_nor_its_options(
    tmp_path: Path, api_keys: dict[str, str]
) -> None:
    script = tmp_path / "aux.yaml"
    script.write_text('"*": "```yaml\\n[]\\n```"\n')
    memory = tmp_path / "memory.json"
    load_seed("arc").save(memory)
    with FakeLLMServer() as solver_host:
        solver = ["--model", "openai:m", "--base-url", solver_host.openai_base_url]
        solver += ["--model-arg", "timeout_s=5"]
        task = ["--data", str(ARC_DIR), "--tasks", "66e6c45b", "--attempts", "1"]
        aux = ["--aux-model", f"scripted:{script}", "--memory", str(memory), "--select", "llm"]
        args = ["run", "arc-agi-1", *task, *solver, *aux, "--out", str(tmp_path / "run")]
        result = CliRunner().invoke(cli, args, env={"COLUMNS": "300"})
    # scripted takes no options at all: a base_url or timeout_s passed on would fail it.
    assert result.exit_code == 0, result.output
    calls = [json.loads(line) for line in (tmp_path / "run" / "calls.jsonl").open()]
    assert {c["model"] for c in calls if c["stage"] == "select"} == {f"scripted:{script}"}
