"""Several --base-url endpoints of one deployment: spread, capped per endpoint, failover
(unit tests on fake clients), and the real SDK against two local servers, one killed."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from arcmemo.models import Message, ModelClient, ModelConfig, ResponseCache, create_provider
from arcmemo.models.endpoints import EndpointPool, key_url, pool_identity, split_urls
from arcmemo.models.redact import public_url
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.pipeline import run_benchmark
from tests.support.fake_llm_server import FakeLLMServer
from tests.support.model_clients import RecordingSleep


class Down(Exception):
    """A fake client's endpoint failure."""


class FakeClient:
    def __init__(self, url: str | None) -> None:
        self.url = url
        self.in_flight = 0
        self.max_in_flight = 0
        self.answered = 0
        self.dead = False

    async def ask(self, text: str) -> str:
        if self.dead:
            raise Down(self.url)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.01)
        finally:
            self.in_flight -= 1
        self.answered += 1
        return f"{self.url}: {text}"


def pool(urls: list[str], **options: object) -> EndpointPool[FakeClient]:
    return EndpointPool(
        urls,
        FakeClient,
        failed=lambda error: isinstance(error, Down),
        **options,  # type: ignore[arg-type]
    )


async def ask_all(endpoints: EndpointPool[FakeClient], count: int) -> list[str]:
    async def one(i: int) -> str:
        return await endpoints.call(lambda client: client.ask(str(i)))

    return await asyncio.gather(*(one(i) for i in range(count)))


def test_requests_spread_evenly_within_the_per_endpoint_cap() -> None:
    endpoints = pool(["http://a/v1", "http://b/v1", "http://c/v1"], concurrency=2)
    answers = asyncio.run(ask_all(endpoints, 30))
    assert sorted(a.split(": ")[1] for a in answers) == sorted(str(i) for i in range(30))
    clients = endpoints.clients
    assert [c.answered for c in clients] == [10, 10, 10]
    assert all(c.max_in_flight == 2 for c in clients)  # capped, and the cap was used


def test_a_failed_endpoint_cools_down_and_its_requests_go_elsewhere() -> None:
    now = [0.0]
    endpoints = pool(["http://a/v1", "http://b/v1"], cooldown_s=30, clock=lambda: now[0])
    a = endpoints.clients[0]
    a.dead = True
    answers = asyncio.run(ask_all(endpoints, 10))
    assert all(answer.startswith("http://b/v1") for answer in answers)
    assert endpoints.statistics()["http://a/v1"]["failed"] >= 1
    failed = endpoints.statistics()["http://a/v1"]["failed"]
    asyncio.run(ask_all(endpoints, 10))  # still cooling down: not asked again
    assert endpoints.statistics()["http://a/v1"]["failed"] == failed
    a.dead, now[0] = False, 31.0  # recovered, cool-down over
    asyncio.run(ask_all(endpoints, 10))
    assert a.answered > 0


def test_every_endpoint_failing_raises_and_other_errors_are_not_failed_over() -> None:
    endpoints = pool(["http://a/v1", "http://b/v1"])
    for client in endpoints.clients:
        client.dead = True
    with pytest.raises(Down):
        asyncio.run(ask_all(endpoints, 1))
    assert [s["failed"] for s in endpoints.statistics().values()] == [1, 1]  # each once

    calls: list[str | None] = []

    async def bad_request(client: FakeClient) -> str:
        calls.append(client.url)
        raise ValueError("400: the request itself is wrong")

    with pytest.raises(ValueError):
        asyncio.run(pool(["http://a/v1", "http://b/v1"]).call(bad_request))
    assert len(calls) == 1


def test_urls_and_identity_ignore_order_and_spelling() -> None:
    assert split_urls(" http://a:1/v1, http://b:2/v1/ ,") == ["http://a:1/v1", "http://b:2/v1/"]
    assert pool_identity(["http://B:2/v1/", "http://a:1/v1"]) == pool_identity(
        ["http://a:1/v1", "http://b:2/v1"]
    )
    assert pool_identity(["http://user:pw@a:1/v1/"]) == public_url("http://a:1/v1")
    assert pool_identity([]) is None
    assert key_url("http://127.0.0.1:1/v1,https://api.example.com/v1") == (
        "https://api.example.com/v1"
    )


# -- the openai provider against two local servers ---------------------------------------------


def two_url(first: FakeLLMServer, second: FakeLLMServer) -> str:
    return f"{first.openai_base_url},{second.openai_base_url}/"


def client_for(
    base_url: str, directory: Path, sleep: RecordingSleep | None = None, **options: str
) -> ModelClient:
    config = ModelConfig(timeout_s=10)
    return ModelClient(
        create_provider("openai:local-model", base_url=base_url, **options),
        config=config,
        cache=ResponseCache(directory / "cache"),
        call_log_path=directory / "calls.jsonl",
        sleep=sleep or RecordingSleep(),
        rng=random.Random(0),
    )


def ask(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def test_a_5xx_endpoint_is_failed_over_without_a_client_retry(tmp_path: Path) -> None:
    with FakeLLMServer() as first, FakeLLMServer() as second:
        first.inject("500", "500", "500")
        sleep = RecordingSleep()
        client = client_for(two_url(first, second), tmp_path, sleep, endpoint_cooldown_s="60")

        async def go() -> list[str]:
            answers = [
                (await client.generate(ask(f"q{i}"), stage="solve"))[0].text for i in range(6)
            ]
            await client.aclose()
            return answers

        answers = asyncio.run(go())
    assert answers == [f"reply to q{i} #0" for i in range(6)]
    assert len(first.requests) == 1 and len(second.requests) == 6  # out after one 500
    assert sleep.delays == []  # no backoff: the pool sent it on at once
    assert client.usage_summary().total.calls == 6


def test_killing_one_of_two_endpoints_mid_run_loses_nothing(
    tmp_path: Path, aime_sums: ModuleType
) -> None:
    data = aime_sums.write_problems(tmp_path / "sums.jsonl", 16)
    with FakeLLMServer(latency_s=0.05) as first, FakeLLMServer(latency_s=0.05) as second:
        config = RunConfig(
            benchmark="aime",
            data=str(data),
            model="openai:local-model",
            base_url=two_url(first, second),
            attempts=2,
            out=tmp_path / "run",
            models=ModelConfig(concurrency=4, cache_dir=tmp_path / "cache"),
        )

        async def run_and_kill() -> dict[str, object]:
            async def kill_first() -> None:
                while len(first.requests) < 3:
                    await asyncio.sleep(0.005)
                await asyncio.to_thread(first.stop)  # new connections are refused

            killer = asyncio.create_task(kill_first())
            summary = await run_benchmark(config)
            await killer
            return summary

        summary = asyncio.run(run_and_kill())
    assert summary["complete"] and summary["n_errors"] == 0 and summary["n_tasks"] == 16
    # Every request was answered once, by one server: none lost, none answered twice.
    assert len(first.requests) >= 3 and len(first.requests) + len(second.requests) == 16
    lines = RunDirectory(tmp_path / "run").results_path.read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert sorted(r["task_id"] for r in rows) == sorted(f"sum-{k}" for k in range(16))
    for row in rows:  # each task holds the answers to its own prompt, once per attempt
        k = row["task_id"].removeprefix("sum-")
        texts = [a["steps"][0]["completion"] for a in row["attempts"]]
        assert len(texts) == 2 and all(f"What is {k} plus one hundred?" in t for t in texts)
    calls = RunDirectory(tmp_path / "run").calls()
    assert len(calls) == 16 and not any(c.error for c in calls)
    assert all(c.attempts == 1 for c in calls)  # the pool failed over: no client retries
    assert Counter(c.task_id for c in calls).most_common(1)[0][1] == 1


def test_endpoint_spelling_and_order_keep_the_cache(tmp_path: Path) -> None:
    with FakeLLMServer() as first, FakeLLMServer() as second:
        client = client_for(two_url(first, second), tmp_path)
        asyncio.run(client.generate(ask("q"), stage="solve"))
        asyncio.run(client.aclose())
        served = len(first.requests) + len(second.requests)
        respelled = f"{second.openai_base_url}/, {first.openai_base_url}"
        again = client_for(respelled, tmp_path)
        (completion,) = asyncio.run(again.generate(ask("q"), stage="solve"))
        asyncio.run(again.aclose())
    assert completion.cache_hit and len(first.requests) + len(second.requests) == served


def test_base_url_is_repeatable_on_the_command_line(tmp_path: Path, aime_sums: ModuleType) -> None:
    from click.testing import CliRunner

    from arcmemo.cli.main import cli

    data = aime_sums.write_problems(tmp_path / "sums.jsonl", 6)
    out = tmp_path / "run"
    with FakeLLMServer(latency_s=0.02) as first, FakeLLMServer(latency_s=0.02) as second:
        result = CliRunner().invoke(
            cli,
            [
                *("run", "aime", "--data", str(data), "--model", "openai:local-model"),
                *("--base-url", first.openai_base_url, "--base-url", second.openai_base_url),
                *("--model-arg", "endpoint_concurrency=1", "--out", str(out)),
            ],
            env={"COLUMNS": "300"},
        )
        assert result.exit_code in (0, 3), result.output  # the fake's answers are wrong
        served = (len(first.requests), len(second.requests))
        peaks = (first.state.max_in_flight, second.state.max_in_flight)
    saved = json.loads((out / "config.json").read_text())
    assert saved["endpoints"]["solver"] == f"{first.openai_base_url},{second.openai_base_url}"
    assert sum(served) == 6 and min(served) >= 1 and peaks == (1, 1)  # both, one at a time
