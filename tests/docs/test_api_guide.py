"""Every Python block of the API guide runs, in order, in one namespace, in an empty folder
(no key: the guide's model is the scripted provider)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.docs_blocks import DOCS, blocks

GUIDE = DOCS / "api.md"


def python_blocks() -> list[str]:
    return [b.body for b in blocks(GUIDE) if b.info == "python"]


def test_the_guide_has_its_blocks() -> None:
    found = python_blocks()
    assert len(found) >= 4
    assert any("run_benchmark" in b for b in found)
    assert any("ABSTRACTORS" in b for b in found)


@pytest.mark.slow
def test_every_python_block_of_the_guide_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "api_guide"}
    for number, body in enumerate(python_blocks(), 1):
        code = compile(body, f"{GUIDE.name}, python block {number}", "exec")
        exec(code, namespace)  # the page's own code, run as the reader would
    assert (tmp_path / "runs" / "api" / "summary.json").is_file()
    assert os.path.getsize(tmp_path / "memory.json") > 0
