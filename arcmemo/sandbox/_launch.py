"""Starts a ``bwrap`` zygote: a fresh keyring and a ``noexec`` disk, then bubblewrap.

Run by :mod:`arcmemo.sandbox.bwrap` as ``python -I -S _launch.py CONFIG`` (a JSON object:
``keyctl``, the native number of the keyctl syscall or null; ``mountpoint``, an empty host
folder; ``disk_bytes``; ``argv``, bubblewrap's command line). It is a separate interpreter
that replaces itself with bubblewrap, so the ctypes it uses never exists in a zygote.

* It joins a new anonymous session keyring, so no key of the caller's session is in reach
  of the zygote even if a program got past the seccomp filter (which refuses keyctl).
* bubblewrap mounts its tmpfs without ``noexec`` and has no option for it, so this process
  enters a user and mount namespace of its own (the same uid mapped to itself), mounts a
  ``noexec,nosuid,nodev`` tmpfs of ``disk_bytes`` on ``mountpoint`` (visible only in that
  namespace) and bubblewrap binds it as the work disk: the kernel locks ``noexec`` on a
  mount handed into a less privileged namespace, so nothing inside can lift it, and no
  file written there can be executed or mapped executable (``dlopen`` refuses it).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

_KEYCTL_JOIN_SESSION_KEYRING = 1
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REC = 16384
_MS_PRIVATE = 1 << 18


def _check(code: int, what: str) -> None:
    if code != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as file:
        file.write(text)


def main() -> None:
    config = json.loads(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    if config["keyctl"] is not None:
        # Where keyctl itself is filtered for this process (a container's seccomp profile),
        # nothing under it can reach a keyring either.
        libc.syscall(config["keyctl"], _KEYCTL_JOIN_SESSION_KEYRING, None)
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "private mounts")
    options = f"size={int(config['disk_bytes'])},mode=0700".encode()
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    target = config["mountpoint"].encode()
    _check(libc.mount(b"tmpfs", target, b"tmpfs", flags, options), "mounting the work disk")
    argv = config["argv"]
    os.execv(argv[0], argv)


if __name__ == "__main__":
    try:
        main()
    except OSError as error:
        print(f"arcmemo sandbox launcher: {error}", file=sys.stderr)
        sys.exit(1)
