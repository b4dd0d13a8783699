"""A pool of warm zygote workers, the part both sandboxes share; the parent trusts none of them.

Each program runs in a child forked from a warm "zygote" interpreter (see
:mod:`arcmemo.sandbox._worker`); the zygote is started with ``subprocess`` (never by forking
this possibly multi-threaded process) with an empty environment apart from a few fixed
variables, so no API key of the caller exists in it. How the zygote is started, and so what
contains it, is the subclass' business (:meth:`ZygoteSandbox._command`).

Everything a zygote sends back is untrusted: a reply is read with a size bound, an item
and depth bound checked before it is decoded (so what decoding builds is bounded too: a
reply beyond them is ``invalid_output``) and a deadline, parsed as strict JSON and validated
field by field; a reply that fails any check becomes ``crashed`` results for the calls it
should have answered, never an exception, and every text is cleaned and capped by
:class:`~arcmemo.sandbox.base.CallResult`.

The channel to a zygote is a Unix socket pair (a socket cannot be opened again through
``/proc/<pid>/fd``, unlike a pipe). Every request carries a fresh random id that the reply
must carry back; a reply with another id, or any byte left on the channel after a reply,
means something other than the zygote wrote to it: the request's calls are ``crashed`` and
the zygote is retired (killed, never used again). So is a zygote that asks to be retired
(its disk could not be emptied). The zygote itself runs under an address-space limit set
by the parent (``prlimit``), which also measures its size for the programs' limits, and,
where cgroup v2 is delegated to this process, in a memory-limited cgroup of its own
(:mod:`arcmemo.sandbox._cgroup`).

Concurrency: up to ``max_workers`` zygotes; each handles one program at a time (a zygote is
taken from the idle list, used by one thread, then returned), so ``run`` is safe from many
threads at once. Zygotes start lazily.
"""

from __future__ import annotations

import abc
import concurrent.futures
import contextlib
import json
import os
import resource
import secrets
import select
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arcmemo.sandbox import _cgroup, _framing
from arcmemo.sandbox.base import (
    CallResult,
    ErrorKind,
    Program,
    Sandbox,
    SandboxLimits,
    SandboxOptions,
    SandboxUnavailableError,
)
from arcmemo.sandbox.text import clean_json

WORKER_FILES = tuple(
    Path(__file__).with_name(name)
    for name in ("_worker.py", "_guard.py", "_inert_modules.py", "_framing.py", "text.py")
)
"""The worker's own files: all a zygote needs of arcmemo (the first is the script)."""
_STARTUP_TIMEOUT_S = 60.0
# Slack on top of the program's own limits before the parent gives up on a zygote.
_ZYGOTE_SLACK_S = 10.0
# A zygote forwards at most a capped value and capped texts per call.
_MAX_RESULT_BYTES = 16 * 1024 * 1024
# Items one result may add to a reply beyond its value's (its fields; texts are strings).
_RESULT_OVERHEAD_ITEMS = 64
# Address space a zygote may use beyond its size when warm and twice the programs' limit.
_ZYGOTE_HEADROOM_BYTES = 512 * 1024 * 1024
# What a zygote's cgroup holds beyond its resident size, a program's memory and its disk.
_CGROUP_SLACK_BYTES = 128 * 1024 * 1024


class _WireResult(BaseModel):
    """One result as a zygote sends it; checked strictly before it becomes a CallResult."""

    model_config = ConfigDict(extra="forbid", strict=True)

    ok: bool
    value: Any = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    stdout: str = ""
    duration_s: float = Field(default=0.0, ge=0, allow_inf_nan=False)


def _crashed(message: str) -> CallResult:
    return CallResult(ok=False, error=message, error_kind="crashed")


def parse_result(raw: object) -> CallResult:
    """A zygote's result for one call, or a ``crashed`` result saying why it was refused."""
    try:
        wire = _WireResult.model_validate(raw)
        if wire.ok != (wire.error_kind is None):
            raise ValueError("ok and error_kind disagree")
        return CallResult(
            ok=wire.ok,
            value=clean_json(wire.value) if wire.ok else None,
            error=wire.error,
            error_kind=wire.error_kind,
            stdout=wire.stdout,
            duration_s=wire.duration_s,
        )
    except (ValidationError, ValueError, RecursionError, TypeError) as error:
        reason = type(error).__name__
        return _crashed(f"the sandbox worker sent an invalid result ({reason}); it was discarded")


def parse_reply(reply: object, expected: int) -> list[CallResult] | None:
    """The results of a zygote's reply, or None when the reply as a whole is malformed."""
    if not isinstance(reply, dict):
        return None
    results = reply.get("results")
    if not isinstance(results, list) or len(results) != expected:
        return None
    return [parse_result(item) for item in results]


def process_table() -> dict[int, tuple[int, int, int]]:
    """pid -> (parent pid, process group, session) of every process (Linux /proc)."""
    table = {}
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # the fields after the name: state ppid pgrp session ...
            table[int(entry)] = (int(fields[1]), int(fields[2]), int(fields[3]))
    return table


def session_members(session: int) -> list[int]:
    """Pids of the processes in ``session``."""
    return [pid for pid, (_, _, sid) in process_table().items() if sid == session]


def _status_field(pid: int, name: str) -> list[str]:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(name + ":"):
                return line.split()[1:]
    return []


def worker_pid(root: int, inner: int) -> int | None:
    """The host pid of the process started as ``root`` (or a descendant of it) whose pid in
    its own PID namespace is ``inner`` (what the zygote reports about itself)."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in process_table().items():
        children.setdefault(parent, []).append(pid)
    pending = [root]
    while pending:
        pid = pending.pop(0)
        nspid = _status_field(pid, "NSpid")
        if nspid and nspid[-1] == str(inner):
            return pid
        pending.extend(children.get(pid, []))
    return None


def address_space(pid: int) -> int | None:
    """The address space process ``pid`` uses, in bytes (VmSize), if it can be read."""
    field = _status_field(pid, "VmSize")
    return int(field[0]) * 1024 if field else None


class Zygote:
    """One warm worker process; used by one thread at a time."""

    def __init__(
        self,
        command: list[str],
        cwd: str,
        env: dict[str, str],
        pass_fds: tuple[int, ...] = (),
        headroom_bytes: int = _ZYGOTE_HEADROOM_BYTES,
    ) -> None:
        ours, theirs = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                command,
                stdin=theirs.fileno(),
                stdout=theirs.fileno(),
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
                pass_fds=pass_fds,
            )
        finally:
            theirs.close()
            for fd in pass_fds:
                os.close(fd)
        self.channel = ours
        self.retired = False
        self.cgroup: _cgroup.ZygoteCgroup | None = None
        self._reader = _framing.FrameReader(ours.fileno(), _MAX_RESULT_BYTES)
        hello = self._reader.next(time.monotonic() + _STARTUP_TIMEOUT_S)
        inner = hello.get("hello") if isinstance(hello, dict) else None
        pid = worker_pid(self.process.pid, inner) if type(inner) is int else None
        size = address_space(pid) if pid is not None else None
        if pid is None or size is None:
            detail = self._stderr_tail()
            self.kill()
            raise SandboxUnavailableError(
                "the sandbox worker process failed to start" + (f": {detail}" if detail else "")
            )
        self.pid = pid
        # The zygote's own bound: what it decodes and keeps is bounded, this is the backstop.
        with contextlib.suppress(OSError, ValueError):
            limit = size + headroom_bytes
            resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))
        assert self.process.stderr is not None
        # From here on the worker's stderr is not read: let it go nowhere.
        self.process.stderr.close()

    def _stderr_tail(self) -> str:
        assert self.process.stderr is not None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        if self.process.poll() is None:
            return ""
        text = self.process.stderr.read(64_000).decode("utf-8", "backslashreplace")
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return lines[-1][:500] if lines else ""

    def request(
        self, payload: dict[str, Any], deadline: float, expected: int
    ) -> list[CallResult] | None:
        """Send one request; its results, or None if the worker failed (it is then dead or
        :attr:`retired`)."""
        if self._pending():
            # Bytes that arrived after the last reply: the channel was abused; the request
            # goes to another zygote.
            self.retired = True
            return None
        request_id = secrets.token_hex(16)
        payload = {**payload, "id": request_id, "address_space": address_space(self.pid)}
        self._reader.max_bytes = expected * _MAX_RESULT_BYTES + (1 << 20)
        self._reader.max_items = expected * (_framing.MAX_ITEMS + _RESULT_OVERHEAD_ITEMS)
        try:
            self.channel.sendall(_framing.encode(payload))
        except (OSError, ValueError):
            return None
        try:
            reply = self._reader.next(deadline)
        except OSError:
            return None
        if reply == "oversized":
            self.retired = True
            message = (
                "invalid return value: the reply holds more than "
                f"{_framing.MAX_ITEMS} items per call or is nested too deeply"
            )
            return [
                CallResult(ok=False, error=message, error_kind="invalid_output")
                for _ in range(expected)
            ]
        if not isinstance(reply, dict):
            return None
        if reply.get("id") != request_id or self._pending():
            # Someone else wrote on the channel: nothing on it can be trusted any more.
            self.retired = True
            message = "the sandbox channel carried a frame for another request; discarded"
            return [_crashed(message) for _ in range(expected)]
        if reply.get("retire") is not False:
            self.retired = True
        return parse_reply(reply, expected)

    def _pending(self) -> bool:
        if self._reader.buffer:
            return True
        readable, _, _ = select.select([self.channel], [], [], 0)
        return bool(readable)

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """Kill the worker and every process of its session (children of programs in flight)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()
        for pid in session_members(self.process.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.channel.close()
        if self.cgroup is not None:
            self.cgroup.remove()

    def stop(self) -> None:
        """Ask the worker to exit (EOF on its channel), then make sure it did."""
        with contextlib.suppress(OSError):
            self.channel.shutdown(socket.SHUT_WR)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self.kill()


def worker_config(**values: Any) -> str:
    """The worker's one command-line argument."""
    return json.dumps(values)


class ZygoteSandbox(Sandbox):
    """Runs programs in forked children of a pool of warm zygotes."""

    def __init__(self, options: SandboxOptions) -> None:
        super().__init__(options)
        self.max_workers = max(1, options.max_workers or max(2, os.cpu_count() or 2))
        self._lock = threading.Condition()
        self._idle: list[Zygote] = []
        self._started = 0
        self._closed = False
        self._cgroups = _cgroup.detect()
        # Zygotes are started from these long-lived threads: bubblewrap's --die-with-parent
        # (PR_SET_PDEATHSIG) fires when the *thread* that started it ends, and callers often
        # run programs from short-lived threads.
        self._launcher = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.max_workers, thread_name_prefix="arcmemo-sandbox"
        )

    @abc.abstractmethod
    def _command(self) -> tuple[list[str], str, dict[str, str], tuple[int, ...]]:
        """How to start one zygote: argv, working directory, environment, and descriptors
        to pass (open now; closed here once the zygote has started)."""

    def _cleanup(self) -> None:
        """Delete what the sandbox made for its zygotes (after they stopped)."""

    def _acquire(self) -> Zygote:
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
            return self._launcher.submit(self._start).result()
        except BaseException:
            with self._lock:
                self._started -= 1
                self._lock.notify()
            raise

    def _start(self) -> Zygote:
        argv, cwd, env, fds = self._command()
        limits = self.options.limits
        headroom = 2 * limits.memory_mb * 1024 * 1024 + _ZYGOTE_HEADROOM_BYTES
        zygote = Zygote(argv, cwd, env, fds, headroom)
        if self._cgroups is not None:
            # The zygote, one program's memory, its disk's pages and kernel memory besides.
            resident = int((_status_field(zygote.pid, "VmRSS") or ["0"])[0]) * 1024
            budget = (limits.memory_mb + limits.disk_mb) * 1024 * 1024 + _CGROUP_SLACK_BYTES
            try:
                zygote.cgroup = _cgroup.ZygoteCgroup(self._cgroups, zygote.pid, resident + budget)
            except OSError:
                self._cgroups = None  # not usable after all: rlimits and seccomp only
        return zygote

    def _release(self, zygote: Zygote, healthy: bool) -> None:
        with self._lock:
            if healthy and not self._closed and zygote.alive() and not zygote.retired:
                self._idle.append(zygote)
                self._lock.notify()
                return
            self._started -= 1
            self._lock.notify()
        zygote.kill()

    def _execute(
        self, program: Program, inputs: list[list[Any]], limits: SandboxLimits
    ) -> list[CallResult]:
        payload = {
            "source": program.source,
            "entry": program.entry,
            "harness": program.harness,
            "bindings": program.bindings,
            "library": program.library,
            "stop_after_failure": program.stop_after_failure,
            "inputs": inputs,
            "limits": limits.model_dump(),
        }
        # Worst case the zygote runs every call to its deadline, re-exec'ing the program.
        budget = (2 * len(inputs) + 1) * limits.timeout_s + _ZYGOTE_SLACK_S
        for attempt in range(2):
            zygote = self._acquire()
            results = None
            try:
                results = zygote.request(payload, time.monotonic() + budget, len(inputs))
            finally:
                self._release(zygote, healthy=results is not None)
            if results is not None:
                return results
            if attempt == 0 and self._closed:
                break
        message = "the sandbox worker process died or stopped answering"
        return [_crashed(message) for _ in inputs]

    def close(self) -> None:
        """Stop every worker process and delete the sandbox's temporary files."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._lock.notify_all()
        for zygote in idle:
            zygote.stop()
        self._launcher.shutdown(wait=False)
        self._cleanup()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
