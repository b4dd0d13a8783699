"""The local SLURM cluster of the scale-out tests (``tests/support/local_slurm.py``), one per
module."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.local_slurm import LocalSlurm, SlurmUnavailable


@pytest.fixture(scope="module")
def slurm(request: pytest.FixtureRequest) -> Iterator[LocalSlurm]:
    """A started single-node cluster; the test is skipped, with the reason printed, where
    SLURM is not installed or cannot start."""
    capture = request.config.pluginmanager.getplugin("capturemanager")

    def say(line: str) -> None:  # in CI's log, under -q and output capture too
        with capture.global_and_fixture_disabled():
            print(line, flush=True)

    folder = Path(tempfile.mkdtemp(prefix="arcmemo-slurm-"))
    cluster = LocalSlurm(folder)
    try:
        cluster.start()
    except SlurmUnavailable as why:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
        say(f"local SLURM not started, its tests are skipped: {why}")
        pytest.skip(f"local SLURM not started: {why}")
    say(f"local SLURM started: {cluster.version}, one node of {cluster.cpus} CPUs")
    yield cluster
    cluster.stop()
    shutil.rmtree(folder, ignore_errors=True)
