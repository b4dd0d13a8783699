"""Inert stand-ins for native modules that bypass audit hooks; installed in the worker first.

``_posixsubprocess.fork_exec`` forks and execs without any audit event (``subprocess.Popen``
raises one, but the native function can be called directly), so the worker registers a stub
whose ``fork_exec`` refuses; ``subprocess`` still imports (scipy imports it lazily).

The ctypes stub:

ctypes gives direct access to native memory and functions, which defeats any in-process
policy (``ctypes.memmove`` and pointer indexing raise no audit event). numpy and scipy import
it at start-up but use it only for optional features, so the worker registers this stub as
``ctypes`` first: libraries import fine, ctypes-backed features fail with ImportError, and the
real module is never loaded in the process (so its classes cannot be found by walking
``object.__subclasses__()`` either).
"""

from __future__ import annotations

import sys
import types
from typing import Any, NoReturn

_MESSAGE = "ctypes is not available in the sandbox"


def _unavailable(*args: Any, **kwargs: Any) -> NoReturn:
    raise ImportError(_MESSAGE)


class _InertCData:
    """Stands in for every ctypes data type: it can be named, subclassed and built, but it
    is a plain Python object that touches no native memory."""

    value = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    from_param = classmethod(_unavailable)
    from_address = classmethod(_unavailable)
    from_buffer = classmethod(_unavailable)
    from_buffer_copy = classmethod(_unavailable)
    in_dll = classmethod(_unavailable)


def _inert_function(*args: Any, **kwargs: Any) -> _InertCData:
    # Returns a placeholder rather than raising: scipy calls ctypes functions while importing.
    return _InertCData()


class _InertFuncPtr(_InertCData):
    """Base of the classes returned by the stub's CFUNCTYPE and friends."""


def _function_type(*args: Any, **kwargs: Any) -> type:
    return type("CFunctionType", (_InertFuncPtr,), {})


def build() -> types.ModuleType:
    """Return a fresh stub module."""
    module = types.ModuleType("ctypes", _MESSAGE)
    types_cache: dict[str, type] = {}

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in ("CFUNCTYPE", "PYFUNCTYPE", "WINFUNCTYPE"):
            return _function_type
        if name.startswith("c_") or name[:1].isupper() or name.startswith("_"):
            if name not in types_cache:
                types_cache[name] = type(name, (_InertCData,), {})
            return types_cache[name]
        return _inert_function

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module


def _refuse_fork_exec(*args: Any, **kwargs: Any) -> NoReturn:
    # A sibling module in the worker process.
    from _guard import SandboxViolation  # type: ignore[import-not-found]

    raise SandboxViolation("sandbox: process creation (_posixsubprocess.fork_exec) refused")


def install() -> None:
    """Register the stubs; the real ctypes and _posixsubprocess must not be loaded yet."""
    for name in ("ctypes", "_ctypes", "_posixsubprocess"):
        if name in sys.modules:
            raise RuntimeError(f"the real {name} module is already loaded")
    sys.modules["ctypes"] = build()
    for name in ("_ctypes", "ctypes.util", "ctypes.wintypes", "ctypes.macholib"):
        sys.modules[name] = None  # type: ignore[assignment]
    posixsubprocess = types.ModuleType("_posixsubprocess", "stub: process creation refused")
    posixsubprocess.fork_exec = _refuse_fork_exec  # type: ignore[attr-defined]
    sys.modules["_posixsubprocess"] = posixsubprocess


def install_numpy_ctypeslib() -> None:
    """After ``import numpy``: replace ``numpy.ctypeslib`` (which needs real ctypes) by a stub.

    scipy's array-API layer re-exports everything in ``numpy.__all__``, ctypeslib included.
    """
    import numpy

    stub = types.ModuleType("numpy.ctypeslib", _MESSAGE)
    stub.__getattr__ = lambda name: _inert_function  # type: ignore[method-assign]
    sys.modules["numpy.ctypeslib"] = stub
    numpy.ctypeslib = stub
