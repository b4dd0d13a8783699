"""``arcmemo run`` through a real HTTP server whose programs import library functions.

The fast test serves a scripted model on 127.0.0.1 through the OpenAI wire format (the
``openai`` provider with ``--base-url``): the program it writes imports a library function,
is verified in the default sandbox, and the import is credited in the memory. The slow test
runs the real local model (SmolLM2 through llama.cpp's server) with ``--library all``: it
imports nothing, but the run completes, its prompt shows the library and its summary says
what happened.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli
from arcmemo.memory.schema import Memory
from arcmemo.models.base import Completion, GenerateParams, Message
from arcmemo.models.local_server import LocalServerProvider
from tests.support.fake_llm_server import FakeLLMServer, _text_of
from tests.support.library_run import (
    TASKS,
    assert_import_credited,
    importing_model,
    library_memory,
)
from tests.support.local_model import real_model_missing
from tests.support.scripted_models import loop_model

lm = loop_model()
LIBRARY_LINE = "from arcmemo_library import tile_mirrored"


def _results(out: Path) -> dict[str, Any]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {r["task_id"]: r for r in map(json.loads, lines)}


def test_a_run_over_an_openai_compatible_server_imports_and_credits(tmp_path: Path) -> None:
    memory_path = library_memory(tmp_path / "memory.json")
    model = importing_model()
    server = FakeLLMServer()

    def respond(messages: list[dict[str, Any]], index: int) -> str:
        return str(
            model([Message(role=m["role"], content=_text_of(m["content"])) for m in messages])
        )

    server.state.respond = respond
    out = tmp_path / "run"
    args = [
        "run", "arc-agi-1", "--split", "evaluation", "--tasks", ",".join(TASKS),
        "--model", "openai:scripted-solver", "--base-url", server.openai_base_url,
        "--attempts", "1", "--feedback-rounds", "0", "--memory", str(memory_path),
        "--select", "all", "--update", "online", "--update-every", "2",
        "--write-signal", "train", "--out", str(out),
    ]  # fmt: skip
    with server:
        env = {"COLUMNS": "300", "OPENAI_API_KEY": "sk-test-not-a-key"}
        result = CliRunner().invoke(cli, args, env=env)
        requests = server.requests
    assert result.exit_code == 0, result.output
    # Every model call went over HTTP to the server: the solves and the memory update.
    solves = [r for r in requests if LIBRARY_LINE in json.dumps(r.body)]
    assert len(solves) >= 2 and all(r.path == "/v1/chat/completions" for r in requests)
    (solve,) = model.of("solve", "00576224")
    assert LIBRARY_LINE in solve.last and "`tile_plain(grid: Grid) -> Grid`" in solve.last
    results = _results(out)
    step = results["00576224"]["attempts"][0]["steps"][0]
    assert step["verified"] is True and results["00576224"]["solved"] is True, step
    assert_import_credited(memory_path)


@pytest.mark.slow
def test_the_real_local_model_runs_with_the_whole_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SmolLM2 writes no imports, but a run with --library all completes without an error,
    its solve prompt shows the library block, and the summary and memory say what
    happened: no function imported, nothing credited to one."""
    missing = real_model_missing()
    if missing is not None:
        pytest.skip(f"no local model: {missing}")
    memory_path = library_memory(tmp_path / "memory.json")
    prompts: list[list[Message]] = []
    generate = LocalServerProvider.generate

    async def recording(
        self: LocalServerProvider, messages: list[Message], params: GenerateParams
    ) -> list[Completion]:
        prompts.append(list(messages))
        return await generate(self, messages, params)

    monkeypatch.setattr(LocalServerProvider, "generate", recording)
    out = tmp_path / "run"
    # The val100 task with the shortest prompt (570 SmolLM2 tokens without the library).
    args = [
        "run", "arc-agi-1", "--split", "val100", "--tasks", "66e6c45b",
        "--model", "local:smollm2", "--model-arg", f"server_log={tmp_path / 'server.log'}",
        "--sampling-seed", "7", "--max-tokens", "200", "--attempts", "1",
        "--feedback-rounds", "0", "--memory", str(memory_path), "--select", "all",
        "--library", "all", "--update", "online", "--out", str(out),
    ]  # fmt: skip
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["n_tasks"] == 1 and summary["n_errors"] == 0
    (solve,) = [p for p in prompts if "### Library functions" in p[-1].content]
    assert LIBRARY_LINE in solve[-1].content and "`tile_plain(grid: Grid) -> Grid`" in (
        solve[-1].content
    )
    (task,) = _results(out).values()
    assert summary["n_solved"] == int(task["solved"])
    programs = [step.get("program") or "" for a in task["attempts"] for step in a["steps"]]
    imported = any("arcmemo_library" in program for program in programs)
    memory = Memory.load(memory_path)
    credited = [f.imported_by for c in memory.concepts for f in c.functions]
    assert credited == ([["66e6c45b"], []] if imported and task["solved"] else [[], []])
