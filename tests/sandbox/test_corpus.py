"""Real-looking programs are never rejected for the sandbox's own reasons."""

from __future__ import annotations

import pytest

from arcmemo.sandbox import Sandbox, SandboxLimits
from tests.support.sandbox_corpus import CORPUS
from tests.support.sandboxes import arc_program, call


@pytest.mark.parametrize(("name", "source", "grid", "expected"), CORPUS, ids=[c[0] for c in CORPUS])
def test_ordinary_programs_pass(
    sandbox: Sandbox, name: str, source: str, grid: list[list[int]], expected: list[list[int]]
) -> None:
    result = sandbox.run(arc_program(source), [[grid]], limits=SandboxLimits(timeout_s=5))[0]
    assert result.ok, result.error
    assert result.value == expected


def test_preloaded_scipy_costs_a_program_nothing(sandbox: Sandbox) -> None:
    # Imported once in the zygote, so it is there before the program asks for it.
    probe = "import sys\ndef f():\n    return 'scipy.ndimage' in sys.modules\n"
    assert call(sandbox, probe, "f", [[]])[0].value is True
