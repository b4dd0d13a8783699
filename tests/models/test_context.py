"""Context windows: where a model's window is known from, and a prompt that cannot fit it
as a recorded outcome of its task (not an infrastructure error), at every stage."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli
from arcmemo.core.registry import RegistryError
from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.seeds import load_seed
from arcmemo.models import Message
from arcmemo.models.context import PromptTooLongError, is_context_overflow, table_window
from tests.support.fake_llm_server import FakeLLMServer, _text_of
from tests.support.model_clients import server_client

pytestmark = pytest.mark.usefixtures("api_keys")

ARC_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "arc" / "eval"


def _window(
    server: FakeLLMServer, tmp_path: Path, spec: str = "openai:m", **options: Any
) -> int | None:
    client = server_client(spec, server, tmp_path, **options)

    async def ask() -> int | None:
        try:
            return await client.context_window()
        finally:
            await client.aclose()

    return asyncio.run(ask())


@pytest.mark.parametrize("via", ["props", "models"])
def test_the_window_is_read_from_the_server(via: str, tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.state.n_ctx, server.state.window_via = 8192, via
        assert _window(server, tmp_path) == 8192


def test_a_model_arg_wins_over_the_server_and_the_table_knows_hosted_models(
    tmp_path: Path,
) -> None:
    with FakeLLMServer() as server:
        server.state.n_ctx, server.state.window_via = 8192, "props"
        assert _window(server, tmp_path, context_window="4000") == 4000
        server.state.window_via = None  # a server that says nothing
        assert _window(server, tmp_path / "a") is None
        assert _window(server, tmp_path / "b", "openai:gpt-4o") == 128000
    assert table_window("openai:SmolLM2-135M-Instruct") == 8192
    with pytest.raises(RegistryError, match="context_window=zero"):
        _window(FakeLLMServer(), tmp_path, context_window="zero")


def test_a_prompt_over_the_window_is_refused_before_it_is_sent(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.state.n_ctx, server.state.window_via = 20, "props"
        client = server_client("openai:m", server, tmp_path)
        prompt = [Message(role="user", content="word " * 50)]
        with pytest.raises(PromptTooLongError) as caught:
            asyncio.run(client.generate(prompt, stage="solve", task_id="t", n=2))
        asyncio.run(client.aclose())
        assert server.requests == [] and server.state.gets == ["/props"]  # asked nothing else
    assert caught.value.kind == "prompt_too_long" and caught.value.context_window == 20
    assert caught.value.prompt_tokens == estimate_tokens("word " * 50)


def test_a_servers_context_refusal_is_prompt_too_long_and_not_retried(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.state.n_ctx = 20  # refused by the server, reported nowhere
        client = server_client("openai:m", server, tmp_path)
        prompt = [Message(role="user", content="word " * 50)]
        with pytest.raises(PromptTooLongError, match="exceeds the available context size"):
            asyncio.run(client.generate(prompt, stage="solve", task_id="t", n=2))
        asyncio.run(client.aclose())
        # One request: neither retried nor split into single calls for n.
        assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("status", "message", "overflow"),
    [
        (400, "Error code: 400 - {'code': 'context_length_exceeded'}", True),
        (400, "This model's maximum context length is 8192 tokens", True),
        (400, "request (9000 tokens) exceeds the available context size (8192 tokens)", True),
        (400, "n > 1 is not supported by this server", False),
        (500, "maximum context length", False),
    ],
)
def test_context_refusals_are_told_from_other_errors(
    status: int, message: str, overflow: bool
) -> None:
    assert is_context_overflow(status, message) is overflow


def _run(server: FakeLLMServer, out: Path, *extra: str) -> tuple[int, str, dict]:
    args = ["run", "arc-agi-1", "--data", str(ARC_DIR), "--model", "openai:m"]
    args += ["--base-url", server.openai_base_url, "--out", str(out), "--no-cache", *extra]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "300"})
    summary = (
        json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    )
    return result.exit_code, result.output, summary


@pytest.mark.parametrize("via", [None, "props"])
def test_a_run_records_prompt_too_long_at_solve_and_retry_and_completes(
    via: str | None, tmp_path: Path
) -> None:
    # 0c786b71's first prompt is 405 words, 66e6c45b's 285 and its retries over 300.
    with FakeLLMServer() as server:
        server.state.n_ctx, server.state.window_via = 300, via
        tasks = ["--tasks", "66e6c45b,0c786b71", "--attempts", "2", "--feedback-rounds", "1"]
        code, output, summary = _run(server, tmp_path / "run", *tasks)
    assert code == 0, output
    assert summary["complete"] is True and summary["n_errors"] == 0 and summary["errors"] == {}
    too_long = summary["prompt_too_long"]
    assert set(too_long) == {"66e6c45b", "0c786b71"}
    assert too_long["0c786b71"].startswith("solve: ")
    # Known beforehand, 66e6c45b's first prompt (about 601 estimated tokens) is refused too.
    assert too_long["66e6c45b"].startswith("retry: " if via is None else "solve: ")
    assert "prompt_too_long" in output and "0c786b71" in output
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    assert all(r["error"] is None and r["prompt_too_long"] for r in rows)


def test_the_selection_view_shrinks_to_fit_the_aux_window(tmp_path: Path) -> None:
    memory = tmp_path / "memory.json"
    load_seed("arc").save(memory)
    with FakeLLMServer() as server:
        # The whole seed memory's selection prompt is about 3,800 estimated tokens.
        server.state.n_ctx, server.state.window_via = 3000, "props"
        select = ["--memory", str(memory), "--select", "llm", "--tasks", "66e6c45b"]
        # No retry: the paper's retry repeats the first prompt and the whole answer, and only
        # the selection is fitted to a window (a retry here would be about 3,030 tokens).
        once = ["--attempts", "1", "--feedback-rounds", "0"]
        code, output, summary = _run(server, tmp_path / "run", *select, *once)
        prompts = [
            " ".join(_text_of(m["content"]) for m in r.body["messages"]) for r in server.requests
        ]
    assert code == 0, output
    assert summary["prompt_too_long"] == {} and summary["complete"] is True
    selection = [p for p in prompts if "decide which of them are relevant" in p]
    assert selection, prompts
    assert estimate_tokens(selection[0]) <= 3000
    calls = [json.loads(line) for line in (tmp_path / "run" / "calls.jsonl").open()]
    assert {"select", "solve"} <= {c["stage"] for c in calls}


def test_an_answer_cut_at_max_tokens_is_marked_truncated(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.state.cut_at_max_tokens = True
        limit = ["--max-tokens", "3", "--tasks", "66e6c45b", "--attempts", "2"]
        code, output, summary = _run(server, tmp_path / "run", *limit, "--feedback-rounds", "0")
    assert code == 0, output
    assert summary["truncated"] == 2
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    assert [s["truncated"] for a in rows[0]["attempts"] for s in a["steps"]] == [True, True]
    assert "cut at max_tokens" in output


def test_the_dry_run_warns_per_task_and_stage_whose_prompt_cannot_fit(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text('"*": "x"\n')
    memory = tmp_path / "memory.json"
    load_seed("arc").save(memory)
    args = ["run", "arc-agi-1", "--data", str(ARC_DIR), "--tasks", "66e6c45b,0c786b71"]
    args += ["--model", f"scripted:{script}", "--model-arg", "context_window=1200"]
    args += ["--memory", str(memory), "--select", "llm", "--attempts", "2"]
    args += ["--feedback-rounds", "1", "--dry-run", "--out", str(tmp_path / "dry")]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    estimate = json.loads((tmp_path / "dry" / "estimate.json").read_text())
    lines = "\n".join(estimate["too_long"])
    # 0c786b71's solve prompt is about 1,480 tokens; 66e6c45b's (about 1,100) fits, its
    # retries may not; both selection prompts over the seed memory (4,300) are shrunk.
    assert "task 0c786b71, stage solve" in lines and "task 66e6c45b, stage solve" not in lines
    assert "task 66e6c45b, stage retry" in lines
    assert "task 66e6c45b, stage select" in lines and "task 0c786b71, stage select" in lines
    assert "warning: task 0c786b71, stage solve" in result.output
