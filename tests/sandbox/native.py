"""Native code for the hostile tests: ``tests/fixtures/native/probe.c`` built at test time.

The module ``arcmemo_probe`` (one function, ``syscall(nr, *args) -> (result, errno)``) stands
for native code that a program got to run. It is compiled with the system compiler against
the running interpreter's headers (stable ABI); tests that need it skip, saying why, where
no compiler or no headers are found.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "native" / "probe.c"
MODULE = "arcmemo_probe"


def build(folder: Path) -> Path:
    """Compile the probe into ``folder``; return the shared object's path (or skip)."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc/gcc) to build the native probe (apt-get install gcc)")
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        pytest.skip(f"no Python.h under {include} to build the native probe (python3-dev)")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{MODULE}.abi3.so"
    command = [compiler, "-shared", "-fPIC", "-O1", f"-I{include}", str(SOURCE), "-o", str(target)]
    built = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if built.returncode != 0:
        pytest.skip(f"the native probe did not compile: {built.stderr.strip()[-300:]}")
    return target
