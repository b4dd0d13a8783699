"""The anthropic provider with the real SDK against a local Messages API server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arcmemo.models import (
    Message,
    MissingCredentialError,
    ModelCallError,
    ModelClient,
    ModelConfig,
    create_provider,
)
from tests.support.fake_llm_server import FakeLLMServer
from tests.support.model_clients import RecordingSleep, server_client

pytestmark = pytest.mark.usefixtures("api_keys")
SPEC = "anthropic:claude-haiku-4-5"
PREFIX = "You solve puzzles. Memory: " + "concept " * 50


def _conversation(question: str) -> list[Message]:
    return [Message(role="system", content=PREFIX), Message(role="user", content=question)]


async def _run_batch(client: ModelClient, prompts: list[str]) -> list[str]:
    batches = await asyncio.gather(
        *(client.generate(_conversation(p), stage="solve", n=2) for p in prompts)
    )
    await client.aclose()
    return [completion.text for batch in batches for completion in batch]


def test_system_prompt_caching_and_usage(fake_server: FakeLLMServer, tmp_path: Path) -> None:
    client = server_client(SPEC, fake_server, tmp_path)
    first = asyncio.run(client.generate(_conversation("q1"), stage="solve", temperature=0.2))[0]
    second = asyncio.run(client.generate(_conversation("q2"), stage="solve"))[0]
    assert first.text == "reply to q1 #0" and first.response_id
    body = fake_server.requests[0].body
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["temperature"] == 0.2 and body["max_tokens"] == 8192
    # The shared prefix was written to the cache once, then read.
    assert first.usage.cache_write_tokens > 0 and first.usage.cached_tokens == 0
    assert second.usage.cached_tokens == first.usage.cache_write_tokens
    assert second.usage.prompt_tokens == first.usage.prompt_tokens
    cost = client.usage_summary().total.cost_usd
    assert cost is not None and cost > 0


def test_marked_message_is_a_cache_breakpoint(fake_server: FakeLLMServer, tmp_path: Path) -> None:
    messages = [
        Message(role="user", content=PREFIX, cache_breakpoint=True),
        Message(role="assistant", content="ok"),
        Message(role="user", content="the puzzle"),
    ]
    client = server_client(SPEC, fake_server, tmp_path)
    asyncio.run(client.generate(messages, stage="solve", stop=["END"]))
    body = fake_server.requests[0].body
    assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][1]["content"] == "ok" and body["stop_sequences"] == ["END"]
    assert "system" not in body


def test_thinking_budget(fake_server: FakeLLMServer, tmp_path: Path) -> None:
    client = server_client(SPEC, fake_server, tmp_path)
    completion = asyncio.run(
        client.generate(
            _conversation("q"),
            stage="solve",
            thinking_budget=2048,
            max_tokens=4096,
            temperature=0.5,
        )
    )[0]
    body = fake_server.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in body  # not allowed with extended thinking
    assert completion.reasoning == "let me think" and completion.text == "reply to q #0"
    with pytest.raises(ModelCallError, match="must exceed the thinking budget"):
        asyncio.run(
            client.generate(
                _conversation("q"), stage="solve", thinking_budget=4096, max_tokens=4096
            )
        )


def test_n_samples_are_parallel_requests(fake_server: FakeLLMServer, tmp_path: Path) -> None:
    client = server_client(SPEC, fake_server, tmp_path)
    assert len(asyncio.run(client.generate(_conversation("q"), stage="solve", n=3))) == 3
    assert len(fake_server.requests) == 3


def test_results_are_identical_with_and_without_faults(
    fake_server: FakeLLMServer, tmp_path: Path
) -> None:
    prompts = [f"task {i}" for i in range(4)]
    clean = asyncio.run(_run_batch(server_client(SPEC, fake_server, tmp_path / "a"), prompts))
    fake_server.inject("429", "529", "hang", "malformed", "500")
    sleep = RecordingSleep()
    faulty_client = server_client(
        SPEC, fake_server, tmp_path / "b", sleep=sleep, config=ModelConfig(timeout_s=0.5)
    )
    assert asyncio.run(_run_batch(faulty_client, prompts)) == clean
    assert len(sleep.delays) == 5 and max(sleep.delays) >= 1.0  # one retry per fault


def test_auth_error_is_final_and_key_stays_out_of_files(
    fake_server: FakeLLMServer, tmp_path: Path
) -> None:
    fake_server.inject("401")
    client = server_client(SPEC, fake_server, tmp_path)
    with pytest.raises(ModelCallError):
        asyncio.run(client.generate(_conversation("q"), stage="solve"))
    asyncio.run(client.generate(_conversation("q"), stage="solve"))
    asyncio.run(client.aclose())
    assert len(fake_server.requests) == 2
    for path in [tmp_path / "calls.jsonl", *(tmp_path / "cache").iterdir()]:
        assert b"ANTHROPICSECRET" not in path.read_bytes(), path


def test_missing_key_and_base_url_from_environment(
    fake_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(MissingCredentialError, match="ANTHROPIC_API_KEY"):
        create_provider(SPEC)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-other-key-123")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_server.url)
    client = ModelClient(create_provider(SPEC), cache=None)
    assert (
        asyncio.run(client.generate(_conversation("env"), stage="s"))[0].text == "reply to env #0"
    )
