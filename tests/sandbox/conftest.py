"""Sandboxes for the tests: every test that takes ``sandbox`` runs under each kind.

``bwrap`` is skipped, with the reason, where bubblewrap or user namespaces are unavailable
(CI installs bubblewrap, so there it runs). ``kernel_only`` is the bwrap sandbox with the
audit hook switched off: attacks run against it show what the kernel layer holds by itself.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arcmemo.sandbox import Sandbox
from tests.support.sandboxes import make


@pytest.fixture(scope="module", params=["bwrap", "process"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    box = make(request.param, max_workers=2)
    yield box
    box.close()


@pytest.fixture(scope="module")
def kernel_only() -> Iterator[Sandbox]:
    box = make("bwrap", max_workers=1, audit_hook=False)
    yield box
    box.close()


@pytest.fixture(scope="module")
def bwrap() -> Iterator[Sandbox]:
    box = make("bwrap", max_workers=2)
    yield box
    box.close()
