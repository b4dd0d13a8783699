"""Model clients for the model-layer tests: talking to a fake server, never sleeping."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from arcmemo.models import ModelClient, ModelConfig, ResponseCache, create_provider
from tests.support.fake_llm_server import FakeLLMServer

OPENAI_TEST_KEY = "sk-test-OPENAISECRET0123456789"
ANTHROPIC_TEST_KEY = "sk-ant-test-ANTHROPICSECRET0123456789"


class RecordingSleep:
    """Backoff sleep that only records the requested delays (tests never wait)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


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
