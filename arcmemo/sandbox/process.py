"""The ``process`` sandbox: warm zygotes without the kernel layer (the explicit, weaker mode).

Use it only where bubblewrap or user namespaces are unavailable. A program runs in a forked
child of a zygote started with ``python -I`` in a new network namespace when ``unshare -n``
is permitted, with an empty environment, rlimits (address space, CPU, file size, no core
files; no processes, which the kernel does not enforce for root), wall-clock deadlines
that kill the child's process group, and the in-process audit hook of ``_guard.py`` as the
file-system, process and signal policy. It reads only the standard library and the
allowlisted packages (through a folder of symbolic links), writes only its private working
directory, and may open at most ``disk_mb / max_file_bytes`` files for writing.

What it gives up compared with ``bwrap`` (see the README section "Security"): the audit hook is a
CPython feature, not a security boundary. A program that finds a memory-corruption
primitive (numpy's ``__array_interface__`` with a made-up address, crafted bytecode, a bug
in a C extension) can disable it, and then reads and writes whatever the user running
arcmemo can (``/proc/<pid>/environ`` with the API key, the run directory, site-packages),
signals any process of that user, and creates device nodes as root. No PID namespace
(``kill(-1)`` reaches every process of the user), no read-only root, no tmpfs disk cap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from arcmemo.sandbox._packages import package_folders, site_dirs, stdlib_dirs
from arcmemo.sandbox._pool import WORKER_FILES, ZygoteSandbox, worker_config
from arcmemo.sandbox.base import SANDBOXES, SandboxOptions

WARNING = (
    "arcmemo: warning: the 'process' sandbox runs model-written programs WITHOUT kernel "
    "isolation: only rlimits, deadlines and an in-process audit hook contain them, and a "
    "program that corrupts memory can disable the hook and then read the API key in the "
    "environment of this process, write any file this user can, and signal its processes. "
    "Use the default 'bwrap' sandbox wherever bubblewrap runs."
)


def _network_namespace_prefix() -> list[str]:
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    for flags in (["-n"], ["-r", "-n"]):
        try:
            probe = subprocess.run(
                [unshare, *flags, "true"], capture_output=True, timeout=10, env={}
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return [unshare, *flags]
    return []


@SANDBOXES.register("process", options=SandboxOptions)
class ProcessSandbox(ZygoteSandbox):
    """Hook-only isolation in warm worker processes (weaker; prints a warning when created)."""

    isolation = "process"

    def __init__(self, options: SandboxOptions) -> None:
        super().__init__(options)
        print(WARNING, file=sys.stderr, flush=True)
        self._prefix = _network_namespace_prefix()
        self._base_dir = tempfile.mkdtemp(prefix="arcmemo-sandbox-")
        os.chmod(self._base_dir, 0o700)
        self._work_dir = os.path.join(self._base_dir, "work")
        self._site_dir = os.path.join(self._base_dir, "site")
        os.mkdir(self._work_dir, 0o700)
        os.mkdir(self._site_dir, 0o700)
        for name, path in package_folders(options.packages).items():
            os.symlink(path, os.path.join(self._site_dir, name))
        self._hidden = site_dirs(stdlib_dirs())

    @property
    def network_isolated(self) -> bool:
        """True when workers run in their own network namespace."""
        return bool(self._prefix)

    def _command(self) -> tuple[list[str], str, dict[str, str], tuple[int, ...]]:
        # Each zygote its own disk folder: it checks, before each program, that nothing
        # but that program's folder is there.
        disk = tempfile.mkdtemp(prefix="zygote-", dir=self._work_dir)
        config = worker_config(
            base_dir=disk,
            site_dir=self._site_dir,
            preload=self.options.preload,
            hidden=self._hidden,
            pid1=False,
            guard=True,
            write_budget=True,
        )
        worker = str(WORKER_FILES[0])
        command = [*self._prefix, sys.executable, "-I", "-B", worker, config]
        env = {"LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        return command, disk, env, ()

    def _cleanup(self) -> None:
        shutil.rmtree(self._base_dir, ignore_errors=True)
