"""Locate the data folders (prompt templates, ontology files, split lists).

They live at the repository root in a checkout and under ``arcmemo/_data`` in an
installed wheel (see ``pyproject.toml``); callers never need to know which.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
_DATA_NAMES = {"prompts": "prompts", "ontology": "ontology", "splits": "experiments/splits"}


@cache
def data_dir(name: str) -> Path:
    """Return the folder holding the packaged data called ``name``.

    ``name`` is one of ``prompts``, ``ontology`` or ``splits``.
    """
    if name not in _DATA_NAMES:
        raise KeyError(f"unknown data folder {name!r}; known: {sorted(_DATA_NAMES)}")
    installed = _PACKAGE_DIR / "_data" / name
    if installed.is_dir():
        return installed
    checkout = _PACKAGE_DIR.parent / _DATA_NAMES[name]
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"arcmemo data folder {name!r} not found at {installed} or {checkout}; "
        "the installation is incomplete (reinstall with `pip install .`)"
    )


def user_data_dir() -> Path:
    """The user's data folder for arcmemo, where downloaded datasets go: on Linux
    ``$XDG_DATA_HOME/arcmemo`` (by default ``~/.local/share/arcmemo``), on macOS
    ``~/Library/Application Support/arcmemo``, on Windows ``%LOCALAPPDATA%\\arcmemo``."""
    import os
    import sys

    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "arcmemo"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "arcmemo"
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    base_dir = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base_dir / "arcmemo"
