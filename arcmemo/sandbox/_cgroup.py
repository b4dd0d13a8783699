"""A cgroup v2 memory limit per zygote, where this process may create cgroups (delegated).

RLIMIT_AS bounds a program's address space, but not the memory the kernel holds for it
(pipe and socket buffers, page tables, tmpfs pages). A cgroup counts all of it. arcmemo
uses one where the cgroup v2 hierarchy is delegated to it: its own cgroup is writable,
offers the memory controller, and either already enables it for its children or holds
no process but arcmemo's own (say ``systemd-run --user --scope -p Delegate=yes arcmemo
...``), in which case arcmemo moves itself into a leaf ``arcmemo`` below it and enables
the controller. A cgroup shared with other processes is left alone. Each zygote then moves
into a child cgroup of its own with ``memory.max`` set and no swap; the programs it forks
inherit it. Nothing here is required: where cgroups are not delegated
(``detect`` returns None) or any step fails, the zygote runs without one and the seccomp
filter and the rlimits bound its memory (see the README section "Security").
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path


def _mount_point(mountinfo: str) -> Path | None:
    for line in mountinfo.splitlines():
        # ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
        fields = line.split()
        if "-" in fields and fields[fields.index("-") + 1] == "cgroup2":
            return Path(fields[4])
    return None


_DETECTED: list[Path | None] = []


def detect(proc: Path = Path("/proc/self")) -> Path | None:
    """The cgroup v2 folder in which this process may create memory-limited children, or
    None; decided once per process (it may move this process into a leaf)."""
    if not _DETECTED:
        _DETECTED.append(_delegated(proc, os.getpid()))
    return _DETECTED[0]


def _delegated(proc: Path, pid: int) -> Path | None:
    try:
        own = next(
            line[3:]
            for line in (proc / "cgroup").read_text().splitlines()
            if line.startswith("0::")
        )
        mount = _mount_point((proc / "mountinfo").read_text())
        if mount is None:
            return None
        folder = mount / own.strip().lstrip("/")
        if "memory" not in (folder / "cgroup.controllers").read_text().split():
            return None
        if not os.access(folder, os.W_OK):
            return None
        if "memory" in (folder / "cgroup.subtree_control").read_text().split():
            return folder
        if (folder / "cgroup.procs").read_text().split() != [str(pid)]:
            return None  # shared with other processes: not ours to rearrange
        leaf = folder / "arcmemo"
        leaf.mkdir(exist_ok=True)
        (leaf / "cgroup.procs").write_text(str(pid))
        (folder / "cgroup.subtree_control").write_text("+memory")
    except (OSError, StopIteration):
        return None
    return folder


class ZygoteCgroup:
    """The child cgroup of one zygote: created, limited, joined; removed after it ended."""

    def __init__(self, parent: Path, pid: int, limit_bytes: int) -> None:
        self.path = parent / f"arcmemo-zygote-{pid}"
        self.path.mkdir()
        try:
            (self.path / "memory.max").write_text(str(limit_bytes))
            swap = self.path / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
            (self.path / "cgroup.procs").write_text(str(pid))
        except OSError:
            self.remove()
            raise

    def remove(self) -> None:
        """Delete the cgroup (its processes are gone, or going: retried for a moment)."""
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)
        with contextlib.suppress(OSError):
            self.path.rmdir()
