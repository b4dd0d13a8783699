from __future__ import annotations

from collections.abc import Iterator

import pytest

from arcmemo.core.registry import ComponentSpec
from arcmemo.memory.schema import Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.sandbox import SANDBOXES, Sandbox


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = SANDBOXES.create(ComponentSpec(name="bwrap", options={"max_workers": 2}))
    yield box
    box.close()


@pytest.fixture(scope="session")
def arc_memory() -> Memory:
    """The seed ARC ontology as a memory."""
    return load_seed("arc")
