"""Fixtures for the model-layer tests: a local fake LLM server and test credentials."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arcmemo.models import ModelClient, ModelConfig, ResponseCache, create_provider

from .fake_server import FakeLLMServer

OPENAI_TEST_KEY = "sk-test-OPENAISECRET0123456789"
ANTHROPIC_TEST_KEY = "sk-ant-test-ANTHROPICSECRET0123456789"


class RecordingSleep:
    """Backoff sleep that only records the requested delays (tests never wait)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def fake_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def api_keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_TEST_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_TEST_KEY)
    for variable in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ARCMEMO_PRICES"):
        monkeypatch.delenv(variable, raising=False)
    return {"openai": OPENAI_TEST_KEY, "anthropic": ANTHROPIC_TEST_KEY}


def server_client(
    spec: str,
    server: FakeLLMServer,
    directory: Path,
    *,
    sleep: RecordingSleep | None = None,
    config: ModelConfig | None = None,
    **options: Any,
) -> ModelClient:
    """A ModelClient for ``spec`` talking to ``server``, with cache and log under ``directory``."""
    config = config or ModelConfig(timeout_s=5)
    base_url = server.openai_base_url if spec.startswith("openai:") else server.url
    provider = create_provider(spec, base_url=base_url, **options)
    return ModelClient(
        provider,
        config=config,
        cache=ResponseCache(directory / "cache", read=config.cache),
        call_log_path=directory / "calls.jsonl",
        sleep=sleep or RecordingSleep(),
        rng=random.Random(0),
    )
