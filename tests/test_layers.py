"""The package's layout is its architecture: every module sits in a folder that a layer of
the import contract names, and only the package's own entry files sit loose."""

from __future__ import annotations

from pathlib import Path

import pytest

# Python 3.10 has no TOML reader; the layout is checked on CI's main Python.
tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "arcmemo"


def _contract_layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (top,) = [c for c in contracts if c.get("containers") == ["arcmemo"]]
    return [name.strip() for layer in top["layers"] for name in layer.split("|")]


def _modules() -> list[str]:
    """Every importable module of the package, dotted below ``arcmemo``."""
    names = []
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            names.append(".".join(parts))
    return sorted(names)


def test_only_the_entry_files_sit_loose_in_the_package() -> None:
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py", "__main__.py"]


def test_every_module_is_in_a_layer_of_the_import_contract() -> None:
    layers = _contract_layers()
    # A folder that the contract splits into modules (core/) is itself a package only.
    split = {name.rpartition(".")[0] for name in layers if "." in name}
    outside = [
        module
        for module in _modules()
        if module != "__main__"
        and module not in split
        and not any(module == layer or module.startswith(layer + ".") for layer in layers)
    ]
    assert outside == [], f"modules no layer of pyproject.toml's contract names: {outside}"
