"""Sandboxes for the tests and small programs run in them."""

from __future__ import annotations

import pytest

from arcmemo.sandbox import (
    SANDBOXES,
    CallResult,
    Program,
    Sandbox,
    SandboxLimits,
    SandboxUnavailableError,
)


def make(name: str, **options: object) -> Sandbox:
    """A sandbox of kind ``name``; skips the test when the kind cannot run here."""
    try:
        return SANDBOXES.create(SANDBOXES.spec(name, options))
    except SandboxUnavailableError as error:
        pytest.skip(f"{name} sandbox unavailable here: {error}")


QUICK = SandboxLimits(timeout_s=1.0)

ARC_HARNESS = (
    "def _arcmemo_transform(grid):\n    import numpy\n    return transform(numpy.array(grid))\n"
)


def arc_program(source: str) -> Program:
    """The ARC shape: ``transform(np.array(grid))``, ``np`` bound without an import."""
    return Program(
        source=source, entry="_arcmemo_transform", harness=ARC_HARNESS, bindings={"np": "numpy"}
    )


def call(sandbox: Sandbox, source: str, entry: str, inputs: list[list[object]], **kw: object):
    """``entry(*args)`` per args of ``inputs``."""
    return sandbox.run(Program(source=source, entry=entry), inputs, **kw)  # type: ignore[arg-type]


def run(sandbox: Sandbox, body: str, *args: object, limits: SandboxLimits = QUICK) -> CallResult:
    """Run ``def attack(*args): <body>`` once."""
    indented = "\n".join("    " + line for line in body.strip().splitlines())
    source = f"def attack(*args):\n{indented}\n"
    return sandbox.run(Program(source=source, entry="attack"), [list(args)], limits=limits)[0]


def still_works(sandbox: Sandbox) -> bool:
    """The sandbox still runs a trivial program correctly."""
    return call(sandbox, "def f():\n    return 42\n", "f", [[]])[0].value == 42
