"""The audit hook that runs inside a sandbox child just before the untrusted program.

Loaded by :mod:`arcmemo.sandbox._worker` (a separate interpreter); never imported by the
parent. The hook refuses, by raising :class:`SandboxViolation`:

* process creation (fork, exec*, spawn, system, subprocess, pty) and signals to other pids;
* every ``socket.*`` event (creation, connect, bind, DNS lookups);
* opening files for writing, and remove/rename/mkdir/chmod/... outside the working directory;
  links and symlinks anywhere; chdir;
* opening files for reading outside the Python installation and the working directory
  (so ``/proc/<pid>/environ``, ``$HOME`` and the repository are unreadable); opening
  directories (a directory fd would make later relative ``dir_fd`` calls escape the checks);
* ctypes (every ``ctypes.*`` event: numpy and scipy import the module themselves, so an
  import block alone would not do; the program's own ``import ctypes`` is refused too, see
  :func:`program_builtins`), and first imports of ``cffi``, ``_posixsubprocess`` ...;
* ways to reach or change the hook itself: more audit hooks, ``gc`` object walks, tracers,
  frame access (``sys._getframe``, ``tb_frame``, ``gi_frame``...), raw code objects
  (``code.__new__``/``replace``: hand-made bytecode can corrupt memory),
  ``resource.setrlimit``. ``marshal.loads`` stays allowed because the import system loads
  ``.pyc`` files with it; a program could still build bad bytecode that way (documented in
  :mod:`arcmemo.sandbox.local` as not contained). A refused ``sys.addaudithook`` is silently
  ignored by CPython: the program's hook is simply not added.

The hook keeps its state only in closure cells of functions that are reachable from nothing
but the interpreter's hook list, and it binds every function it uses at install time, so a
program that monkeypatches ``os``, ``posixpath`` or ``builtins`` does not change what the
hook decides. It fails closed: an unexpected error inside the hook refuses the event.
"""

from __future__ import annotations

import builtins
import posix
import stat as _stat
import sys
from collections.abc import Callable, Iterable


class SandboxViolation(PermissionError):
    """The sandbox refused an operation of the program."""


class FrameAccessRefused(SandboxViolation, ValueError):
    """Frame access was refused.

    Also a ValueError, the error the standard library expects where ``sys._getframe`` does not
    exist, so ``namedtuple``, ``typing`` and ``enum`` degrade gracefully instead of failing.
    """


_FORBIDDEN_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "os.startfile",
        "os.symlink",
        "os.link",
        "os.chdir",
        "os.chroot",
        "subprocess.Popen",
        "pty.spawn",
        "sys.addaudithook",
        "sys.settrace",
        "sys.setprofile",
        "sys._current_frames",
        "sys._current_exceptions",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "code.__new__",
        "resource.setrlimit",
        "resource.prlimit",
        "signal.pthread_kill",
        "sys.remote_exec",
        "_xxsubinterpreters.create",
        "cpython.PyInterpreterState_New",
    }
)
_FORBIDDEN_PREFIXES = ("socket.", "ctypes.", "winreg.", "msvcrt.")
_FORBIDDEN_IMPORTS = frozenset(
    {
        "ctypes",
        "_ctypes",
        "cffi",
        "_cffi_backend",
        "_posixsubprocess",
        "_xxsubinterpreters",
        "_interpreters",
        "_testcapi",
        "_testinternalcapi",
        "_testmultiphase",
        "faulthandler",
    }
)
# Attributes that hand out frame objects; from a frame a program could reach the harness'
# locals and the hook's own frame when it raises.
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
# Events whose first argument is a path the program wants to change.
_WRITE_PATH_EVENTS = frozenset(
    {
        "os.remove",
        "os.rmdir",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.chflags",
        "os.lchflags",
        "os.truncate",
        "os.utime",
        "os.setxattr",
        "os.removexattr",
        "os.mkfifo",
        "os.mknod",
        "shutil.rmtree",
        "shutil.chown",
        "tempfile.mkstemp",
        "tempfile.mkdtemp",
        "sqlite3.connect",
    }
)
_MOVE_EVENTS = frozenset({"os.rename", "shutil.move"})
_COPY_EVENTS = frozenset({"shutil.copyfile", "shutil.copytree"})
_READ_PATH_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.getxattr"})
_WRITE_FLAGS = posix.O_WRONLY | posix.O_RDWR | posix.O_CREAT | posix.O_TRUNC | posix.O_APPEND
_READABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


def program_builtins() -> dict[str, object]:
    """Builtins for the program's namespace, whose ``__import__`` refuses forbidden modules.

    Library code keeps the real ``__import__`` (scipy imports ctypes, for instance); what
    makes ctypes harmless is that the hook refuses every ``ctypes.*`` operation. This only
    gives the program's own ``import ctypes`` a clear, early refusal.
    """
    real_import = builtins.__import__
    forbidden = _FORBIDDEN_IMPORTS
    violation = SandboxViolation

    def guarded_import(
        name: str,
        globals: dict | None = None,
        locals: dict | None = None,
        fromlist: tuple = (),
        level: int = 0,
    ) -> object:
        if level == 0 and str.split(name, ".")[0] in forbidden:
            raise violation(f"sandbox: import of {name} refused")
        return real_import(name, globals, locals, fromlist, level)

    namespace = dict(builtins.__dict__)
    namespace["__import__"] = guarded_import
    return namespace


def install(workdir: str, read_roots: Iterable[str]) -> Callable[[bool], None]:
    """Install the hook for a program confined to ``workdir``; return the trust switch.

    ``read_roots`` are directories whose files the program may read (the Python
    installation). The returned function toggles "harness mode", in which frame access is
    allowed so that the harness can format tracebacks; only the harness holds it.
    """
    # Everything the hook uses is bound here, out of reach of the program.
    isinstance_ = builtins.isinstance
    str_ = builtins.str
    bytes_ = builtins.bytes
    int_ = builtins.int
    tuple_ = builtins.tuple
    str_slice = str.__getitem__
    str_startswith = str.startswith
    str_split = str.split
    str_join = str.join
    bytes_decode = bytes.decode
    lstat = posix.lstat
    readlink = posix.readlink
    stat_ = posix.stat
    s_islnk = _stat.S_ISLNK
    s_isdir = _stat.S_ISDIR
    getpid = posix.getpid
    violation = SandboxViolation
    frame_violation = FrameAccessRefused
    forbidden_events = _FORBIDDEN_EVENTS
    forbidden_prefixes = _FORBIDDEN_PREFIXES
    forbidden_imports = _FORBIDDEN_IMPORTS
    frame_attributes = _FRAME_ATTRIBUTES
    write_path_events = _WRITE_PATH_EVENTS
    move_events = _MOVE_EVENTS
    copy_events = _COPY_EVENTS
    read_path_events = _READ_PATH_EVENTS
    write_flags = _WRITE_FLAGS
    home = str_slice(workdir, slice(None))
    readable_exact = tuple_(_READABLE_DEVICES)
    roots = tuple_(str_slice(root, slice(None)) for root in read_roots)
    trusted = [False]
    refused = [0]

    def to_text(path: object) -> str:
        if isinstance_(path, str_):
            return str_slice(path, slice(None))
        if isinstance_(path, bytes_):
            return bytes_decode(path, "utf-8", "surrogateescape")
        raise violation(f"sandbox: path of type {type(path).__name__} refused")

    def normalize(path: str) -> list[str]:
        if not str_startswith(path, "/"):
            path = home + "/" + path
        parts: list[str] = []
        for part in str_split(path, "/"):
            if part in ("", "."):
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(part)
        return parts

    def resolve(path: str) -> str:
        # Like os.path.realpath, but built only on C functions bound above.
        pending = normalize(path)
        done: list[str] = []
        hops = 0
        while pending:
            part = pending.pop(0)
            candidate = "/" + str_join("/", [*done, part])
            try:
                mode = lstat(candidate).st_mode
            except OSError:
                done.append(part)
                done.extend(pending)
                break
            if s_islnk(mode):
                hops += 1
                if hops > 40:
                    raise violation("sandbox: too many symbolic links")
                target = readlink(candidate)
                base = "/" + str_join("/", done)
                joined = target if str_startswith(target, "/") else base + "/" + target
                pending = normalize(joined) + pending
                done = []
            else:
                done.append(part)
        return "/" + str_join("/", done)

    def within(path: str, root: str) -> bool:
        return path == root or str_startswith(path, root + "/")

    def check_write(path: object) -> None:
        if isinstance_(path, int_):
            return  # an fd that is already open passed its check when it was opened
        text = to_text(path)
        if text == ":memory:":
            return
        resolved = resolve(text)
        if not within(resolved, home) or resolved == home:
            raise violation(f"sandbox: writing outside the working directory refused: {text}")

    def check_read(path: object, *, open_event: bool) -> None:
        if isinstance_(path, int_):
            return
        text = to_text(path)
        resolved = resolve(text)
        if open_event:
            try:
                is_dir = s_isdir(stat_(resolved).st_mode)
            except OSError:
                is_dir = False
            if is_dir:
                raise violation(f"sandbox: opening a directory refused: {text}")
        if resolved in readable_exact or within(resolved, home):
            return
        for root in roots:
            if within(resolved, root):
                return
        raise violation(f"sandbox: reading outside the working directory refused: {text}")

    def decide(event: str, args: tuple) -> None:
        if event == "open":
            path, _mode, flags = args
            if not isinstance_(flags, int_) or flags & write_flags:
                check_write(path)
            else:
                check_read(path, open_event=True)
        elif event in forbidden_events or str_startswith(event, forbidden_prefixes):
            raise violation(f"sandbox: {event} refused")
        elif event == "import":
            name = args[0]
            if str_split(name, ".")[0] in forbidden_imports:
                raise violation(f"sandbox: import of {name} refused")
        elif event == "object.__getattr__":
            if args[1] in frame_attributes and not trusted[0]:
                raise frame_violation(f"sandbox: access to frame attribute {args[1]} refused")
        elif event == "sys._getframe" or event == "sys._getframemodulename":
            if not trusted[0]:
                raise frame_violation(f"sandbox: {event} refused")
        elif event == "os.kill":
            if args[0] != getpid():
                raise violation("sandbox: signals to other processes refused")
        elif event == "os.killpg":
            raise violation("sandbox: signals to process groups refused")
        elif event in write_path_events:
            check_write(args[0])
        elif event in move_events:
            check_write(args[0])
            check_write(args[1])
        elif event in copy_events:
            check_read(args[0], open_event=False)
            check_write(args[1])
        elif event in read_path_events:
            if args[0] is None:
                return
            check_read(args[0], open_event=False)

    def hook(event: str, args: tuple) -> None:
        try:
            decide(event, args)
        except frame_violation:
            raise  # not counted: the standard library probes frames and copes with a refusal
        except violation:
            refused[0] += 1
            raise
        except BaseException as error:  # fail closed
            refused[0] += 1
            raise violation(f"sandbox: {event} refused ({type(error).__name__})") from None

    def set_trusted(value: bool) -> None:
        trusted[0] = value

    def refusals() -> int:
        return refused[0]

    sys.addaudithook(hook)
    return set_trusted, refusals
