"""Isolated execution of untrusted, model-written programs.

``SANDBOXES.create("bwrap")`` (the default: kernel namespaces) or ``"process"`` (hook only,
weaker) builds a :class:`Sandbox`; ``sandbox.run(Program(...), inputs)`` runs a program.
What each layer contains: the README section "Security".
"""

from arcmemo.sandbox.base import (
    SANDBOXES,
    CallResult,
    ErrorKind,
    Program,
    Sandbox,
    SandboxLimits,
    SandboxOptions,
    SandboxUnavailableError,
)

__all__ = [
    "SANDBOXES",
    "CallResult",
    "ErrorKind",
    "Program",
    "Sandbox",
    "SandboxLimits",
    "SandboxOptions",
    "SandboxUnavailableError",
]
