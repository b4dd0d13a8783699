"""The scripted models of ``tests/fixtures/`` as modules, each loaded once per process.

The same files are also played by runs as ``--model scripted:FILE``; tests load them to
build their scripts with the files' helpers (``yaml_block``, ``build_plan``, ...).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tests.support.paths import FIXTURES, SCRIPTS

LOOP_MODEL_FILE = FIXTURES / "loop" / "loop_model.py"


def loop_model() -> ModuleType:
    """``tests/fixtures/loop/loop_model.py`` (the same object on every call)."""
    return _load("arcmemo_loop_model_fixture", LOOP_MODEL_FILE)


def script_module(name: str) -> ModuleType:
    """``tests/fixtures/scripts/<name>.py`` (the same object on every call)."""
    return _load(f"{name}_fixture", SCRIPTS / f"{name}.py")


def _load(name: str, path: Path) -> ModuleType:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
