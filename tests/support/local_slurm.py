"""A single-node SLURM cluster on this machine for the scale-out tests: munged, slurmctld and
slurmd started in the foreground (so the test owns their processes) from a ``slurm.conf``
written for this host (one node, at most 2 CPUs, one partition), all files in one folder.
Debian's ``slurm-wlm`` and ``munge`` packages provide the programs (``.ci/run`` installs them).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "scancel", "sinfo")
NODE = "localnode"
START_TIMEOUT_S = 30.0
# Ended states of a job (scontrol's JobState); every other state may still change.
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"}

CONF = """\
ClusterName=arcmemo-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser={user}
SlurmdUser=root
# The munge socket of this cluster's own munged; cred_expire is also how long a requeued job
# waits before it may start again (120 s by default).
AuthType=auth/munge
AuthInfo=socket={folder}/munge/socket,cred_expire=5
CredType=cred/munge
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
# No cgroups, accounting or MPI: nothing this test machine may lack.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
KillWait=5
NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} \
State=UNKNOWN
PartitionName=local Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


class SlurmUnavailable(Exception):
    """The cluster cannot run here; the message says why."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _memory_mb() -> int:
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return max(pages // (1024 * 1024) - 512, 512)


def _tail(path: Path, lines: int = 5) -> str:
    if not path.exists():
        return f"(no {path.name})"
    return " | ".join(path.read_text(errors="replace").splitlines()[-lines:])


class LocalSlurm:
    """``start()``, submit with ``run("sbatch", ...)``, ``stop()``; ``env`` points SLURM's
    commands at this cluster (``SLURM_CONF``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.cpus = min(2, os.cpu_count() or 1)
        # The daemons are in /usr/sbin, which a user's PATH may leave out.
        path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
        self.env = {**os.environ, "PATH": path, "SLURM_CONF": str(folder / "slurm.conf")}
        self._processes: list[subprocess.Popen[bytes]] = []
        self.version = ""

    def start(self) -> None:
        path = self.env["PATH"]
        missing = [name for name in PROGRAMS if shutil.which(name, path=path) is None]
        if missing:
            raise SlurmUnavailable(
                f"{', '.join(missing)} not installed (apt-get install slurm-wlm munge)"
            )
        if os.geteuid() != 0:
            raise SlurmUnavailable("slurmd must run as root, and this test is not root")
        # munged wants every folder above its socket searchable by all: mkdtemp's are not.
        self.folder.chmod(0o755)
        for sub in ("munge", "state", "spool", "logs"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        munge = self.folder / "munge"
        munge.chmod(0o755)
        key = munge / "key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        host = socket.gethostname().split(".")[0]
        (self.folder / "slurm.conf").write_text(
            CONF.format(
                host=host,
                node=NODE,
                folder=self.folder,
                user=os.environ.get("USER") or "root",
                ctld_port=_free_port(),
                d_port=_free_port(),
                cpus=self.cpus,
                memory_mb=_memory_mb(),
            )
        )
        self._spawn(
            "munged", "--foreground", f"--key-file={key}", f"--socket={munge}/socket",
            f"--pid-file={munge}/pid", f"--log-file={munge}/log", f"--seed-file={munge}/seed",
        )  # fmt: skip
        self._wait(lambda: (munge / "socket").exists(), "munged", munge / "log")
        conf = str(self.folder / "slurm.conf")
        self._spawn("slurmctld", "-D", "-i", "-f", conf)
        self._spawn("slurmd", "-D", "-N", NODE, "-f", conf)
        self._wait(self._node_idle, "slurmctld and slurmd", self.folder / "slurmctld.log")
        self.version = self.run("sinfo", "--version").strip()

    def _spawn(self, *argv: str) -> None:
        log = (self.folder / "logs" / f"{argv[0]}.out").open("wb")
        process = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
        )
        log.close()
        self._processes.append(process)

    def _wait(self, ready: object, what: str, log: Path) -> None:
        assert callable(ready)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready():
            ended = [p for p in self._processes if p.poll() is not None]
            if ended or time.monotonic() > deadline:
                why = f"exited with {ended[0].returncode}" if ended else "did not start"
                daemon = _tail(self.folder / "logs" / "slurmd.out")
                raise SlurmUnavailable(f"{what} {why} (its log: {_tail(log)}; slurmd: {daemon})")
            time.sleep(0.2)

    def _node_idle(self) -> bool:
        done = subprocess.run(
            ["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=self.env, check=False
        )
        return done.returncode == 0 and done.stdout.strip() == "idle"

    def stop(self) -> None:
        """Cancel what still runs, then end the daemons this cluster started."""
        if any(p.poll() is None for p in self._processes):
            subprocess.run(["scancel", "--full", f"--user={os.getuid()}"], env=self.env,
                           capture_output=True, check=False)  # fmt: skip
            time.sleep(1)
        for process in reversed(self._processes):  # slurmd, slurmctld, munged
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def run(self, *argv: str, check: bool = True) -> str:
        """A SLURM command against this cluster; its standard output."""
        done = subprocess.run(argv, capture_output=True, text=True, env=self.env, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
        return done.stdout

    def submit(self, *argv: str, env: dict[str, str], cwd: Path) -> str:
        """A submitting command (sbatch, or a script calling it) run in ``cwd`` with ``env``,
        against this cluster; its standard output."""
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env=env | {"SLURM_CONF": self.env["SLURM_CONF"]},
            cwd=cwd,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
        return done.stdout

    def jobs(self, job: str) -> dict[str, dict[str, str]]:
        """scontrol's fields of a job, or of each task of an array job (keyed by JobId, or
        ``ID_TASK`` for an array task)."""
        found: dict[str, dict[str, str]] = {}
        for line in self.run("scontrol", "show", "job", "-o", job).splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            key = fields["JobId"]
            if fields.get("ArrayJobId") and fields.get("ArrayTaskId"):
                key = f"{fields['ArrayJobId']}_{fields['ArrayTaskId']}"
            found[key] = fields
        return found

    def wait(self, job: str, timeout_s: float = 240.0, *, until: str | None = None) -> None:
        """Until every task of ``job`` has ended (or is in state ``until``)."""
        deadline = time.monotonic() + timeout_s
        while True:
            states = {key: fields["JobState"] for key, fields in self.jobs(job).items()}
            wanted = {until} if until else ENDED
            # An array's pending tasks show as one line ("123_[2-3]"): not ended yet.
            if states and all(state in wanted for state in states.values()):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job} still {states} after {timeout_s:.0f} s")
            time.sleep(0.5)
