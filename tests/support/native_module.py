"""Native code for the hostile tests: ``tests/fixtures/native/probe.c`` built at test time.

The module ``arcmemo_probe`` (one function, ``syscall(nr, *args) -> (result, errno)``) stands
for native code that a program got to run. It is compiled with the system compiler against
the running interpreter's headers (stable ABI); tests that need it skip, saying why, where
no compiler or no headers are found.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from arcmemo.sandbox import _seccomp
from tests.support.paths import FIXTURES

SOURCE = FIXTURES / "native" / "probe.c"
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


def syscall_numbers(*names: str) -> dict[str, int]:
    """The numbers of the named system calls this architecture has."""
    numbers = {name: _seccomp.syscall_number(name) for name in names}
    return {name: number for name, number in numbers.items() if number is not None}


def plant_key(secret: bytes) -> int:
    """Add a key holding ``secret`` to the caller's session keyring (or skip); its id."""
    libc = ctypes.CDLL(None, use_errno=True)
    number = _seccomp.syscall_number("add_key")
    if number is None:
        pytest.skip("no add_key syscall on this architecture")
    key = libc.syscall(number, b"user", b"arcmemo-test-key", secret, len(secret), -3)
    if key < 0:
        pytest.skip(f"cannot plant a key here (add_key: {errno.errorcode[ctypes.get_errno()]})")
    return int(key)
