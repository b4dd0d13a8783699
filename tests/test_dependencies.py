"""Every package the installed ``arcmemo`` imports is declared in pyproject.toml.

A package that only arrives with another one (httpx with openai 1.x; openai 3.x depends
on httpx2 instead) works in a developer's environment and is missing from a user's plain
``pip install .``. Optional packages are declared in an extra, or listed below with the
reason a missing one is harmless (an extra's package may be imported at import time by the
module of its feature, such as arcmemo.integrations.inspect_eval, which only inspect loads).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# import name -> distribution name, where they differ
DISTRIBUTIONS = {"yaml": "pyyaml", "llama_cpp": "llama-cpp-python"}

# imported only where their feature is used, and not on PyPI or not worth an extra
OPTIONAL = {
    "jetspec": "the jetspec provider: JetSpec installs from its source, not from PyPI",
    "torch": "the jetspec provider: comes with JetSpec",
    "transformers": "the jetspec provider: comes with JetSpec",
    "triton": "the jetspec provider: comes with JetSpec's kernel extra",
    "pyarrow": "AIME data in Parquet: a clear error names the package when it is missing",
}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> tuple[set[str], set[str]]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def names(requirements: list[str]) -> set[str]:
        return {_normal(re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0]) for r in requirements}

    extras = set().union(*(names(r) for r in project["optional-dependencies"].values()))
    return names(project["dependencies"]), extras


def _imports() -> dict[str, tuple[str, bool]]:
    """Third-party top-level modules imported under arcmemo/: the first file importing
    each, and whether any import of it runs when its module is imported (not in a def)."""
    found: dict[str, tuple[str, bool]] = {}
    for path in sorted((ROOT / "arcmemo").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        in_function = {
            id(node)
            for function in ast.walk(tree)
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(function)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top == "arcmemo":
                    continue
                if (path.parent / f"{top}.py").is_file():
                    continue  # a script's sibling (the sandbox worker imports its own files)
                where, eager = found.get(top, (str(path.relative_to(ROOT)), False))
                found[top] = (where, eager or id(node) not in in_function)
    return found


def test_every_imported_package_is_declared() -> None:
    core, extras = _declared()
    missing = []
    for module, (where, eager) in sorted(_imports().items()):
        if module in OPTIONAL and not eager:
            continue
        distribution = _normal(DISTRIBUTIONS.get(module, module))
        if distribution in core or distribution in extras:
            continue
        missing.append(f"{module} ({where}{', at import time' if eager else ''})")
    assert not missing, f"imported but not declared in [project] dependencies: {missing}"
