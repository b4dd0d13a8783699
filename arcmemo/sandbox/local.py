"""The local sandbox: warm zygote worker processes on this machine.

Threat model (what is contained, and what is not)
--------------------------------------------------
This is process isolation plus an in-process policy, **not a VM or a container**. Each
program runs in a child forked from a warm "zygote" interpreter (see
:mod:`arcmemo.sandbox._worker`); the zygote is started with ``subprocess`` (never by forking
this possibly multi-threaded process) with an empty environment apart from thread-count
variables, so no API key of the caller exists in the child. Contained:

* time: a wall-clock deadline per call (and for the program's top level), enforced by the
  zygote, which kills the child's whole process group; RLIMIT_CPU as a backstop;
* memory: RLIMIT_AS (``memory_mb`` beyond the warm interpreter) -> ``error_kind="memory"``;
  files: RLIMIT_FSIZE; no core dumps; captured output capped at ``max_output_bytes``;
* network: the zygote runs in a new network namespace (``unshare -n``) when the system
  permits it, and in any case the audit hook refuses every ``socket.*`` event;
* files: a fresh private working directory per program, deleted afterwards; the audit hook
  refuses writes outside it and reads outside it and the Python installation (so
  ``/proc/<pid>/environ`` of the caller, ``$HOME`` and the repository are unreadable);
* processes and signals: fork/exec/spawn/system/subprocess and signals to other processes are
  refused (RLIMIT_NPROC=0 too, which the kernel ignores for root); ``_posixsubprocess`` (which
  forks without an audit event) is replaced by a refusing stub before anything is imported;
  each program runs in its own process group inside the zygote's session, and stopping a
  zygote kills every process of that session;
* native code: the real ``ctypes`` is never loaded in the worker (an inert stub takes its
  place, so numpy and scipy import but ``ctypes.memmove``, pointers etc. do nothing); the
  program's own ``import ctypes`` is refused;
* the hook itself: more audit hooks, tracers, frame access, gc object walks and raw code
  objects are refused, and the hook binds everything it uses at install time.

Not contained: audit hooks are a CPython feature, not a security boundary. A program that
finds a memory-corruption primitive (numpy's ``__array_interface__`` with a made-up address,
crafted ``as_strided`` views, bytecode built with ``marshal``, a bug in a C extension) can in
principle disable the hook from inside; the rlimits, the separate process, the clean
environment, the deadlines and the network namespace still hold then, but file-system and
signal containment would rest on ordinary Unix permissions, which protect little when the
caller runs as root. A program can write with ``os.write`` to descriptors it owns and forge
its own results (no more trusted than a return value anyway). If a zygote is SIGKILLed from
outside while a program sleeps, that child lives on until the parent notices the dead zygote
and kills its session. For hostile code at scale, run the whole thing in a container or VM
as well.

Concurrency: a pool of up to ``max_workers`` zygotes; each handles one program at a time
under the pool's lock discipline (a zygote is taken from the idle list, used by one thread,
then returned), so ``call`` is safe from many threads at once. Zygotes start lazily.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from arcmemo.sandbox.base import CallResult, Sandbox, SandboxLimits, register_sandbox

_WORKER_SCRIPT = Path(__file__).with_name("_worker.py")
_HEADER = struct.Struct(">I")
_STARTUP_TIMEOUT_S = 60.0
# Slack on top of the program's own limits before the parent gives up on a zygote.
_ZYGOTE_SLACK_S = 10.0


class SandboxUnavailableError(RuntimeError):
    """A worker process could not be started or stopped answering."""


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


def _session_members(session: int) -> list[int]:
    """Pids of the processes in ``session`` (Linux /proc; empty elsewhere)."""
    members = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session:  # fields after the name: state ppid pgrp session
                members.append(int(entry))
    return members


class _Zygote:
    """One warm worker process; used by one thread at a time."""

    def __init__(self, base_dir: str, prefix: list[str], preload: tuple[str, ...]) -> None:
        env = {"LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        self.process = subprocess.Popen(
            [*prefix, sys.executable, "-I", "-B", str(_WORKER_SCRIPT), base_dir, *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=base_dir,
            start_new_session=True,
            close_fds=True,
        )
        hello = self._read(time.monotonic() + _STARTUP_TIMEOUT_S)
        if hello is None or "hello" not in hello:
            self.kill()
            raise SandboxUnavailableError("the sandbox worker process failed to start")

    def _read(self, deadline: float) -> dict[str, Any] | None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        import select

        def read_exact(size: int) -> bytes | None:
            chunks = []
            while size:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                ready, _, _ = select.select([fd], [], [], remaining)
                if not ready:
                    return None
                chunk = os.read(fd, min(size, 1 << 20))
                if not chunk:
                    return None
                chunks.append(chunk)
                size -= len(chunk)
            return b"".join(chunks)

        header = read_exact(_HEADER.size)
        if header is None:
            return None
        body = read_exact(_HEADER.unpack(header)[0])
        return None if body is None else json.loads(body)

    def request(self, payload: dict[str, Any], deadline: float) -> dict[str, Any] | None:
        """Send one request; return the reply, or None if the worker failed."""
        assert self.process.stdin is not None
        data = json.dumps(payload).encode("utf-8")
        try:
            self.process.stdin.write(_HEADER.pack(len(data)) + data)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        try:
            return self._read(deadline)
        except (OSError, ValueError):
            return None

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """Kill the worker and every process of its session (children of programs in flight)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()
        for pid in _session_members(self.process.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def stop(self) -> None:
        """Ask the worker to exit (EOF on its stdin), then make sure it did."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self.kill()


@register_sandbox("local")
class LocalSandbox(Sandbox):
    """Runs programs in forked children of warm, isolated worker processes on this machine.

    ``max_workers``: most programs run at once (default: the number of CPUs, at least 2).
    ``network_namespace``: run workers under ``unshare -n``; None = when permitted.
    ``preload``: extra modules each worker imports once (e.g. ``("scipy.ndimage",)``) so
    programs that use them do not pay the import; each makes every fork a little slower.
    """

    def __init__(
        self,
        max_workers: int | None = None,
        network_namespace: bool | None = None,
        preload: tuple[str, ...] | list[str] = (),
    ) -> None:
        self.max_workers = max(1, max_workers or max(2, os.cpu_count() or 2))
        self._preload = tuple(preload)
        if network_namespace is False:
            self._prefix: list[str] = []
        else:
            self._prefix = _network_namespace_prefix()
            if network_namespace and not self._prefix:
                raise SandboxUnavailableError(
                    "a network namespace was requested but `unshare -n` is not permitted here"
                )
        self._base_dir = tempfile.mkdtemp(prefix="arcmemo-sandbox-")
        os.chmod(self._base_dir, 0o700)
        self._lock = threading.Condition()
        self._idle: list[_Zygote] = []
        self._started = 0
        self._closed = False

    @property
    def network_isolated(self) -> bool:
        """True when workers run in their own network namespace."""
        return bool(self._prefix)

    def _acquire(self) -> _Zygote:
        with self._lock:
            while True:
                if self._closed:
                    raise RuntimeError("the sandbox is closed")
                if self._idle:
                    return self._idle.pop()
                if self._started < self.max_workers:
                    self._started += 1
                    break
                self._lock.wait()
        try:
            return _Zygote(self._base_dir, self._prefix, self._preload)
        except BaseException:
            with self._lock:
                self._started -= 1
                self._lock.notify()
            raise

    def _release(self, zygote: _Zygote, healthy: bool) -> None:
        with self._lock:
            if healthy and not self._closed and zygote.alive():
                self._idle.append(zygote)
                self._lock.notify()
                return
            self._started -= 1
            self._lock.notify()
        zygote.kill()

    def _execute(
        self,
        source: str,
        function: str,
        args_list: list[list[Any]],
        limits: SandboxLimits,
        *,
        arc_transform: bool,
    ) -> list[CallResult]:
        payload = {
            "source": source,
            "function": function,
            "args_list": args_list,
            "limits": limits.model_dump(),
            "arc_transform": arc_transform,
        }
        # Worst case the zygote runs every call to its deadline, re-exec'ing the program.
        budget = (2 * len(args_list) + 1) * limits.timeout_s + _ZYGOTE_SLACK_S
        for attempt in range(2):
            zygote = self._acquire()
            reply = None
            try:
                reply = zygote.request(payload, time.monotonic() + budget)
            finally:
                self._release(zygote, healthy=reply is not None)
            if reply is not None:
                return [CallResult.model_validate(result) for result in reply["results"]]
            if attempt == 0 and self._closed:
                break
        message = "the sandbox worker process died or stopped answering"
        return [CallResult(ok=False, error=message, error_kind="crashed") for _ in args_list]

    def close(self) -> None:
        """Stop every worker process and delete the sandbox's temporary directory."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._lock.notify_all()
        for zygote in idle:
            zygote.stop()
        shutil.rmtree(self._base_dir, ignore_errors=True)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
