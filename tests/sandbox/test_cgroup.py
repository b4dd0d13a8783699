"""The cgroup v2 memory limit per zygote: detection and set-up on a fake cgroup tree, and,
where this machine delegates cgroup v2 to the tests, on the real one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arcmemo.sandbox import _cgroup
from tests.support.sandboxes import make, still_works


def _fake(tmp_path: Path, *, controllers: str, subtree: str, procs: str) -> tuple[Path, Path]:
    mount = tmp_path / "cgroup"
    folder = mount / "user.slice" / "job.scope"
    folder.mkdir(parents=True)
    (folder / "cgroup.controllers").write_text(controllers + "\n")
    (folder / "cgroup.subtree_control").write_text(subtree + "\n")
    (folder / "cgroup.procs").write_text(procs + "\n")
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text("0::/user.slice/job.scope\n")
    (proc / "mountinfo").write_text(
        f"22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
        f"30 22 0:26 / {mount} rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate\n"
    )
    return proc, folder


def test_a_cgroup_that_already_delegates_memory_is_used(tmp_path: Path) -> None:
    proc, folder = _fake(tmp_path, controllers="cpu memory", subtree="memory", procs="")
    assert _cgroup._delegated(proc, 4242) == folder


def test_a_cgroup_of_arcmemo_alone_is_taken_over_through_a_leaf(tmp_path: Path) -> None:
    proc, folder = _fake(tmp_path, controllers="cpu memory", subtree="", procs="4242")
    assert _cgroup._delegated(proc, 4242) == folder
    assert (folder / "arcmemo" / "cgroup.procs").read_text() == "4242"
    assert (folder / "cgroup.subtree_control").read_text() == "+memory"


@pytest.mark.parametrize(
    ("controllers", "procs"), [("cpu memory", "4242\n17"), ("cpu pids", "4242")]
)
def test_a_shared_cgroup_or_one_without_memory_is_left_alone(
    tmp_path: Path, controllers: str, procs: str
) -> None:
    proc, folder = _fake(tmp_path, controllers=controllers, subtree="", procs=procs)
    assert _cgroup._delegated(proc, 4242) is None
    assert not (folder / "arcmemo").exists()
    assert (folder / "cgroup.subtree_control").read_text() == "\n"


def test_no_cgroup2_mount_means_no_cgroup(tmp_path: Path) -> None:
    proc, _ = _fake(tmp_path, controllers="memory", subtree="memory", procs="")
    (proc / "mountinfo").write_text("22 1 0:21 / /proc rw,nosuid - proc proc rw\n")
    assert _cgroup._delegated(proc, 4242) is None


def test_a_zygote_cgroup_gets_its_limit_and_the_zygote(tmp_path: Path) -> None:
    parent = tmp_path / "job.scope"
    parent.mkdir()
    group = _cgroup.ZygoteCgroup(parent, 4242, 1 << 30)
    assert group.path == parent / "arcmemo-zygote-4242"
    assert (group.path / "memory.max").read_text() == str(1 << 30)
    assert (group.path / "cgroup.procs").read_text() == "4242"


def test_where_cgroups_are_delegated_each_zygote_has_its_own() -> None:
    folder = _cgroup.detect()
    if folder is None:
        pytest.skip("cgroup v2 is not delegated to this process here: rlimits and seccomp only")
    box = make("bwrap", max_workers=1)
    try:
        assert still_works(box)
        zygote = box._idle[0]  # type: ignore[attr-defined]
        with open(f"/proc/{zygote.pid}/cgroup") as cgroup:
            assert f"arcmemo-zygote-{zygote.pid}" in cgroup.read()
        assert int((zygote.cgroup.path / "memory.max").read_text()) > 0
    finally:
        box.close()
    assert not zygote.cgroup.path.exists() and os.path.isdir(folder)
