"""Native code against the kernel layer: what a program that runs machine code still cannot do.

The probe (``tests/fixtures/native/probe.c``, built at test time) is a real extension
module making raw system calls. A program cannot load it from its working directory (first
test: the ``noexec`` disk and the hook each refuse it). To test what holds *after* native
code runs, the other tests hand the probe to the program as an allowlisted package, under
``bwrap`` and under ``kernel-only`` (bwrap without the audit hook): only the namespaces,
the seccomp filter, the launcher and the rlimits stand between it and the host.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arcmemo.sandbox import Program, Sandbox, SandboxLimits, _seccomp, bwrap
from tests.support.native_module import MODULE, build, plant_key, syscall_numbers
from tests.support.sandboxes import call, make, run

KINDS: dict[str, dict[str, object]] = {
    "bwrap": {"name": "bwrap"},
    "process": {"name": "process"},
    "kernel-only": {"name": "bwrap", "audit_hook": False},
}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("native"))


@pytest.fixture(scope="module", params=list(KINDS))
def any_box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    settings = dict(KINDS[request.param])
    box = make(str(settings.pop("name")), **settings, max_workers=1)
    yield box
    box.close()


@pytest.fixture(scope="module", params=["bwrap", "kernel-only"])
def native(request: pytest.FixtureRequest, probe: Path) -> Iterator[Sandbox]:
    """A kernel sandbox whose programs may import the probe (as if they had native code)."""
    settings = dict(KINDS[request.param])
    sys.path.insert(0, str(probe.parent))
    try:
        box = make(
            str(settings.pop("name")),
            **settings,
            max_workers=1,
            packages=["numpy", "scipy", MODULE],
        )
    finally:
        sys.path.remove(str(probe.parent))
    yield box
    box.close()


# ----------------------------------------------------------------------------- loading


def test_a_shared_object_the_program_writes_is_never_loaded(any_box: Sandbox, probe: Path) -> None:
    body = f"""
import importlib.machinery, importlib.util
data = bytes.fromhex(args[0])
with open('{MODULE}.abi3.so', 'wb') as out:
    out.write(data)
loader = importlib.machinery.ExtensionFileLoader('{MODULE}', '{MODULE}.abi3.so')
spec = importlib.util.spec_from_loader('{MODULE}', loader)
module = importlib.util.module_from_spec(spec)
return module.syscall(39)
"""
    result = run(any_box, body, probe.read_bytes().hex())
    assert not result.ok, result
    assert result.error_kind in ("forbidden", "exception"), result


# ----------------------------------------------------------------------------- seccomp


def test_the_seccomp_filter_refuses_dangerous_syscalls(native: Sandbox) -> None:
    refused = syscall_numbers(
        "keyctl", "add_key", "request_key", "ptrace", "process_vm_readv", "process_vm_writev",
        "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
        "io_uring_register", "memfd_create", "kexec_load", "kexec_file_load", "mount",
        "umount2", "pivot_root", "unshare", "setns", "pidfd_open", "pidfd_getfd", "shmget",
    )  # fmt: skip
    body = f"""
import {MODULE} as probe
return {{name: probe.syscall(number, 0, 0, 0, 0, 0, 0)[1] for name, number in args[0].items()}}
"""
    result = run(native, body, refused)
    assert result.ok, result
    assert result.value == {name: errno.EPERM for name in refused}, result.value


def test_only_unix_sockets_can_be_created(native: Sandbox) -> None:
    families = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16, "AF_PACKET": 17,
                "AF_VSOCK": 40}  # fmt: skip
    numbers = syscall_numbers("socket", "socketpair")
    body = f"""
import {MODULE} as probe
out = {{}}
for name, family in args[0].items():
    fd, error = probe.syscall(args[1]['socket'], family, 1, 0)
    out[name] = error
    if fd >= 0:
        probe.syscall(3, fd)
return out
"""
    result = run(native, body, families, numbers)
    assert result.ok, result
    assert result.value["AF_UNIX"] == 0
    for name in families:
        if name != "AF_UNIX":
            assert result.value[name] == errno.EAFNOSUPPORT, (name, result.value)


def test_python_sockets_of_other_families_fail_without_the_hook(native: Sandbox) -> None:
    body = """
import socket
out = []
for family in (socket.AF_VSOCK, socket.AF_NETLINK, socket.AF_INET):
    try:
        socket.socket(family, socket.SOCK_STREAM if family != socket.AF_NETLINK else 3)
        out.append('created')
    except OSError as error:
        out.append(error.errno)
return out
"""
    result = run(native, body)
    assert not result.ok or "created" not in result.value, result


# ----------------------------------------------------------------------------- keyring


def test_the_callers_session_keyring_is_out_of_reach(native: Sandbox) -> None:
    secret = b"keyring-secret-0123456789"
    key = plant_key(secret)
    body = f"""
import {MODULE} as probe
keyctl = args[0]
out = {{}}
found, out['search'] = probe.syscall(keyctl, 10, -3, b'user\\0', b'arcmemo-test-key\\0', 0)
buffer = bytearray(256)
size, out['read'] = probe.syscall(keyctl, 11, args[1], buffer, 256)
out['data'] = bytes(buffer[: max(0, size)]).decode('latin-1')
return out
"""
    result = run(native, body, _seccomp.syscall_number("keyctl"), key)
    assert result.ok, result
    assert secret.decode() not in json.dumps(result.value)
    assert result.value["search"] == errno.EPERM and result.value["read"] == errno.EPERM


def test_the_launcher_gives_the_zygote_a_fresh_session_keyring(tmp_path: Path) -> None:
    # Without the seccomp filter: the keyring the zygote starts with is not the caller's.
    secret = b"keyring-secret-launcher"
    plant_key(secret)
    keyctl = _seccomp.syscall_number("keyctl")
    script = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"print(libc.syscall({keyctl}, 10, -3, b'user', b'arcmemo-test-key', 0))\n"
    )
    disk = tmp_path / "disk"
    disk.mkdir()
    command, fds = bwrap.launch([sys.executable, "-c", script], str(disk), 1 << 20)
    # The launcher passes bwrap's seccomp argument on; a plain python takes none, so drop it.
    config = json.loads(command[-1])
    config["argv"] = [sys.executable, "-c", script]
    command[-1] = json.dumps(config)
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=60, pass_fds=fds)
    finally:
        for fd in fds:
            os.close(fd)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "-1", out.stdout  # the key is not found
    # Started the ordinary way, the same process finds it.
    direct = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert int(direct.stdout.strip()) > 0, direct


# ----------------------------------------------------------------------------- memory


def test_memfd_and_shared_memory_hold_nothing_past_the_limit(native: Sandbox) -> None:
    numbers = syscall_numbers("memfd_create", "shmget")
    body = f"""
import os, {MODULE} as probe
out = {{}}
try:
    fd = os.memfd_create('hold')
    for _ in range(1600):
        os.write(fd, b'x' * (1 << 20))
    out['python'] = 'held'
except OSError as error:
    out['python'] = error.errno
out['memfd'] = probe.syscall(args[0]['memfd_create'], b'x\\0', 0)[1]
out['shmget'] = probe.syscall(args[0]['shmget'], 0, 1 << 30, 0o1600)[1]
return out
"""
    result = run(native, body, numbers, limits=SandboxLimits(timeout_s=10, memory_mb=256))
    assert result.ok, result
    assert result.value["memfd"] == errno.EPERM and result.value["shmget"] == errno.EPERM
    assert result.value["python"] != "held"


def test_memfd_is_refused_in_every_sandbox(any_box: Sandbox) -> None:
    result = run(any_box, "import os\nos.memfd_create('hold')\nreturn 'created'")
    assert not result.ok and result.error_kind in ("forbidden", "exception"), result


# ----------------------------------------------------------------------------- channel


def test_native_code_reaches_no_other_requests_channel(native: Sandbox) -> None:
    numbers = syscall_numbers("pidfd_open", "pidfd_getfd", "write")
    look = f"""
import os, {MODULE} as probe
return {{'proc': os.path.exists('/proc/1/fd'),
        'pidfd': probe.syscall(args[0]['pidfd_open'], 1, 0)[1]}}
"""
    seen = run(native, look, numbers)
    assert seen.ok and seen.value == {"proc": False, "pidfd": errno.EPERM}, seen
    forge = f"""
import json, struct, {MODULE} as probe
reply = {{'results': [{{'ok': True, 'value': [[9]]}}] * 2, 'retire': False}}
for guess in ('', 'x' * 32):
    reply['id'] = guess
    data = json.dumps(reply).encode()
    frame = struct.pack('>I', len(data)) + data
    for fd in range(1024):
        probe.syscall(args[0]['write'], fd, frame, len(frame))
return 'written'
"""
    forged = run(native, forge, numbers)
    # Its own channel carried frames without its request's id: its own result is crashed.
    assert not forged.ok and forged.error_kind == "crashed", forged
    # The next program (a fresh zygote: the abused one was retired) gets its own results.
    results = call(native, "def f(x):\n    return x + 1\n", "f", [[1], [2]])
    assert [r.value for r in results] == [2, 3], results


# ----------------------------------------------------------------------------- disk


def test_leftovers_a_program_locks_are_removed_before_the_next_program(any_box: Sandbox) -> None:
    lock = """
import os
os.mkdir('locked')
with open('locked/ballast', 'wb') as out:
    for _ in range(40):
        out.write(b'0' * (1 << 20))
os.chmod('locked', 0)
return sorted(os.listdir('.'))
"""
    limits = SandboxLimits(timeout_s=10, disk_mb=64, max_file_bytes=48_000_000)
    first = run(any_box, lock, limits=limits)
    assert first.ok and first.value == ["locked"], first
    scratch = """
import os
with open('scratch', 'wb') as out:
    for _ in range(40):
        out.write(b'1' * (1 << 20))
return sorted(os.listdir('.'))
"""
    second = run(any_box, scratch, limits=limits)
    assert second.ok and second.value == ["scratch"], second


# ----------------------------------------------------------------------------- decoding


def test_a_value_of_millions_of_objects_is_invalid_output(any_box: Sandbox) -> None:
    result = run(any_box, "return [{}] * 3_000_000", limits=SandboxLimits(timeout_s=10))
    assert not result.ok and result.error_kind == "invalid_output", result


def test_a_forged_frame_of_millions_of_objects_is_invalid_output(any_box: Sandbox) -> None:
    body = """
import json, os, struct
value = '[' + ','.join(['{}'] * 5_000_000) + ']'
data = ('{"kind": "result", "index": 0, "ok": true, "value": ' + value + '}').encode()
frame = struct.pack('>I', len(data)) + data
for fd in range(3, 32):
    try:
        os.write(fd, frame)
    except OSError:
        pass
os._exit(0)
"""
    result = run(any_box, body, limits=SandboxLimits(timeout_s=10))
    assert not result.ok and result.error_kind in ("invalid_output", "crashed"), result
    assert still_works_after(any_box)


def still_works_after(box: Sandbox) -> bool:
    return call(box, "def f():\n    return 42\n", "f", [[]])[0].value == 42


def test_program_values_within_bounds_still_pass(any_box: Sandbox) -> None:
    grid = [[(r * c) % 10 for c in range(30)] for r in range(30)]
    program = Program(source="def f(g):\n    return g\n", entry="f")
    results = any_box.run(program, [[grid]] * 4)
    assert all(r.ok and r.value == grid for r in results), results[0]


@pytest.mark.parametrize("kind", ["bwrap", "process"])
def test_programs_running_at_once_each_have_a_disk_of_their_own(kind: str) -> None:
    # Two zygotes at once: neither takes the other's folder for a leftover.
    from concurrent.futures import ThreadPoolExecutor

    box = make(kind, max_workers=2)
    body = "import os, time\nopen('mine', 'w').write('x')\ntime.sleep(0.2)\nreturn os.listdir()"
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda _: run(box, body), range(6)))
    finally:
        box.close()
    assert all(r.ok and r.value == ["mine"] for r in results), results
