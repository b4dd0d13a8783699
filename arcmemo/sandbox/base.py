"""The one interface every sandbox implements, its records, and the registry of sandboxes.

A sandbox runs untrusted, model-written Python source in isolation and reports, per call,
what came back. ``call`` is the general entry point; ``run_transform`` is the ARC shape of it
(``transform(np.array(grid))`` on each input, outputs validated as grids).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from arcmemo.sandbox.grids import Grid, InvalidGridError, validate_grid

ErrorKind = Literal[
    "exception", "timeout", "memory", "syntax", "invalid_output", "crashed", "forbidden"
]


class SandboxLimits(BaseModel):
    """Resource limits applied to every call."""

    timeout_s: float = Field(
        default=2.0,
        gt=0,
        description="Wall-clock and CPU limit per call (and for the program's top level).",
    )
    memory_mb: int = Field(
        default=1024,
        gt=0,
        description="Address space the program may use beyond the warm interpreter.",
    )
    max_output_bytes: int = Field(
        default=1_000_000,
        ge=0,
        description="Cap on captured stdout/stderr per call; the rest is dropped.",
    )
    max_file_bytes: int = Field(
        default=16_000_000,
        ge=0,
        description="Largest file the program may write in its working directory.",
    )


class CallResult(BaseModel):
    """What one call of the program's function produced."""

    ok: bool = Field(description="True when the call returned a valid value.")
    value: Any = Field(
        default=None,
        description="JSON-able return value (numpy arrays converted to lists); for run_transform "
        "the output grid as list[list[int]].",
    )
    error: str | None = Field(
        default=None,
        description="Human-readable error: trimmed traceback of program frames, or a reason.",
    )
    error_kind: ErrorKind | None = Field(
        default=None, description="Class of failure; None when ok."
    )
    stdout: str = Field(default="", description="Captured stdout and stderr of the call (capped).")
    duration_s: float = Field(default=0.0, description="Wall time of the call.")


class Sandbox(abc.ABC):
    """Runs untrusted Python source in isolation.

    Implementations must be safe to use from several threads at once.
    """

    @abc.abstractmethod
    def _execute(
        self,
        source: str,
        function: str,
        args_list: list[list[Any]],
        limits: SandboxLimits,
        *,
        arc_transform: bool,
    ) -> list[CallResult]:
        """Exec ``source`` once in a fresh isolated process and call ``function`` per args.

        With ``arc_transform`` the program gets ``np`` (numpy) in its globals and every
        argument is passed through ``np.array`` before the call.
        """

    def call(
        self,
        source: str,
        function: str,
        args_list: list[list[Any]],
        *,
        limits: SandboxLimits | None = None,
    ) -> list[CallResult]:
        """Exec ``source`` once, then return ``function(*args)`` for each ``args`` in order.

        Arguments are JSON-able and passed as they are (grids arrive as lists of lists).
        A timeout or crash in one call does not lose the others: the remaining calls run in
        a fresh process. A syntax error makes every result ``error_kind="syntax"``.
        """
        if not args_list:
            return []
        return self._execute(
            source, function, args_list, limits or SandboxLimits(), arc_transform=False
        )

    def run_transform(
        self, program: str, grids: list[Grid], *, limits: SandboxLimits | None = None
    ) -> list[CallResult]:
        """Run ``transform(np.array(grid))`` for each grid and validate every output grid.

        ``np`` (numpy) is available to the program without an import. An output that is not
        a rectangular 2-D grid of ints 0-9 of size 1x1..30x30 gives
        ``error_kind="invalid_output"`` with the reason; ``value`` then keeps what the
        program returned.
        """
        if not grids:
            return []
        results = self._execute(
            program,
            "transform",
            [[grid] for grid in grids],
            limits or SandboxLimits(),
            arc_transform=True,
        )
        return [_check_grid(result) for result in results]

    def close(self) -> None:  # noqa: B027 - optional for sandboxes that hold nothing
        """Release worker processes and temporary files; the sandbox is unusable afterwards."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _check_grid(result: CallResult) -> CallResult:
    if not result.ok:
        return result
    if result.value is None:
        message = "transform returned None; it must return the output grid (missing `return`?)"
        return result.model_copy(
            update={"ok": False, "error": message, "error_kind": "invalid_output"}
        )
    try:
        grid = validate_grid(result.value)
    except InvalidGridError as error:
        return result.model_copy(
            update={"ok": False, "error": str(error), "error_kind": "invalid_output"}
        )
    return result.model_copy(update={"value": grid})


_REGISTRY: dict[str, Callable[..., Sandbox]] = {}


def register_sandbox(name: str) -> Callable[[Callable[..., Sandbox]], Callable[..., Sandbox]]:
    """Class decorator: make a sandbox implementation available as ``get_sandbox(name)``."""

    def decorate(factory: Callable[..., Sandbox]) -> Callable[..., Sandbox]:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"sandbox {name!r} is already registered")
        _REGISTRY[name] = factory
        return factory

    return decorate


def get_sandbox(name: str = "local", **options: Any) -> Sandbox:
    """Build the sandbox registered as ``name`` with ``options`` (see each implementation)."""
    # Implementations register themselves on import; import the built-in ones lazily here.
    import arcmemo.sandbox.local  # noqa: F401

    if name not in _REGISTRY:
        raise KeyError(f"unknown sandbox {name!r}; known: {sorted(_REGISTRY)}")
    return _REGISTRY[name](**options)
