"""The one interface every sandbox implements, its records, and the registry of sandboxes.

A sandbox runs an untrusted, model-written :class:`Program` in isolation: it executes the
program's source once (followed by the caller's trusted ``harness``, in the same module),
then calls the program's ``entry`` function once per input and reports, per call, what came
back as a :class:`CallResult`. Implementations are registered in :data:`SANDBOXES`:

* ``bwrap`` (the default, ``isolation="kernel"``): each warm worker runs inside bubblewrap
  namespaces with a read-only root made of the interpreter and an allowlist of packages;
* ``process`` (``isolation="process"``): the same workers without the kernel layer, only
  rlimits, deadlines and an in-process audit hook. Weaker; it says so when created.

What each layer contains is described in the README section "Security".
"""

from __future__ import annotations

import abc
import importlib.util
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from arcmemo.core.registry import Registry
from arcmemo.sandbox.text import clean_text

ErrorKind = Literal[
    "exception",
    "timeout",
    "memory",
    "syntax",
    "invalid_output",
    "crashed",
    "forbidden",
    "not_run",
]
"""``not_run``: a call skipped because an earlier one timed out or crashed and the program
asked to stop there (:attr:`Program.stop_after_failure`)."""
Isolation = Literal["kernel", "process"]

MAX_ERROR_CHARS = 4000
"""Longest error text a :class:`CallResult` carries, wherever the text came from."""
MAX_STDOUT_CHARS = 4000
"""Longest captured output a :class:`CallResult` carries, wherever the text came from."""


class SandboxUnavailableError(RuntimeError):
    """The sandbox cannot run here (a missing tool, disabled namespaces, a dead worker)."""


class Program(BaseModel):
    """An untrusted program and how to call it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(description="The untrusted program text.")
    entry: str = Field(description="Name of the function called once per input.")
    harness: str = Field(
        default="",
        description="Trusted code run after `source` in the same module (same globals); its "
        "frames never appear in the tracebacks a sandbox reports.",
    )
    bindings: dict[str, str] = Field(
        default_factory=dict,
        description="Global name -> module, imported and bound in the program's globals "
        'before it runs, e.g. {"np": "numpy"}.',
    )
    library: str = Field(
        default="",
        description="Source of the module `arcmemo_library` the program may import (a "
        "per-task library of memory functions; '' for none). It is built in the program's "
        "own process when first imported, under the same guard as the program, and exists "
        "nowhere else: no file, no other program's process.",
    )
    stop_after_failure: bool = Field(
        default=False,
        description="After the first call that times out or crashes, run no further calls: "
        "they come back as `not_run` (a hopeless program does not hold a worker for every "
        "remaining input's time limit).",
    )


class SandboxLimits(BaseModel):
    """Resource limits applied to every program."""

    model_config = ConfigDict(extra="forbid")

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
        default=MAX_STDOUT_CHARS,
        ge=0,
        le=MAX_STDOUT_CHARS,
        description="Characters of stdout/stderr kept per call; the rest is dropped.",
    )
    max_file_bytes: int = Field(
        default=16_000_000,
        ge=0,
        description="Largest file the program may write in its working directory.",
    )
    disk_mb: int = Field(
        default=64,
        gt=0,
        description="Disk space of the program's working directory (bwrap: the size of its "
        "private tmpfs; process: enforced as a budget of files of max_file_bytes each).",
    )


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _default_packages() -> list[str]:
    return ["numpy", "scipy"]


def _default_preload() -> list[str]:
    return ["scipy.ndimage"] if _installed("scipy") else []


class SandboxOptions(BaseModel):
    """Everything about a sandbox that can change results (recorded in ``config.json``)."""

    model_config = ConfigDict(extra="forbid")

    limits: SandboxLimits = Field(
        default_factory=SandboxLimits, description="Limits used when `run` is given none."
    )
    packages: list[str] = Field(
        default_factory=_default_packages,
        description="Site-packages the program may import (top-level names; each package's "
        "folder and its `<name>.libs` folder are visible, nothing else of site-packages). "
        "Packages that are not installed are left out.",
    )
    preload: list[str] = Field(
        default_factory=_default_preload,
        description="Modules imported once in each warm worker, so that no program pays their "
        "import against its time limit (missing ones are skipped).",
    )
    max_workers: int | None = Field(
        default=None,
        ge=1,
        description="Most programs run at once; None: the number of CPUs, at least 2.",
    )


class CallResult(BaseModel):
    """What one call of the program's entry function produced.

    Text fields are cleaned on construction (:func:`arcmemo.sandbox.text.clean_text`: lone
    surrogates escaped, control characters removed, length capped), so a result is safe to
    cache, log and put into a prompt whatever produced it.
    """

    ok: bool = Field(description="True when the call returned a JSON-able value.")
    value: Any = Field(
        default=None,
        description="JSON-able return value (numpy arrays and scalars converted to lists and "
        "numbers).",
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

    @field_validator("error")
    @classmethod
    def _cap_error(cls, value: str | None) -> str | None:
        return None if value is None else clean_text(value, MAX_ERROR_CHARS)

    @field_validator("stdout")
    @classmethod
    def _cap_stdout(cls, value: str) -> str:
        return clean_text(value, MAX_STDOUT_CHARS)


class Sandbox(abc.ABC):
    """Runs untrusted programs in isolation; safe to use from several threads at once."""

    isolation: ClassVar[Isolation]
    """``kernel``: contained by kernel namespaces; ``process``: by rlimits and a hook only."""

    def __init__(self, options: SandboxOptions) -> None:
        self.options = options

    @abc.abstractmethod
    def _execute(
        self, program: Program, inputs: list[list[Any]], limits: SandboxLimits
    ) -> list[CallResult]:
        """Run ``program`` on a non-empty list of inputs (see :meth:`run`)."""

    def run(
        self,
        program: Program,
        inputs: list[list[Any]],
        *,
        limits: SandboxLimits | None = None,
    ) -> list[CallResult]:
        """Exec the program once, then return ``entry(*args)`` for each ``args`` in order.

        Arguments are JSON-able and passed as they are. A timeout or crash in one call does
        not lose the others (the remaining calls run in a fresh process), unless the
        program has ``stop_after_failure``: then the remaining calls are ``not_run``. A
        syntax error makes every result ``error_kind="syntax"``. Never raises for anything
        the program does; ``limits=None`` means ``self.options.limits``.
        """
        if not inputs:
            return []
        return self._execute(program, inputs, limits or self.options.limits)

    def close(self) -> None:  # noqa: B027 - optional for sandboxes that hold nothing
        """Release worker processes and temporary files; the sandbox is unusable afterwards."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


SANDBOXES: Registry[Sandbox] = Registry(
    "sandbox",
    modules={"bwrap": "arcmemo.sandbox.bwrap", "process": "arcmemo.sandbox.process"},
)
"""Sandboxes by name; ``SANDBOXES.create(spec)`` builds one (``bwrap`` is the default)."""
