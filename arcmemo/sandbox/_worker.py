"""The sandbox worker: a warm "zygote" interpreter that forks one child per program.

Started by :mod:`arcmemo.sandbox._pool` as ``python -I -B _worker.py CONFIG`` (CONFIG is a
JSON object: ``base_dir``, ``site_dir``, ``preload``, ``hidden``, ``pid1``, ``guard``,
``write_budget``) with a minimal environment; under the ``bwrap`` sandbox inside bubblewrap
namespaces, as PID 1 of its own PID namespace. Its imports come only from the standard
library and ``site_dir``, a folder holding the allowlisted packages. It imports numpy, the
common standard modules and the ``preload`` modules once, then serves requests (framed JSON,
see :mod:`_framing`) read from stdin:

* for each request it creates a fresh private directory under ``base_dir`` and forks a child;
* the child starts its own process group, closes every inherited descriptor, points
  stdin/stdout/stderr at /dev/null, sets rlimits (address space, CPU, file size, no core
  files, no processes), enters the directory, disarms the functions that raise no audit
  event and installs the audit hook of :mod:`_guard`, binds the request's ``bindings``,
  execs the program and then the trusted harness once, and runs the calls, streaming one
  frame per call back through a pipe;
* the zygote enforces the wall-clock limit of each phase; on a timeout or crash it kills the
  child (as PID 1: every other process of the namespace, so nothing a program started
  survives it), records the failed call and continues the remaining calls in a fresh child
  (or, when the request says ``stop_after_failure``, records them as ``not_run``).
  It caps the text of every frame it forwards; the parent validates everything again.
"""

from __future__ import annotations

import os
import sys

# Numerical libraries must not start thread pools (the child may not create threads).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import contextlib  # noqa: E402
import errno  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import importlib.machinery  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import stat  # noqa: E402
import sysconfig  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

if TYPE_CHECKING:
    from arcmemo.sandbox import _framing, _guard, _inert_modules
    from arcmemo.sandbox import text as _text
else:  # the worker runs as a script: its siblings are top-level modules
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _framing
    import _guard
    import _inert_modules
    import text as _text

    del sys.path[0]
    # A program may have a module of its own named text: ours is reachable as _text only.
    del sys.modules["text"]

# Before any library import: the real ctypes and _posixsubprocess never load in this process.
_inert_modules.install()

_CONFIG: dict[str, Any] = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}


def _stdlib_dirs() -> list[str]:
    paths = sysconfig.get_paths()
    return sorted({os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib")})


def _is_site_dir(path: str) -> bool:
    return any(part in ("site-packages", "dist-packages") for part in path.split(os.sep))


# Imports may come only from the standard library and the folder of allowlisted packages.
_STDLIB = _stdlib_dirs()
_SITE_DIR: str = _CONFIG.get("site_dir", "")
sys.path[:] = [
    entry
    for entry in sys.path
    if not _is_site_dir(entry) and any(os.path.realpath(entry).startswith(root) for root in _STDLIB)
] + ([_SITE_DIR] if _SITE_DIR else [])
sys.path_importer_cache.clear()

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
    "inspect",
)
_PROGRAM_FILENAME = "<program>"
_HARNESS_FILENAME = "<harness>"
_LIBRARY_FILENAME = "<library>"
_LIBRARY_MODULE = "arcmemo_library"
_MAX_FRAME_BYTES = 16 * 1024 * 1024
_MAX_VALUE_BYTES = 8 * 1024 * 1024
_MAX_ERROR_CHARS = 4000
_MAX_TRACEBACK_FRAMES = 12
_MAX_ITEMS = _framing.MAX_ITEMS
_MAX_DEPTH = _framing.MAX_DEPTH
_RESULT_FIELDS = ("ok", "value", "error", "error_kind", "stdout", "duration_s")


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


def _to_jsonable(value: Any, depth: int = 0, budget: list[int] | None = None) -> Any:
    if budget is None:
        budget = [_MAX_ITEMS]
    if depth >= _MAX_DEPTH:
        raise _NotJsonable(f"the value is nested more than {_MAX_DEPTH - 1} levels deep")
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**63:
            raise _NotJsonable(f"the integer {str(value)[:20]}... is too large")
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufU":
            raise _NotJsonable(f"a numpy array of dtype {value.dtype} is not JSON-able")
        if value.ndim >= _MAX_DEPTH - depth:
            raise _NotJsonable(f"the value is nested more than {_MAX_DEPTH - 1} levels deep")
        # Every element, and every row of every dimension but the last.
        _spend(budget, value.size + int(np.prod(value.shape[:-1], dtype=np.int64)))
        return value.tolist()
    if isinstance(value, np.generic):
        return _to_jsonable(value.item(), depth + 1, budget)
    if isinstance(value, (list, tuple)):
        _spend(budget, len(value) + 1)
        return [_to_jsonable(item, depth + 1, budget) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise _NotJsonable("a dict with non-string keys is not JSON-able")
        _spend(budget, 2 * len(value) + 1)
        return {key: _to_jsonable(item, depth + 1, budget) for key, item in value.items()}
    raise _NotJsonable(f"a value of type {type(value).__name__} is not JSON-able")


def _spend(budget: list[int], items: int) -> None:
    budget[0] -= items
    if budget[0] < 0:
        raise _NotJsonable(f"the value holds more than {_MAX_ITEMS} items")


def _program_frames(tb: Any) -> list[tuple[str, int, str]]:
    # The one code object the hook lets read ``tb_frame``: it returns names and line numbers
    # only, never a frame, whatever traceback it is handed.
    found: list[tuple[str, int, str]] = []
    while type(tb) is types.TracebackType and len(found) < 10_000:
        code = tb.tb_frame.f_code
        found.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return found


def _format_exception(error: BaseException, source_lines: list[str]) -> str:
    try:
        every = _program_frames(error.__traceback__)
    except Exception:
        every = []
    frames = [f for f in every if f[0] == _PROGRAM_FILENAME]
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
    return _cap("\n".join(lines), _MAX_ERROR_CHARS)


def _cap(text: str, limit: int) -> str:
    return _text.clean_text(text, limit)


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


def _set_limits(limits: dict[str, Any], n_calls: int, address_space: int | None) -> None:
    # Under bwrap there is no /proc: the parent measured the zygote's size for us.
    base = address_space if address_space is not None else _address_space_in_use()
    memory = base + int(limits["memory_mb"]) * 1024 * 1024
    _, ceiling = resource.getrlimit(resource.RLIMIT_AS)
    if ceiling != resource.RLIM_INFINITY:
        memory = min(memory, ceiling)  # the zygote's own limit
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    # The wall-clock deadlines are exact; the CPU limit is a backstop for the whole child.
    cpu = math.ceil(float(limits["timeout_s"]) * (n_calls + 1)) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    file_bytes = int(limits["max_file_bytes"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Not enforced for root; the audit hook (and under bwrap the PID namespace) still hold.
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


def _write_budget(limits: dict[str, Any]) -> int | None:
    if not _CONFIG.get("write_budget"):
        return None
    disk = int(limits["disk_mb"]) * 1024 * 1024
    return max(1, disk // max(1, int(limits["max_file_bytes"])))


def _send(fd: int, frame: dict[str, Any]) -> None:
    frame["id"] = _REQUEST_ID
    _framing.write_frame(fd, frame)


_REQUEST_ID = ""


def _compile(text: str, filename: str) -> types.CodeType:
    return compile(text, filename, "exec", dont_inherit=True)


class _LibraryFinder:
    """Finds ``arcmemo_library`` for the program of this child: the module is built from the
    request's source when the program first imports it (a program that imports nothing pays
    nothing), under the program's guarded builtins, and has no file: no other program, and
    nothing on any disk, ever holds it."""

    def __init__(self, source: str, builtins: dict[str, object]) -> None:
        self._source = source
        self._builtins = builtins

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        if name != _LIBRARY_MODULE:
            return None
        return importlib.machinery.ModuleSpec(name, self)  # type: ignore[arg-type]

    def create_module(self, spec: Any) -> None:
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__["__builtins__"] = self._builtins
        exec(_compile(self._source, _LIBRARY_FILENAME), module.__dict__)


def _child_main(request: dict[str, Any], start: int, out_fd: int, workdir: str) -> None:
    global _REQUEST_ID
    _REQUEST_ID = str(request.get("id", ""))
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
    harness: str = request["harness"]
    entry: str = request["entry"]
    bindings: dict[str, str] = request["bindings"]
    inputs: list[list[Any]] = request["inputs"]
    limits: dict[str, Any] = request["limits"]
    cap = int(limits["max_output_bytes"])

    os.chdir(workdir)
    os.environ["HOME"] = workdir
    os.environ["TMPDIR"] = workdir
    tempfile.tempdir = workdir
    _set_limits(limits, len(inputs) - start, request.get("address_space"))

    source_lines = source.splitlines()
    try:
        code = _compile(source, _PROGRAM_FILENAME)
        harness_code = _compile(harness, _HARNESS_FILENAME) if harness else None
    except (SyntaxError, ValueError) as error:
        message = _format_exception(error, source_lines)
        _send(out_fd, {"kind": "fatal", "error_kind": "syntax", "error": message})
        os._exit(0)
    except MemoryError:
        message = "compiling ran out of memory"
        _send(out_fd, {"kind": "fatal", "error_kind": "memory", "error": message})
        os._exit(0)

    namespace: dict[str, Any] = {
        "__name__": "__sandbox__",
        "__builtins__": _guard.program_builtins(),
    }
    refusals: Any = lambda: 0  # noqa: E731 - replaced when the guard is installed
    if _CONFIG.get("guard", True):
        _guard.disarm()
        refusals = _guard.install(
            workdir,
            _READ_ROOTS,
            hidden=_CONFIG.get("hidden", []),
            allowed_within_hidden=_PACKAGE_ROOTS,
            trusted_code=_program_frames.__code__,
            write_budget=_write_budget(limits),
        )

    library: str = request.get("library", "")
    if library:
        sys.meta_path.insert(0, _LibraryFinder(library, namespace["__builtins__"]))

    capture = _CappedWriter(cap)
    sys.stdout = sys.stderr = capture
    try:
        for name, module in bindings.items():
            namespace[name] = importlib.import_module(module)
        exec(code, namespace)
        if harness_code is not None:
            exec(harness_code, namespace)
        target = namespace.get(entry)
        if not callable(target):
            raise NameError(f"the program defines no function {entry}()")
    except BaseException as error:
        message = _format_exception(error, source_lines)
        _send(
            out_fd,
            {
                "kind": "fatal",
                "error_kind": _error_kind(error, refusals() > 0),
                "error": message,
                "stdout": capture.text(),
            },
        )
        os._exit(0)
    _send(out_fd, {"kind": "ready", "stdout": capture.text()})

    for index in range(start, len(inputs)):
        capture = _CappedWriter(cap)
        sys.stdout = sys.stderr = capture
        result: dict[str, Any] = {"kind": "result", "index": index}
        refused_before = refusals()
        began = time.perf_counter()
        try:
            value = target(*inputs[index])
            result["duration_s"] = time.perf_counter() - began
            try:
                encoded = json.dumps(_to_jsonable(value), allow_nan=False)
            except ValueError:
                raise _NotJsonable("it holds NaN or an infinite float (not JSON)") from None
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
                error=_format_exception(error, source_lines),
            )
        result.setdefault("duration_s", time.perf_counter() - began)
        result["stdout"] = capture.text()
        try:
            _send(out_fd, result)
        except MemoryError:
            _send(
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

_READ_ROOTS: list[str] = []
_PACKAGE_ROOTS: list[str] = []


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


def _reap_everything() -> None:
    """As PID 1 of the namespace: kill and reap every other process in it."""
    # Orphans become children of PID 1, so waiting reaches every process; killing again
    # after each death catches processes forked while the previous kill was under way.
    while True:
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)  # from PID 1: every process of the namespace but itself
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except OSError as error:
            if error.errno != errno.EINTR:
                return


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


def _forwarded(frame: dict[str, Any], stdout_prefix: str) -> dict[str, Any]:
    """The result fields of a child's frame, text capped (the parent validates the rest)."""
    result = {key: frame[key] for key in _RESULT_FIELDS if key in frame}
    stdout = result.get("stdout", "")
    stdout = stdout_prefix + stdout if isinstance(stdout, str) else stdout_prefix
    result["stdout"] = _cap(stdout, _MAX_ERROR_CHARS)
    if isinstance(result.get("error"), str):
        result["error"] = _cap(result["error"], _MAX_ERROR_CHARS)
    return result


class _Retire(Exception):
    """The zygote must not serve another program (its disk could not be emptied, or a
    program's channel carried a frame for another request)."""


def _force_remove(path: str) -> None:
    """Remove ``path`` whatever modes the program gave its folders (the zygote owns them)."""
    # Every process of the program is gone by now, so nothing swaps a folder for a link.
    _open_up(path)
    for folder, subfolders, _files in os.walk(path):
        for name in subfolders:
            _open_up(os.path.join(folder, name))
    shutil.rmtree(path, ignore_errors=True)


def _open_up(path: str) -> None:
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.chmod(path, 0o700)


def _fresh_workdir(base_dir: str) -> str:
    """A new empty folder for one program; _Retire unless the disk holds nothing else."""
    leftovers = os.listdir(base_dir)
    if leftovers:
        for name in leftovers:
            _force_remove(os.path.join(base_dir, name))
        if os.listdir(base_dir):
            raise _Retire("the work disk could not be emptied")
    return tempfile.mkdtemp(prefix="run-", dir=base_dir)


def _run_child(request: dict[str, Any], start: int, results: list[Any], base_dir: str) -> int:
    """Run calls from ``start`` in one child; fill ``results``; return where to continue."""
    n = len(request["inputs"])
    timeout = float(request["limits"]["timeout_s"])
    workdir = _fresh_workdir(base_dir)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            _child_main(request, start, write_fd, workdir)
        finally:
            os._exit(70)
    os.close(write_fd)
    reader = _framing.FrameReader(read_fd, _MAX_FRAME_BYTES, _MAX_ITEMS + 64)
    request_id = request.get("id")
    index = start
    exec_stdout = ""
    phase_start = time.monotonic()
    in_exec = True
    reaped = False
    try:
        while index < n:
            frame = reader.next(phase_start + timeout)
            now = time.monotonic()
            if isinstance(frame, dict) and frame.get("id") != request_id:
                frame = "foreign"
            if isinstance(frame, dict) and in_exec and frame.get("kind") == "ready":
                exec_stdout = _cap(str(frame.get("stdout", "")), _MAX_ERROR_CHARS)
                in_exec = False
                phase_start = now
                continue
            if isinstance(frame, dict) and in_exec and frame.get("kind") == "fatal":
                failure = _forwarded(frame, "")
                failure["ok"] = False
                for rest in range(index, n):
                    results[rest] = dict(failure)
                return n
            if isinstance(frame, dict) and not in_exec and frame.get("index") == index:
                results[index] = _forwarded(frame, exec_stdout)
                exec_stdout = ""
                index += 1
                phase_start = now
                continue
            # Timeout, death, or a malformed frame: the child is done for.
            elapsed = now - phase_start
            if frame == "timeout":
                kind, message = "timeout", f"the call ran longer than {timeout:g} s and was killed"
                if in_exec:
                    message = (
                        f"the program's top level ran longer than {timeout:g} s and was killed"
                    )
            elif frame == "eof":
                _, status = os.waitpid(pid, 0)
                reaped = True
                kind, message = _describe_death(status)
            elif frame == "oversized":
                kind = "invalid_output"
                message = (
                    f"invalid return value: it holds more than {_MAX_ITEMS} items or is nested "
                    f"more than {_MAX_DEPTH - 1} levels deep"
                )
            elif frame == "foreign":
                kind, message = "crashed", "the process sent a frame for another request"
                _RETIRE[0] = True
            else:
                kind, message = "crashed", "the process sent a malformed result"
            if in_exec:
                for rest in range(index, n):
                    results[rest] = _failure(kind, message, elapsed)
                return n
            results[index] = _failure(kind, message, elapsed, exec_stdout)
            return index + 1
        return n
    finally:
        if not reaped:
            _kill_group(pid)
        if _CONFIG.get("pid1"):
            _reap_everything()
        os.close(read_fd)
        try:
            os.rmdir(workdir)  # the common case: the program wrote nothing
        except OSError:
            _force_remove(workdir)
            if os.path.lexists(workdir):
                _RETIRE[0] = True


_RETIRE = [False]


def _serve(base_dir: str) -> None:
    reader = _framing.FrameReader(0, 1 << 30)
    while True:
        request = reader.next()
        if not isinstance(request, dict):
            return
        n = len(request["inputs"])
        results: list[Any] = [None] * n
        start = 0
        while start < n:
            try:
                start = _run_child(request, start, results, base_dir)
            except _Retire as error:
                _RETIRE[0] = True
                for rest in range(start, n):
                    results[rest] = _failure("crashed", f"the sandbox worker retired: {error}")
                break
            # _run_child stops short of n only after a timeout or crash at start - 1.
            if start < n and request.get("stop_after_failure"):
                failed = results[start - 1].get("error_kind", "a failure")
                message = f"not run: the program was stopped after call {start} ({failed})"
                for rest in range(start, n):
                    results[rest] = _failure("not_run", message)
                break
        reply = {"id": request.get("id"), "results": results, "retire": _RETIRE[0]}
        _framing.write_frame(1, reply)
        if _RETIRE[0]:
            return


def _package_roots(site_dir: str) -> list[str]:
    if not site_dir or not os.path.isdir(site_dir):
        return []
    return sorted(
        {os.path.realpath(os.path.join(site_dir, name)) for name in os.listdir(site_dir)}
        | {os.path.realpath(site_dir)}
    )


def main() -> None:
    """Entry point of the zygote process."""
    global _READ_ROOTS, _PACKAGE_ROOTS
    base_dir = _CONFIG["base_dir"]
    preload = [*_PRELOAD_DEFAULT, *_CONFIG.get("preload", [])]
    # The zygote ends when its stdin reaches EOF, which happens when the parent dies.
    for name in preload:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    _PACKAGE_ROOTS = _package_roots(_SITE_DIR)
    _READ_ROOTS = [*_STDLIB, *_PACKAGE_ROOTS]
    sys.path_importer_cache.clear()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Objects that exist now are never collected; this keeps the children's pages shared.
    gc.freeze()
    _framing.write_frame(1, {"hello": os.getpid(), "read_roots": _READ_ROOTS})
    # Startup errors went to the parent; from now on nothing reads this process' stderr.
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)
    _serve(base_dir)


if __name__ == "__main__":
    main()
