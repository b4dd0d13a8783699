"""Fixtures for the model-layer tests: a local fake LLM server and test credentials."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_llm_server import FakeLLMServer
from tests.support.model_clients import ANTHROPIC_TEST_KEY, OPENAI_TEST_KEY


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
