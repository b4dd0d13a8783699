from collections.abc import Iterator

import pytest

from arcmemo.sandbox import Sandbox, get_sandbox


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = get_sandbox("local", max_workers=2)
    yield box
    box.close()
