"""Hostile programs: each test shows one attack contained (and would fail without the guard)."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arcmemo.sandbox import CallResult, Sandbox, SandboxLimits, get_sandbox

QUICK = SandboxLimits(timeout_s=1.0)


def run(sandbox: Sandbox, body: str, *args: object, limits: SandboxLimits = QUICK) -> CallResult:
    """Run ``def attack(*args): <body>`` once."""
    indented = "\n".join("    " + line for line in body.strip().splitlines())
    source = f"def attack(*args):\n{indented}\n"
    return sandbox.call(source, "attack", [list(args)], limits=limits)[0]


def assert_still_works(sandbox: Sandbox) -> None:
    assert sandbox.call("def f():\n    return 42\n", "f", [[]])[0].value == 42


# ----------------------------------------------------------------------------- time, memory


def test_infinite_loop_times_out(sandbox: Sandbox) -> None:
    result = run(sandbox, "while True:\n    pass")
    assert result.error_kind == "timeout"
    assert_still_works(sandbox)


def test_ignoring_signals_does_not_escape_the_timeout(sandbox: Sandbox) -> None:
    body = """
import signal, time
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGXCPU, signal.SIGALRM):
    signal.signal(s, signal.SIG_IGN)
while True:
    time.sleep(0.01)
"""
    assert run(sandbox, body).error_kind == "timeout"


def test_infinite_loop_at_top_level_times_out_every_call(sandbox: Sandbox) -> None:
    results = sandbox.call(
        "while True:\n    pass\ndef f():\n    return 1\n", "f", [[], []], limits=QUICK
    )
    assert [r.error_kind for r in results] == ["timeout", "timeout"]


@pytest.mark.parametrize(
    "allocation",
    [
        "import numpy as np\nx = np.ones((60000, 60000))",
        "x = bytearray(8 * 1024 ** 3)",
        "x = [0] * 10 ** 10",
        "x = []\nwhile True:\n    x.append(bytearray(10 ** 7))",
    ],
)
def test_huge_allocation_is_a_memory_error(sandbox: Sandbox, allocation: str) -> None:
    result = run(sandbox, allocation + "\nreturn 1", limits=SandboxLimits(timeout_s=10))
    assert result.error_kind == "memory", result
    assert_still_works(sandbox)


def test_deep_recursion_is_an_exception(sandbox: Sandbox) -> None:
    source = "def down(n):\n    return down(n + 1)\n\ndef attack():\n    return down(0)\n"
    result = sandbox.call(source, "attack", [[]], limits=QUICK)[0]
    assert result.error_kind == "exception"
    assert "RecursionError" in (result.error or "")
    assert len(result.error or "") < 5000  # the repeated frames are folded


def test_unbounded_recursion_limit_crashes_only_its_call(sandbox: Sandbox) -> None:
    source = (
        "import sys\nsys.setrecursionlimit(10 ** 8)\n"
        "def down(n):\n    return down(n + 1)\n\n"
        "def attack(deep):\n    return down(0) if deep else 'fine'\n"
    )
    results = sandbox.call(source, "attack", [[True], [False]], limits=SandboxLimits(timeout_s=3))
    # CPython 3.11+ keeps Python frames off the C stack: this ends in memory or time.
    assert results[0].error_kind in {"crashed", "memory", "exception", "timeout"}
    assert results[1].value == "fine"


def test_printing_gigabytes_is_capped(sandbox: Sandbox) -> None:
    body = 'chunk = "x" * 10 ** 6\nfor _ in range(3000):\n    print(chunk)\nreturn "done"'
    limits = SandboxLimits(timeout_s=20, max_output_bytes=1000)
    result = run(sandbox, body, limits=limits)
    assert result.value == "done"
    assert result.stdout.startswith("x" * 1000)
    assert len(result.stdout) < 1200
    assert "more characters of output dropped" in result.stdout


def test_writing_to_the_real_stdout_descriptor_goes_nowhere(sandbox: Sandbox) -> None:
    result = run(
        sandbox, "import os, sys\nos.write(1, b'leak')\nsys.__stdout__.write('x')\nreturn 1"
    )
    assert result.ok and result.stdout == ""


def test_file_size_limit(sandbox: Sandbox) -> None:
    body = 'with open("big.bin", "wb") as f:\n    f.write(bytes(5 * 10 ** 6))\nreturn 1'
    result = run(sandbox, body, limits=SandboxLimits(max_file_bytes=1_000_000))
    assert result.error_kind == "exception"
    assert "File too large" in (result.error or "") or "EFBIG" in (result.error or "")


# ----------------------------------------------------------------------------- processes


@pytest.mark.parametrize(
    "spawn",
    [
        # bounded, so that a broken guard cannot turn the test run into a real fork bomb
        "import os\nfor _ in range(20):\n    if os.fork() == 0:\n        os._exit(0)",
        "import subprocess\nsubprocess.run(['touch', MARK])",
        "import os\nos.system('touch ' + MARK)",
        "import os\nos.execv('/usr/bin/touch', ['touch', MARK])",
        "import os\nos.posix_spawn('/usr/bin/touch', ['touch', MARK], {})",
        "import os\nos.spawnv(os.P_WAIT, '/usr/bin/touch', ['touch', MARK])",
        "import multiprocessing\np = multiprocessing.Process(target=print)\np.start()",
        "import pty\npty.spawn(['touch', MARK])",
        "import sys, subprocess\nsys.modules['_posixsubprocess'].fork_exec(['touch', MARK])",
    ],
)
def test_process_creation_is_refused(sandbox: Sandbox, tmp_path: Path, spawn: str) -> None:
    mark = tmp_path / "spawned"
    result = run(sandbox, f"MARK = {str(mark)!r}\n{spawn}\nreturn 'escaped'")
    assert result.error_kind == "forbidden", result
    assert not mark.exists()


def test_fork_bomb_leaves_no_processes(sandbox: Sandbox) -> None:
    before = _descendants(os.getpid())
    # Children exit at once, so a broken guard cannot multiply them (we run as root, where
    # RLIMIT_NPROC does not apply); the guard must still refuse every fork.
    body = (
        "import os\nrefused = 0\nfor _ in range(50):\n"
        "    try:\n        if os.fork() == 0:\n            os._exit(0)\n"
        "    except OSError:\n        refused += 1\n"
        "return refused"
    )
    assert run(sandbox, body).value == 50
    assert _descendants(os.getpid()) == before


def test_killing_the_parent_is_refused(sandbox: Sandbox) -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: received.append(signum))
    try:
        pid = os.getpid()
        attacks = [
            f"import os, signal\nos.kill({pid}, signal.SIGUSR1)",
            "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
            "import os, signal\nos.killpg(0, signal.SIGKILL)",
            f"import signal\nsignal.pthread_kill({threading.main_thread().ident}, signal.SIGUSR1)",
            "import os, signal\nos.kill(0, signal.SIGKILL)",
            # Not attempted: os.kill(-1, ...) and signals to our process group. As root they
            # would hit every process on the machine if the guard ever regressed.
        ]
        for attack in attacks:
            result = run(sandbox, attack + "\nreturn 'sent'")
            assert result.error_kind == "forbidden", (attack, result)
        assert received == []
        assert_still_works(sandbox)
    finally:
        signal.signal(signal.SIGUSR1, previous)


# ----------------------------------------------------------------------------- files


def test_writes_outside_the_working_directory_are_refused(sandbox: Sandbox, tmp_path: Path) -> None:
    home = Path.home()
    targets = [
        home / f"arcmemo-escape-{uuid.uuid4().hex}",
        Path("/tmp") / f"arcmemo-escape-{uuid.uuid4().hex}",
        tmp_path / "escape",
    ]
    for target in targets:
        for attack in [
            f"open({str(target)!r}, 'w').write('x')",
            f"import os\nos.close(os.open({str(target)!r}, os.O_CREAT | os.O_WRONLY))",
            f"import os\nos.mkdir({str(target)!r})",
            f"import pathlib\npathlib.Path({str(target)!r}).write_text('x')",
            "import os\nrel = os.path.relpath(" + repr(str(target)) + ")\nopen(rel, 'w')",
            f"import shutil\nopen('inside', 'w').close()\nshutil.move('inside', {str(target)!r})",
            f"import sqlite3\nsqlite3.connect({str(target)!r}).execute('create table t(x)')",
        ]:
            result = run(sandbox, attack + "\nreturn 'written'")
            assert result.error_kind == "forbidden", (attack, result)
            assert not target.exists(), attack


def test_existing_files_outside_cannot_be_changed(sandbox: Sandbox, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    for attack in [
        f"import os\nos.remove({str(victim)!r})",
        f"import os\nos.rename({str(victim)!r}, 'mine')",
        f"import os\nos.chmod({str(victim)!r}, 0o777)",
        f"import os\nos.truncate({str(victim)!r}, 0)",
        f"import shutil\nshutil.rmtree({str(tmp_path)!r})",
        f"import os\nos.link({str(victim)!r}, 'hard')\nopen('hard', 'w').write('gone')",
        f"import os\nos.symlink({str(victim)!r}, 'soft')\nopen('soft', 'w').write('gone')",
        f"open({str(victim)!r}, 'a').write('more')",
    ]:
        result = run(sandbox, attack + "\nreturn 'changed'")
        assert result.error_kind == "forbidden", (attack, result)
    assert victim.read_text() == "keep"
    assert oct(victim.stat().st_mode & 0o777) != oct(0o777)


def test_the_working_directory_is_private_fresh_and_deleted(sandbox: Sandbox) -> None:
    body = (
        "import os\nlisting = os.listdir('.')\n"
        "os.makedirs('sub/dir')\nopen('sub/dir/f.txt', 'w').write('ok')\n"
        "return [os.getcwd(), listing, open('sub/dir/f.txt').read()]"
    )
    first = run(sandbox, body)
    second = run(sandbox, body)
    assert first.ok and second.ok, (first, second)
    assert first.value[1] == [] and second.value[1] == []
    assert first.value[2] == "ok"
    assert first.value[0] != second.value[0]
    assert not os.path.exists(first.value[0])
    assert not os.path.exists(second.value[0])


def test_reading_outside_is_refused(sandbox: Sandbox) -> None:
    repository_file = str(Path(__file__).resolve())
    for path in ["/etc/passwd", repository_file, str(Path.home() / ".bashrc"), "/"]:
        result = run(sandbox, f"return open({path!r}).read()")
        assert result.error_kind == "forbidden", (path, result)
    assert run(sandbox, "import os\nreturn os.listdir('/')").error_kind == "forbidden"
    # a directory descriptor would let dir_fd-relative calls escape the path checks
    assert run(sandbox, "import os\nreturn os.open('/tmp', os.O_RDONLY)").error_kind == "forbidden"


def test_libraries_still_import_lazily(sandbox: Sandbox) -> None:
    body = (
        "import scipy.signal, json, fractions\n"
        "return json.dumps({'ok': fractions.Fraction(1, 2) == 0.5})"
    )
    assert run(sandbox, body, limits=SandboxLimits(timeout_s=20)).value == '{"ok": true}'


# ----------------------------------------------------------------------------- secrets


@pytest.fixture
def secret_sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Sandbox, str]]:
    secret = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    box = get_sandbox("local", max_workers=1)
    yield box, secret
    box.close()


def test_api_keys_are_unreadable(secret_sandbox: tuple[Sandbox, str]) -> None:
    sandbox, secret = secret_sandbox
    parent = os.getpid()
    attacks = {
        "environ": "import os\nreturn dict(os.environ)",
        "getenv": "import os\nreturn os.getenv('OPENAI_API_KEY')",
        "self": "return open('/proc/self/environ', 'rb').read().decode()",
        "zygote": "import os\nreturn open(f'/proc/{os.getppid()}/environ', 'rb').read().decode()",
        "caller": f"return open('/proc/{parent}/environ', 'rb').read().decode()",
        "via_root": f"return open('/proc/self/root/proc/{parent}/environ', 'rb').read().decode()",
        "init": "return open('/proc/1/environ', 'rb').read().decode()",
        "cmdline": f"return open('/proc/{parent}/cmdline', 'rb').read().decode()",
        "mem": f"return open('/proc/{parent}/mem', 'rb').read(10).decode()",
    }
    results = {name: run(sandbox, body) for name, body in attacks.items()}
    assert secret not in json.dumps({name: r.model_dump() for name, r in results.items()})
    assert results["getenv"].ok and results["getenv"].value is None
    assert results["environ"].ok and "OPENAI_API_KEY" not in results["environ"].value
    for name in ["zygote", "caller", "via_root", "init", "mem"]:
        assert results[name].error_kind == "forbidden", (name, results[name])


# ----------------------------------------------------------------------------- network


def test_sockets_are_refused_and_the_listener_sees_nothing(sandbox: Sandbox) -> None:
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
        attacks = [
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=0.5)",
            "import socket\ns = socket.socket()",
            "import urllib.request\n"
            f"urllib.request.urlopen('http://127.0.0.1:{port}/', timeout=0.5)",
            "import socket\nsocket.getaddrinfo('example.com', 80)",
            "import http.client\n"
            f"c = http.client.HTTPConnection('127.0.0.1', {port}, timeout=0.5)\n"
            "c.request('GET', '/')",
        ]
        for attack in attacks:
            result = run(sandbox, attack + "\nreturn 'connected'")
            assert result.error_kind == "forbidden", (attack, result)
    finally:
        listener.join()
        server.close()
    assert connections == []


def test_workers_run_in_their_own_network_namespace_when_permitted() -> None:
    box = get_sandbox("local", max_workers=1)
    try:
        if not box.network_isolated:  # type: ignore[attr-defined]
            pytest.skip("unshare -n is not permitted on this machine")
        ours = os.readlink("/proc/self/ns/net")
        zygote = box._acquire()  # type: ignore[attr-defined]
        try:
            theirs = os.readlink(f"/proc/{zygote.process.pid}/ns/net")
        finally:
            box._release(zygote, healthy=True)  # type: ignore[attr-defined]
        assert theirs != ours
    finally:
        box.close()


# ----------------------------------------------------------------------------- the guard itself


@pytest.mark.parametrize(
    "tamper",
    [
        "import ctypes",
        "import _ctypes",
        "import ctypes.util",
        "from ctypes import CDLL",
        "import gc\ngc.get_objects()",
        "import sys\nsys._getframe()",
        "import inspect\ninspect.currentframe()",
        "import sys\nsys.settrace(lambda *a: None)",
        "import sys\nsys.setprofile(lambda *a: None)",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__traceback__.tb_frame",
        "def g():\n    yield 1\ng().gi_frame",
        "(lambda: 0).__code__.replace(co_code=b'')",
        "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))",
        "import os\nos.chdir('/')",
    ],
)
def test_the_guard_cannot_be_disabled(sandbox: Sandbox, tamper: str) -> None:
    result = run(sandbox, tamper + "\nreturn 'tampered'")
    assert result.error_kind == "forbidden", result


def test_native_ctypes_is_never_loaded(sandbox: Sandbox) -> None:
    body = """
import sys, numpy, scipy.signal
ct = sys.modules['ctypes']
found = []
for attempt in [
    lambda: ct.string_at(id(1), 8),
    lambda: ct.c_char_p(id(1)).value,
    lambda: ct.c_int.from_address(id(1)),
    lambda: numpy._core._internal.ctypes.memmove(id(1), id(2), 8),
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
    # no attempt produced raw memory (bytes) or a real address (int)
    assert "bytes" not in kinds and "int" not in kinds, kinds
    assert one_plus_one_is_still_two(sandbox)


def one_plus_one_is_still_two(sandbox: Sandbox) -> bool:
    return sandbox.call("def f():\n    return 1 + 1\n", "f", [[]])[0].value == 2


def test_adding_an_audit_hook_is_ignored(sandbox: Sandbox) -> None:
    body = (
        "import sys\nseen = []\n"
        "sys.addaudithook(lambda *a: seen.append(a))\nopen('x', 'w')\nreturn seen"
    )
    assert run(sandbox, body).value == []


def test_monkeypatching_the_path_helpers_does_not_open_the_file_system(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    target = tmp_path / "patched"
    body = f"""
import os, os.path, posixpath
inside = os.path.join(os.getcwd(), 'x')
os.path.realpath = posixpath.realpath = lambda *a, **k: inside
os.path.abspath = posixpath.abspath = lambda *a, **k: inside
os.path.normpath = posixpath.normpath = lambda *a, **k: inside
os.getcwd = lambda: {str(tmp_path)!r}
open({str(target)!r}, 'w').write('x')
return 'written'
"""
    result = run(sandbox, body)
    assert result.error_kind == "forbidden", result
    assert not target.exists()


def test_monkeypatching_builtins_does_not_open_the_file_system(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    target = tmp_path / "patched"
    body = f"""
import builtins
builtins.isinstance = lambda *a: True
builtins.len = lambda *a: 0
builtins.any = builtins.all = lambda *a: True
open({str(target)!r}, 'w').write('x')
return 'written'
"""
    result = run(sandbox, body)
    # the harness itself may trip over the broken builtins; what matters is the refusal
    assert result.error_kind in {"forbidden", "crashed"}, result
    assert result.value != "written"
    assert not target.exists()


def test_a_program_that_catches_refusals_still_gets_nothing(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    target = tmp_path / "caught"
    body = f"""
outcomes = []
for attempt in range(3):
    try:
        open({str(target)!r}, 'w').write('x')
        outcomes.append('wrote')
    except BaseException as error:
        outcomes.append(type(error).__name__)
return outcomes
"""
    result = run(sandbox, body)
    assert result.value == ["SandboxViolation"] * 3
    assert not target.exists()


# ----------------------------------------------------------------------------- cleanup


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    pending = [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def test_close_leaves_no_processes_and_no_files() -> None:
    before = _descendants(os.getpid())
    box = get_sandbox("local", max_workers=3)
    results: list[object] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(
                run(box, "while True:\n    pass", limits=SandboxLimits(timeout_s=0.3))
            )
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert run(box, "return 1").value == 1
    assert len(_descendants(os.getpid()) - before) >= 1  # warm workers exist
    base_dir = box._base_dir  # type: ignore[attr-defined]
    box.close()
    assert _descendants(os.getpid()) == before
    assert not os.path.exists(base_dir)
    with pytest.raises(RuntimeError, match="closed"):
        run(box, "return 1")
