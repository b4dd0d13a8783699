"""Shared fixtures for the memory tests: a small deterministic memory and golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arcmemo.memory.schema import Memory
from tests.support.memories import build_small_memory

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "memory"


@pytest.fixture
def small_memory() -> Memory:
    return build_small_memory()


@pytest.fixture
def golden():
    """Compare text with tests/fixtures/memory/<name>; ARCMEMO_UPDATE_GOLDEN=1 rewrites it."""

    def check(name: str, text: str) -> None:
        path = FIXTURES / name
        if os.environ.get("ARCMEMO_UPDATE_GOLDEN"):
            path.write_bytes(text.encode("utf-8"))
        assert path.exists(), f"golden file {path} missing; run with ARCMEMO_UPDATE_GOLDEN=1"
        assert text.encode("utf-8") == path.read_bytes(), f"rendering differs from {path}"

    return check
