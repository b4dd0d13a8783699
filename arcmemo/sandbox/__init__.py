"""Isolated execution of untrusted, model-written programs (see :mod:`arcmemo.sandbox.local`)."""

from arcmemo.sandbox.base import (
    CallResult,
    ErrorKind,
    Sandbox,
    SandboxLimits,
    get_sandbox,
    register_sandbox,
)
from arcmemo.sandbox.grids import Grid, InvalidGridError, validate_grid

__all__ = [
    "CallResult",
    "ErrorKind",
    "Grid",
    "InvalidGridError",
    "Sandbox",
    "SandboxLimits",
    "get_sandbox",
    "register_sandbox",
    "validate_grid",
]
