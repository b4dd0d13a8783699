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
