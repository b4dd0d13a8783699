"""``arcmemo mcp``'s options are the shared role options of ``arcmemo run``: --model-role
with --model-role-arg and --endpoint, --select and --memory-format with their -arg options;
a role it has no use for, or options without the role's model, are usage errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import arcmemo.agent.mcp_server as mcp_server
import arcmemo.agent.memory as agent_memory
from arcmemo.cli.main import cli


class Served(Exception):
    """Raised where the server would start: the test has what it wanted."""


def test_role_selector_and_format_options_reach_the_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}
    real = agent_memory.open_memory

    def spy(path: Path, **kwargs: Any) -> agent_memory.AgentMemory:
        seen.update(kwargs)
        return real(path, **kwargs)

    def stop(memory: agent_memory.AgentMemory) -> None:
        seen["memory"] = memory
        raise Served

    monkeypatch.setattr(agent_memory, "open_memory", spy)
    monkeypatch.setattr(mcp_server, "build_server", stop)
    result = CliRunner().invoke(cli, [
        "mcp", "--memory", str(tmp_path / "m.json"),
        "--model-role", "abstract=openai:gpt-4.1-mini", "--endpoint",
        "abstract=http://127.0.0.1:9/v1", "--model-role-arg", "abstract.seed=3",
        "--select", "embedding", "--select-arg", "top_k=2",
        "--memory-format", "oe", "--memory-format-arg", "domain_prefix=true",
    ], env={"OPENAI_API_KEY": "sk-test"})  # fmt: skip
    assert isinstance(result.exception, Served), result.output
    memory = seen["memory"]
    assert set(seen["roles"]) == {"abstract"}
    assert seen["roles"]["abstract"].spec == "openai:gpt-4.1-mini"
    assert memory.selector.top_k == 2
    assert memory.abstractor.name == "oe" and memory.abstractor.options["domain_prefix"] is True


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--model-role", "solver=openai:gpt-4.1"], "arcmemo mcp's roles are select, abstract"),
        (["--endpoint", "select=http://127.0.0.1:9/v1"], "--model-role select=PROVIDER:MODEL"),
        (["--model-role-arg", "aux.seed=3"], "need its model (--model-role aux=PROVIDER:MODEL)"),
        # The role's options go to its provider, which checks them.
        (
            ["--model-role", "aux=openai:gpt-4.1", "--model-role-arg", "aux.organization=lab"],
            "organization: Extra inputs are not permitted",
        ),
        (["--memory-format", "oe", "--memory-format-arg", "nope=1"], "nope"),
    ],
)
def test_bad_role_options_are_one_line_errors(tmp_path: Path, args: list[str], said: str) -> None:
    result = CliRunner().invoke(cli, ["mcp", "--memory", str(tmp_path / "m.json"), *args])
    assert result.exit_code != 0 and said in result.output, result.output
    assert "Traceback" not in result.output
