"""The seccomp filter of the ``bwrap`` sandbox, built with libseccomp and loaded by bubblewrap.

The filter is compiled to classic BPF here, in the trusted parent, by libseccomp (through
ctypes: libseccomp2 ships with every systemd-based distribution and is what bubblewrap's
own users, flatpak and podman, build their filters with; it knows each architecture's
syscall numbers, and kills any syscall made through another architecture's ABI, such as
``int 0x80`` on x86_64). bubblewrap loads it with ``--seccomp FD`` after it has set up the
namespaces, just before it starts the zygote, so it holds for the zygote and every program.

What it refuses (everything else is allowed; the namespaces, rlimits and the audit hook do
the rest):

* the kernel keyring (``keyctl``, ``add_key``, ``request_key``);
* reaching other processes' memory or descriptors (``ptrace``, ``process_vm_readv``/
  ``writev``, ``pidfd_open``, ``pidfd_getfd``, ``kcmp``);
* kernel attack surface no program needs (``bpf``, ``perf_event_open``, ``userfaultfd``,
  ``io_uring_*``, ``kexec_*``, module loading, ``personality``...);
* memory the address-space limit does not count: ``memfd_create`` and ``memfd_secret``, and
  System V shared memory and message queues;
* changing the file system tree or namespaces after set-up (``mount``, ``umount2``,
  ``pivot_root``, ``chroot``, the new mount API, ``unshare``, ``setns``, ``clone`` with a
  namespace flag; ``clone3`` says ENOSYS so that libc falls back to ``clone``);
* every socket family but ``AF_UNIX`` (``socket``/``socketpair``), so ``AF_VSOCK``,
  ``AF_NETLINK`` and raw sockets are refused even inside the empty network namespace.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import hashlib
import os

from arcmemo.sandbox.base import SandboxUnavailableError

_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_CMP_NE = 1
_CMP_MASKED_EQ = 7
_AF_UNIX = 1

DENIED = (
    "keyctl", "add_key", "request_key",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd", "kcmp",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "personality", "lookup_dcookie", "quotactl", "acct", "swapon",
    "swapoff", "reboot", "syslog", "uselib", "open_by_handle_at", "name_to_handle_at",
    "memfd_create", "memfd_secret", "shmget", "shmat", "msgget", "msgsnd",
    "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen",
    "fsmount", "fsconfig", "fspick", "mount_setattr", "unshare", "setns",
)  # fmt: skip
"""Syscalls that fail with EPERM (names unknown on this architecture are skipped)."""
_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
    0x00000080,  # CLONE_NEWTIME
)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        raise SandboxUnavailableError(
            "the bwrap sandbox builds its seccomp filter with libseccomp, which is not "
            "installed: `apt-get install libseccomp2` (or `dnf install libseccomp`)"
        ) from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _errno(code: int) -> int:
    return _ERRNO | (code & 0xFFFF)


def syscall_number(name: str) -> int | None:
    """The native number of syscall ``name``, or None where this architecture has none."""
    number = int(_library().seccomp_syscall_resolve_name(name.encode()))
    return number if number >= 0 else None


@functools.lru_cache(maxsize=1)
def program() -> bytes:
    """The filter as classic BPF, ready for ``bwrap --seccomp FD``."""
    lib = _library()
    ctx = lib.seccomp_init(_ALLOW)
    if not ctx:
        raise SandboxUnavailableError("libseccomp could not create a filter")
    try:

        def add(action: int, name: str, *conditions: tuple[int, int, int, int]) -> None:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number < 0:
                return  # not a syscall of this architecture
            array = (_ArgCmp * max(1, len(conditions)))(*[_ArgCmp(*c) for c in conditions])
            code = lib.seccomp_rule_add_array(ctx, action, number, len(conditions), array)
            if code < 0:
                raise SandboxUnavailableError(
                    f"libseccomp refused the rule for {name} ({os.strerror(-code)})"
                )

        for name in DENIED:
            add(_errno(errno.EPERM), name)
        for name in ("socket", "socketpair"):
            add(_errno(errno.EAFNOSUPPORT), name, (0, _CMP_NE, _AF_UNIX, 0))
        for flag in _NAMESPACE_FLAGS:
            add(_errno(errno.EPERM), "clone", (0, _CMP_MASKED_EQ, flag, flag))
        add(_errno(errno.ENOSYS), "clone3")
        read_fd, write_fd = os.pipe()
        try:
            code = lib.seccomp_export_bpf(ctx, write_fd)
            os.close(write_fd)
            write_fd = -1
            if code < 0:
                raise SandboxUnavailableError(
                    f"libseccomp could not export the filter ({os.strerror(-code)})"
                )
            chunks = []
            while chunk := os.read(read_fd, 1 << 16):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
    finally:
        lib.seccomp_release(ctx)


def sha256() -> str:
    """The filter's hash as recorded with a run (``unavailable`` without libseccomp)."""
    try:
        return hashlib.sha256(program()).hexdigest()
    except SandboxUnavailableError:
        return "unavailable"
