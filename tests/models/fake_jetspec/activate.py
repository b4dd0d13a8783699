"""Put the fake ``jetspec`` and ``torch`` first on ``sys.path`` for one test.

Used by a pytest fixture: ``activate(monkeypatch)`` hides any real torch/jetspec modules
already imported (monkeypatch restores them afterwards) and returns the fake
``jetspec.inference_engine`` module; call ``deactivate()`` in the fixture's teardown,
before monkeypatch undoes its changes, so no fake module leaks into later tests.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

FAKE_ROOT = Path(__file__).resolve().parent
_FAKE_PACKAGES = ("torch", "jetspec")


def _is_faked(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in _FAKE_PACKAGES)


def activate(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    for name in [n for n in sys.modules if _is_faked(n)]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(FAKE_ROOT))
    engine_module = importlib.import_module("jetspec.inference_engine")
    assert engine_module.__file__ is not None
    assert Path(engine_module.__file__).is_relative_to(FAKE_ROOT), engine_module.__file__
    return engine_module


def deactivate() -> None:
    for name in [n for n in sys.modules if _is_faked(n)]:
        module_file = getattr(sys.modules[name], "__file__", None) or ""
        if module_file.startswith(str(FAKE_ROOT)):
            del sys.modules[name]
