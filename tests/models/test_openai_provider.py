"""The openai provider with the real SDK against a local Chat Completions server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arcmemo.models import (
    CallRecord,
    Message,
    MissingCredentialError,
    ModelCallError,
    ModelClient,
    ModelConfig,
    create_provider,
    usage_from_records,
)
from tests.support.fake_llm_server import FakeLLMServer
from tests.support.model_clients import RecordingSleep, server_client

pytestmark = pytest.mark.usefixtures("api_keys")


def _ask(text: str) -> list[Message]:
    return [Message(role="system", content="answer briefly"), Message(role="user", content=text)]


async def _run_batch(client: ModelClient, prompts: list[str]) -> list[str]:
    batches = await asyncio.gather(
        *(client.generate(_ask(p), stage="solve", task_id=p, n=2) for p in prompts)
    )
    await client.aclose()
    return [completion.text for batch in batches for completion in batch]


def test_round_trip_parses_choices_usage_and_sends_the_key(
    fake_server: FakeLLMServer, tmp_path: Path, api_keys: dict[str, str]
) -> None:
    client = server_client("openai:gpt-4o-mini", fake_server, tmp_path)
    completions = asyncio.run(
        client.generate(_ask("two plus two"), stage="solve", n=2, temperature=0.3, max_tokens=50)
    )
    assert [c.text for c in completions] == ["reply to two plus two #0", "reply to two plus two #1"]
    assert completions[0].usage.prompt_tokens == 5 and completions[0].response_id
    assert client.usage_summary().total.tokens.completion_tokens == 12
    assert client.usage_summary().total.cost_usd is not None  # gpt-4o-mini is priced
    (request,) = fake_server.requests
    assert request.headers["authorization"] == f"Bearer {api_keys['openai']}"
    assert request.body["n"] == 2 and request.body["max_tokens"] == 50
    assert request.body["temperature"] == 0.3


def test_reasoning_models_get_their_request_shape(
    fake_server: FakeLLMServer, tmp_path: Path
) -> None:
    client = server_client("openai:o4-mini", fake_server, tmp_path)
    asyncio.run(
        client.generate(
            _ask("q"), stage="solve", temperature=0.7, max_tokens=99, reasoning_effort="high"
        )
    )
    body = fake_server.requests[0].body
    assert body["max_completion_tokens"] == 99 and "max_tokens" not in body
    assert "temperature" not in body and body["reasoning_effort"] == "high"


def test_results_are_identical_with_and_without_faults(
    fake_server: FakeLLMServer, tmp_path: Path
) -> None:
    prompts = [f"puzzle {i}" for i in range(6)]
    clean = asyncio.run(
        _run_batch(server_client("openai:gpt-4o", fake_server, tmp_path / "clean"), prompts)
    )
    clean_requests = len(fake_server.requests)

    fake_server.inject("429", "500", "hang", "malformed")
    sleep = RecordingSleep()
    config = ModelConfig(timeout_s=0.5)
    faulty_client = server_client(
        "openai:gpt-4o", fake_server, tmp_path / "faulty", sleep=sleep, config=config
    )
    faulty = asyncio.run(_run_batch(faulty_client, prompts))
    assert faulty == clean
    assert len(fake_server.requests) == 2 * clean_requests + 4  # each fault cost one request
    assert len(sleep.delays) == 4 and max(sleep.delays) >= 1.0  # Retry-After: 1 honored
    assert faulty_client.usage_summary().total.requests == clean_requests + 4


def test_bad_request_fails_without_retry(fake_server: FakeLLMServer, tmp_path: Path) -> None:
    fake_server.inject("400")
    client = server_client("openai:gpt-4o", fake_server, tmp_path)
    with pytest.raises(ModelCallError) as raised:
        asyncio.run(client.generate(_ask("q"), stage="select", task_id="abc"))
    assert raised.value.status == 400 and raised.value.task_id == "abc"
    assert len(fake_server.requests) == 1


def test_auth_error_fails_and_keys_never_reach_disk(
    fake_server: FakeLLMServer, tmp_path: Path, api_keys: dict[str, str]
) -> None:
    fake_server.inject("401")
    client = server_client("openai:gpt-4o", fake_server, tmp_path)
    with pytest.raises(ModelCallError) as raised:
        asyncio.run(client.generate(_ask("q"), stage="solve"))
    assert raised.value.status == 401
    assert "OPENAISECRET" not in str(raised.value)
    asyncio.run(client.generate(_ask("q"), stage="solve"))
    asyncio.run(client.aclose())
    # The 401 body echoed the Authorization header (as real servers echo part of a bad key).
    assert "OPENAISECRET" in fake_server.requests[0].headers["authorization"]
    written = [tmp_path / "calls.jsonl", *sorted((tmp_path / "cache").iterdir())]
    for path in written:
        assert b"OPENAISECRET" not in path.read_bytes(), path
    assert (tmp_path / "calls.jsonl").read_text().count("\n") == 2


def test_server_rejecting_n_falls_back_to_single_calls(
    fake_server: FakeLLMServer, tmp_path: Path
) -> None:
    fake_server.state.reject_n = True
    client = server_client("openai:local-model", fake_server, tmp_path)
    first = asyncio.run(client.generate(_ask("q"), stage="solve", n=3))
    assert len(first) == 3 and all(c.text == "reply to q #0" for c in first)
    assert [r.body.get("n", 1) for r in fake_server.requests] == [3, 1, 1, 1]
    asyncio.run(client.generate(_ask("other"), stage="solve", n=2))
    assert len(fake_server.requests) == 6  # remembered: no second rejected request


def test_a_server_ignoring_n_gets_seeded_follow_ups_and_one_warning(
    fake_server: FakeLLMServer, tmp_path: Path
) -> None:
    # llama.cpp's server answers one choice whatever n asks; follow-ups with the first
    # request's seed were copies of its answer (seeds 100, 100, 100: identical attempts).
    fake_server.state.ignore_n = True
    client = server_client("openai:local-model", fake_server, tmp_path)
    with pytest.warns(UserWarning, match="ignores n") as warned:
        first = asyncio.run(client.generate(_ask("q"), stage="solve", n=3, seed=100))
        asyncio.run(client.generate(_ask("other"), stage="solve", n=2, seed=100))
    assert len(first) == 3 and len(warned) == 1
    sent = [(r.body.get("n", 1), r.body.get("seed")) for r in fake_server.requests]
    # The follow-ups go out at once, so they may arrive in any order.
    assert sent[0] == (3, 100) and sorted(sent[1:3]) == [(1, 101), (1, 102)]
    assert sorted(sent[3:]) == [(1, 100), (1, 101)]  # learned: one request per sample


def test_cache_makes_a_rerun_free(fake_server: FakeLLMServer, tmp_path: Path) -> None:
    prompts = ["a", "b", "c"]
    first = asyncio.run(_run_batch(server_client("openai:gpt-4o", fake_server, tmp_path), prompts))
    requests = len(fake_server.requests)
    rerun_client = server_client("openai:gpt-4o", fake_server, tmp_path)
    assert asyncio.run(_run_batch(rerun_client, prompts)) == first
    assert len(fake_server.requests) == requests
    assert rerun_client.usage_summary().total.cache_hits == 6


def test_concurrent_calls_overlap_up_to_the_limit(tmp_path: Path) -> None:
    with FakeLLMServer(gate=4) as server:
        client = server_client(
            "openai:gpt-4o", server, tmp_path, config=ModelConfig(concurrency=4, timeout_s=30)
        )
        asyncio.run(_run_batch(client, [f"p{i}" for i in range(16)]))
        assert server.state.max_in_flight == 4


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(MissingCredentialError, match="OPENAI_API_KEY"):
        create_provider("openai:gpt-4o")
    with pytest.raises(MissingCredentialError, match="VLLM_KEY"):
        create_provider("openai:m", base_url="https://example.org/v1", api_key_env="VLLM_KEY")
    # A server on this machine needs no key.
    create_provider("openai:m", base_url="http://127.0.0.1:8000/v1")


def test_base_url_from_environment(
    fake_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.openai_base_url)
    provider = create_provider("openai:gpt-4o")
    client = ModelClient(provider, cache=None)
    assert asyncio.run(client.generate(_ask("env"), stage="s"))[0].text == "reply to env #0"


def test_options_arrive_as_strings_and_typos_are_errors() -> None:
    provider = create_provider(
        "openai:my-o-like-model", base_url="http://localhost:1/v1", reasoning_model="true"
    )
    assert provider.reasoning_model
    with pytest.raises(ValueError, match="reasoning_modle"):
        create_provider("openai:m", base_url="http://localhost:1/v1", reasoning_modle="true")


def test_sampling_and_server_options_reach_the_request_body(
    fake_server: FakeLLMServer, tmp_path: Path
) -> None:
    client = server_client(
        "openai:Qwen/Qwen3-8B",
        fake_server,
        tmp_path,
        top_p="0.9",
        top_k="20",
        seed="5",
        stop='["###"]',
        chat_template_kwargs='{"enable_thinking": false}',
        extra_body='{"min_p": 0.05}',
    )
    asyncio.run(client.generate(_ask("hi"), stage="solve"))
    (request,) = fake_server.requests
    body = request.body
    assert body["top_p"] == 0.9 and body["seed"] == 5 and body["stop"] == ["###"]
    # vLLM/SGLang extensions travel in the body as the server expects them
    assert body["top_k"] == 20 and body["min_p"] == 0.05
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


def test_a_bad_json_option_is_a_one_line_error() -> None:
    from arcmemo.core.registry import RegistryError

    with pytest.raises(RegistryError, match="extra_body: Value error, not valid JSON"):
        create_provider("openai:m", base_url="http://127.0.0.1:1/v1", extra_body="{oops")


@pytest.mark.parametrize("where", ["usage", "header"])
def test_a_gateways_own_cost_is_used(
    fake_server: FakeLLMServer, tmp_path: Path, where: str
) -> None:
    if where == "usage":
        fake_server.state.usage_cost = 0.0123  # OpenRouter
    else:
        fake_server.state.cost_header = "0.0123"  # LiteLLM proxy
    client = server_client("openai:some/unpriced-model", fake_server, tmp_path)
    asyncio.run(client.generate(_ask("hi"), stage="solve", n=2))
    assert client.usage_summary().total.cost_usd == pytest.approx(0.0123)


def test_every_request_a_server_received_is_one_line_of_the_call_log(
    fake_server: FakeLLMServer, tmp_path: Path
) -> None:
    # llama.cpp answers one choice whatever n asks: a call for 3 samples costs 3 requests
    # (the first and two seeded follow-ups), and a failed request is a request too.
    fake_server.state.ignore_n = True
    client = server_client(
        "openai:local-model",
        fake_server,
        tmp_path,
        sleep=RecordingSleep(),
        config=ModelConfig(timeout_s=0.5),
    )
    with pytest.warns(UserWarning, match="ignores n"):
        asyncio.run(client.generate(_ask("q"), stage="solve", task_id="a", n=3, seed=100))
    fake_server.inject("500")
    asyncio.run(client.generate(_ask("other"), stage="solve", task_id="b", n=2, seed=7))
    asyncio.run(client.generate(_ask("q"), stage="solve", task_id="a", n=3, seed=100))  # cached
    # A request that hangs is timed out with its sibling in flight: both reached the server.
    fake_server.inject("hang")
    asyncio.run(client.generate(_ask("third"), stage="solve", task_id="c", n=2, seed=9))
    asyncio.run(client.aclose())
    lines = [
        CallRecord.model_validate_json(line)
        for line in (tmp_path / "calls.jsonl").read_text().splitlines()
    ]
    requests = [line for line in lines if line.attempts]
    # b: two one-sample requests, one failing; the retried attempt sends both again.
    # c: the same, with the hung request timed out.
    assert len(requests) == len(fake_server.requests) == 3 + 4 + 4
    assert sorted(line.seed for line in requests if line.task_id == "a") == [100, 101, 102]
    assert sorted(s for line in requests if line.task_id == "a" for s in line.samples) == [0, 1, 2]
    assert [line.status for line in requests if line.error] == [500, None]
    assert len({line.call_id for line in lines}) == 4  # the cached call: one line, no request
    usage = client.usage_summary().total
    assert (usage.calls, usage.requests, usage.samples, usage.cache_hits) == (4, 11, 10, 3)
    assert usage_from_records(lines) == client.usage_summary()
