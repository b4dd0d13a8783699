"""The sandbox worker: a warm "zygote" interpreter that forks one child per program.

Started by :mod:`arcmemo.sandbox.local` as ``python -I _worker.py BASE_DIR [MODULE...]`` (the
modules are imported once, in addition to numpy and common standard modules) with a minimal
environment (and inside a new network namespace where ``unshare -n`` is permitted). It
imports numpy and other common modules once, then serves requests read from stdin:

* for each request it creates a fresh private directory under BASE_DIR and forks a child;
* the child starts a new session (process group), closes every inherited descriptor,
  points stdin/stdout/stderr at /dev/null, sets rlimits (address space, CPU, file size, no
  core files, no processes), enters the directory, installs the audit hook of
  :mod:`_guard`, execs the program once and runs the calls, streaming one framed JSON
  message per call back through a pipe;
* the zygote enforces the wall-clock limit of each phase; on a timeout or crash it kills the
  child's whole process group, records the failed call and continues the remaining calls in
  a fresh child. The directory is deleted afterwards and every child is reaped.

Frames on every pipe are a 4-byte big-endian length followed by UTF-8 JSON.
"""

from __future__ import annotations

import os
import sys

# Numerical libraries must not start thread pools (the child may not create threads).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import contextlib  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import select  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import struct  # noqa: E402
import sysconfig  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _guard  # noqa: E402
import _inert_modules  # noqa: E402

del sys.path[0]
# Before any library import: the real ctypes and _posixsubprocess never load in this process.
_inert_modules.install()

import numpy as np  # noqa: E402

_inert_modules.install_numpy_ctypeslib()

# Modules ARC programs commonly import, loaded once so that children fork with them warm.
_PRELOAD_DEFAULT = (
    "collections",
    "itertools",
    "functools",
    "copy",
    "heapq",
    "re",
    "random",
    "statistics",
    "typing",
    "dataclasses",
    "operator",
    "string",
    "fractions",
    "bisect",
    "enum",
    "queue",
    "traceback",
)
_PROGRAM_FILENAME = "<program>"
_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_MAX_VALUE_BYTES = 8 * 1024 * 1024
_MAX_ERROR_CHARS = 4000
_MAX_TRACEBACK_FRAMES = 12
_HEADER = struct.Struct(">I")


# ----------------------------------------------------------------------------- framing


def _write_frame(fd: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode("utf-8")
    data = _HEADER.pack(len(data)) + data
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int) -> dict[str, Any] | None:
    header = _read_exact(fd, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    data = _read_exact(fd, size)
    return None if data is None else json.loads(data)


class _FrameReader:
    """Reads frames from a child's pipe with deadlines; the child is not trusted."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.eof = False

    def next(self, deadline: float) -> dict[str, Any] | str:
        """Return the next frame, or "timeout", "eof" or "garbage"."""
        while True:
            if len(self.buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(self.buffer)
                if size > _MAX_MESSAGE_BYTES:
                    return "garbage"
                if len(self.buffer) >= _HEADER.size + size:
                    data = bytes(self.buffer[_HEADER.size : _HEADER.size + size])
                    del self.buffer[: _HEADER.size + size]
                    try:
                        frame = json.loads(data)
                    except ValueError:
                        return "garbage"
                    return frame if isinstance(frame, dict) else "garbage"
            if self.eof:
                return "eof"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                return "timeout"
            chunk = os.read(self.fd, 1 << 20)
            if chunk:
                self.buffer += chunk
            else:
                self.eof = True


# ----------------------------------------------------------------------------- child


class _CappedWriter(io.TextIOBase):
    """A text stream that keeps the first ``cap`` characters and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = self.cap - self.kept
        if room > 0:
            piece = text[:room]
            self.parts.append(piece)
            self.kept += len(piece)
            self.dropped += len(text) - len(piece)
        else:
            self.dropped += len(text)
        return len(text)

    def text(self) -> str:
        kept = "".join(self.parts)
        if self.dropped:
            kept += f"\n[... {self.dropped} more characters of output dropped]"
        return kept


class _NotJsonable(Exception):
    pass


def _to_jsonable(value: Any, depth: int = 0) -> Any:
    if depth > 64:
        raise _NotJsonable("the value is nested more than 64 levels deep")
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**63:
            raise _NotJsonable(f"the integer {str(value)[:20]}... is too large")
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufU":
            raise _NotJsonable(f"a numpy array of dtype {value.dtype} is not JSON-able")
        return value.tolist()
    if isinstance(value, np.generic):
        return _to_jsonable(value.item(), depth + 1)
    if isinstance(value, (list, tuple)):
        return [_to_jsonable(item, depth + 1) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise _NotJsonable("a dict with non-string keys is not JSON-able")
        return {key: _to_jsonable(item, depth + 1) for key, item in value.items()}
    raise _NotJsonable(f"a value of type {type(value).__name__} is not JSON-able")


def _program_frames(tb: Any, set_trusted: Any) -> list[tuple[str, int, str]]:
    # Runs in harness mode (frame access allowed): only C-level attribute reads happen
    # here, so no code of the program can run while the hook trusts the caller.
    found: list[tuple[str, int, str]] = []
    set_trusted(True)
    try:
        while tb is not None:
            code = tb.tb_frame.f_code
            found.append((code.co_filename, tb.tb_lineno, code.co_name))
            tb = tb.tb_next
    finally:
        set_trusted(False)
    return found


def _format_exception(error: BaseException, source_lines: list[str], set_trusted: Any) -> str:
    frames = [
        f for f in _program_frames(error.__traceback__, set_trusted) if f[0] == _PROGRAM_FILENAME
    ]
    lines = []
    if frames:
        lines.append("Traceback (most recent call last):")
        shown = frames
        if len(frames) > _MAX_TRACEBACK_FRAMES:
            shown = frames[:3] + frames[-(_MAX_TRACEBACK_FRAMES - 3) :]
        previous = None
        repeats = 0
        for index, (_, lineno, name) in enumerate(shown):
            if len(frames) > _MAX_TRACEBACK_FRAMES and index == 3:
                lines.append(f"  ... {len(frames) - _MAX_TRACEBACK_FRAMES} more frames ...")
            if (lineno, name) == previous:
                repeats += 1
                continue
            if repeats:
                lines.append(f"  [previous line repeated {repeats} more times]")
                repeats = 0
            previous = (lineno, name)
            lines.append(f'  File "{_PROGRAM_FILENAME}", line {lineno}, in {name}')
            if 0 < lineno <= len(source_lines):
                lines.append("    " + source_lines[lineno - 1].strip())
        if repeats:
            lines.append(f"  [previous line repeated {repeats} more times]")
    try:
        message = str(error)
    except BaseException:
        message = "<unprintable exception>"
    name = type(error).__name__
    if isinstance(error, SyntaxError) and error.lineno:
        message = f"{error.msg} (line {error.lineno})"
        if error.text:
            message += f": {error.text.strip()}"
    if isinstance(error, SystemExit):
        message = f"the program called exit({message})"
    lines.append(f"{name}: {message}" if message else name)
    text = "\n".join(lines)
    if len(text) > _MAX_ERROR_CHARS:
        text = text[: _MAX_ERROR_CHARS // 2] + "\n[...]\n" + text[-_MAX_ERROR_CHARS // 2 :]
    return text


def _error_kind(error: BaseException, refused: bool) -> str:
    # ``refused``: the guard refused something during this call; libraries often wrap the
    # refusal (urllib turns it into URLError), which still makes the failure "forbidden".
    if isinstance(error, MemoryError):
        return "memory"
    if refused or isinstance(error, _guard.SandboxViolation):
        return "forbidden"
    return "exception"


def _address_space_in_use() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _set_limits(limits: dict[str, Any], n_calls: int) -> None:
    memory = _address_space_in_use() + int(limits["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    # The wall-clock deadlines are exact; the CPU limit is a backstop for the whole child.
    cpu = math.ceil(float(limits["timeout_s"]) * (n_calls + 1)) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    file_bytes = int(limits["max_file_bytes"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Not enforced for root; the audit hook refuses process creation regardless.
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))


def _close_inherited_fds(keep: int) -> None:
    # Listing the open descriptors is much faster than closing every possible number.
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        os.closerange(3, keep)
        os.closerange(keep + 1, 65536)
        return
    for fd in open_fds:
        if fd > 2 and fd != keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _child_main(request: dict[str, Any], start: int, out_fd: int, workdir: str) -> None:
    # Own process group (killed as a whole on timeout), but the zygote's session, so that
    # the parent can find and kill every process of a worker even if the zygote is gone.
    os.setpgid(0, 0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _close_inherited_fds(keep=out_fd)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # over-large writes raise OSError instead

    source: str = request["source"]
    function: str = request["function"]
    args_list: list[list[Any]] = request["args_list"]
    limits: dict[str, Any] = request["limits"]
    arc_transform: bool = request["arc_transform"]
    cap = int(limits["max_output_bytes"])

    os.chdir(workdir)
    os.environ["HOME"] = workdir
    os.environ["TMPDIR"] = workdir
    tempfile.tempdir = workdir
    _set_limits(limits, len(args_list) - start)

    source_lines = source.splitlines()
    try:
        code = compile(source, _PROGRAM_FILENAME, "exec")
    except (SyntaxError, ValueError) as error:
        message = _format_exception(error, source_lines, lambda _flag: None)
        _write_frame(out_fd, {"kind": "fatal", "error_kind": "syntax", "error": message})
        os._exit(0)
    except MemoryError:
        _write_frame(
            out_fd,
            {"kind": "fatal", "error_kind": "memory", "error": "compiling ran out of memory"},
        )
        os._exit(0)

    namespace: dict[str, Any] = {
        "__name__": "__sandbox__",
        "__builtins__": _guard.program_builtins(),
    }
    if arc_transform:
        namespace["np"] = np
    set_trusted, refusals = _guard.install(workdir, _read_roots())

    capture = _CappedWriter(cap)
    sys.stdout = sys.stderr = capture
    try:
        exec(code, namespace)
        target = namespace.get(function)
        if not callable(target):
            raise NameError(f"the program defines no function {function}()")
    except BaseException as error:
        message = _format_exception(error, source_lines, set_trusted)
        _write_frame(
            out_fd,
            {
                "kind": "fatal",
                "error_kind": _error_kind(error, refusals() > 0),
                "error": message,
                "stdout": capture.text(),
            },
        )
        os._exit(0)
    _write_frame(out_fd, {"kind": "ready", "stdout": capture.text()})

    for index in range(start, len(args_list)):
        capture = _CappedWriter(cap)
        sys.stdout = sys.stderr = capture
        result: dict[str, Any] = {"kind": "result", "index": index}
        refused_before = refusals()
        began = time.perf_counter()
        try:
            args = args_list[index]
            if arc_transform:
                args = [np.array(arg) for arg in args]
            value = target(*args)
            result["duration_s"] = time.perf_counter() - began
            encoded = json.dumps(_to_jsonable(value))
            if len(encoded) > _MAX_VALUE_BYTES:
                raise _NotJsonable(f"the return value is {len(encoded)} bytes as JSON, too large")
            result.update(ok=True, value=json.loads(encoded))
        except _NotJsonable as error:
            result.update(
                ok=False, error_kind="invalid_output", error=f"invalid return value: {error}"
            )
        except BaseException as error:
            result.setdefault("duration_s", time.perf_counter() - began)
            result.update(
                ok=False,
                error_kind=_error_kind(error, refusals() > refused_before),
                error=_format_exception(error, source_lines, set_trusted),
            )
        result.setdefault("duration_s", time.perf_counter() - began)
        result["stdout"] = capture.text()
        try:
            _write_frame(out_fd, result)
        except MemoryError:
            _write_frame(
                out_fd,
                {
                    "kind": "result",
                    "index": index,
                    "ok": False,
                    "error_kind": "memory",
                    "error": "out of memory while sending the result",
                    "stdout": "",
                },
            )
    os._exit(0)


# ----------------------------------------------------------------------------- zygote

_READ_ROOTS: tuple[str, ...] = ()


def _read_roots() -> tuple[str, ...]:
    return _READ_ROOTS


def _python_roots() -> tuple[str, ...]:
    roots = set()
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            roots.add(os.path.realpath(paths[key]))
    for module in (np,):
        roots.add(os.path.realpath(os.path.dirname(os.path.dirname(module.__file__))))
    return tuple(sorted(roots))


def _describe_death(status: int) -> tuple[str, str]:
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        name = (
            signal.Signals(signum).name
            if signum in signal.Signals._value2member_map_
            else str(signum)
        )
        if signum == signal.SIGXCPU:
            return "timeout", "the CPU time limit was exceeded"
        if signum == signal.SIGSEGV:
            return (
                "crashed",
                "the process crashed (SIGSEGV; e.g. a stack overflow from very deep recursion)",
            )
        return "crashed", f"the process was killed by signal {name}"
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return "crashed", f"the process ended without a result (exit status {code})"


def _kill_group(pid: int) -> int:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return status


def _failure(kind: str, message: str, duration: float = 0.0, stdout: str = "") -> dict[str, Any]:
    return {
        "ok": False,
        "error_kind": kind,
        "error": message,
        "duration_s": duration,
        "stdout": stdout,
    }


def _run_child(request: dict[str, Any], start: int, results: list[Any], base_dir: str) -> int:
    """Run calls from ``start`` in one child; fill ``results``; return where to continue."""
    n = len(request["args_list"])
    timeout = float(request["limits"]["timeout_s"])
    workdir = tempfile.mkdtemp(prefix="run-", dir=base_dir)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            _child_main(request, start, write_fd, workdir)
        finally:
            os._exit(70)
    os.close(write_fd)
    reader = _FrameReader(read_fd)
    index = start
    exec_stdout = ""
    phase_start = time.monotonic()
    in_exec = True
    try:
        while index < n:
            frame = reader.next(phase_start + timeout)
            now = time.monotonic()
            if isinstance(frame, dict) and in_exec and frame.get("kind") == "ready":
                exec_stdout = str(frame.get("stdout", ""))
                in_exec = False
                phase_start = now
                continue
            if isinstance(frame, dict) and in_exec and frame.get("kind") == "fatal":
                failure = _failure(
                    str(frame.get("error_kind", "crashed")),
                    str(frame.get("error", "")),
                    stdout=str(frame.get("stdout", "")),
                )
                for rest in range(index, n):
                    results[rest] = dict(failure)
                _kill_group(pid)
                return n
            if isinstance(frame, dict) and not in_exec and frame.get("index") == index:
                frame.pop("kind", None)
                frame.pop("index", None)
                if exec_stdout:
                    frame["stdout"] = exec_stdout + str(frame.get("stdout", ""))
                    exec_stdout = ""
                results[index] = frame
                index += 1
                phase_start = now
                continue
            # Timeout, death, or a malformed frame: the child is done for.
            elapsed = now - phase_start
            if frame == "timeout":
                status = _kill_group(pid)
                kind, message = "timeout", f"the call ran longer than {timeout:g} s and was killed"
                if in_exec:
                    message = (
                        f"the program's top level ran longer than {timeout:g} s and was killed"
                    )
            else:
                if frame == "eof":
                    _, status = os.waitpid(pid, 0)
                    kind, message = _describe_death(status)
                else:
                    _kill_group(pid)
                    kind, message = "crashed", "the process sent a malformed result"
            if in_exec:
                for rest in range(index, n):
                    results[rest] = _failure(kind, message, elapsed)
                return n
            results[index] = _failure(kind, message, elapsed, exec_stdout)
            return index + 1
        status = _kill_group(pid)
        return n
    finally:
        os.close(read_fd)
        try:
            os.rmdir(workdir)  # the common case: the program wrote nothing
        except OSError:
            shutil.rmtree(workdir, ignore_errors=True)


def _serve(base_dir: str) -> None:
    while True:
        request = _read_frame(0)
        if request is None:
            return
        n = len(request["args_list"])
        results: list[Any] = [None] * n
        start = 0
        while start < n:
            start = _run_child(request, start, results, base_dir)
        _write_frame(1, {"results": results})


def main() -> None:
    """Entry point of the zygote process."""
    global _READ_ROOTS
    base_dir = sys.argv[1]
    preload = [*_PRELOAD_DEFAULT, *sys.argv[2:]]
    # The zygote ends when its stdin reaches EOF, which happens when the parent dies.
    for name in preload:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    _READ_ROOTS = _python_roots()
    # Imports after the fork may only look where the program may read.
    sys.path[:] = [
        entry
        for entry in sys.path
        if any(os.path.realpath(entry).startswith(root) for root in _READ_ROOTS)
    ]
    sys.path_importer_cache.clear()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Objects that exist now are never collected; this keeps the children's pages shared.
    gc.freeze()
    _write_frame(1, {"hello": os.getpid(), "read_roots": list(_READ_ROOTS)})
    _serve(base_dir)


if __name__ == "__main__":
    main()
