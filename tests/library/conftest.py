"""The library tests' fixtures: a bwrap sandbox and a library built once per module from
the programs of ``tests/fixtures/library``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arcmemo.library import BuildReport, build_library
from arcmemo.memory.schema import Memory
from arcmemo.sandbox import SANDBOXES, Sandbox, SandboxUnavailableError
from tests.support.library_programs import ENTRY_POINTS, pairs, programs, seeded_memory


@pytest.fixture(scope="module")
def bwrap() -> Iterator[Sandbox]:
    try:
        box = SANDBOXES.create(SANDBOXES.spec("bwrap", {"max_workers": 2}))
    except SandboxUnavailableError as error:
        pytest.skip(f"bwrap sandbox unavailable here: {error}")
    yield box
    box.close()


@pytest.fixture(scope="module")
def built(bwrap: Sandbox) -> tuple[Memory, BuildReport]:
    memory = seeded_memory()
    report = build_library(programs(), pairs(), memory, bwrap, entry_points=ENTRY_POINTS)
    return memory, report
