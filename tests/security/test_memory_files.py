"""A memory file someone else wrote cannot act on the terminal, stall a load or be saved
with text that would (arcmemo.memory.untrusted)."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from arcmemo.memory.schema import Memory
from arcmemo.memory.store import MemoryFileError, MemorySaveError

REPO = Path(__file__).resolve().parents[2]
# Set the terminal's title, clear the screen, an 8-bit CSI, and a right-to-left override.
HOSTILE = "see \x1b]0;PWNED\x07\x1b[2J\x9b31m and \u202eexe.txt"
RAW = [b"\x1b", b"\x07", "\x9b".encode(), "\u202e".encode()]


def _arcmemo(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "arcmemo", *args], capture_output=True, cwd=cwd, env=env, timeout=120
    )


def _hostile_memory(tmp_path: Path) -> Path:
    path = tmp_path / "shared.json"
    made = _arcmemo("memory", "init", "--domain", "aime", "--out", str(path), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    data = json.loads(path.read_text())
    concept = data["concepts"][0]
    concept["description"] = HOSTILE
    concept["cues"] = [HOSTILE]
    path.write_text(json.dumps(data, ensure_ascii=False))
    return path


@pytest.mark.parametrize(
    "args",
    [[], ["--format", "json"], ["--format", "yaml"], ["--view", "solve"]],
    ids=["text", "json", "yaml", "view"],
)
def test_memory_show_writes_no_control_sequence_or_override(
    tmp_path: Path, args: list[str]
) -> None:
    path = _hostile_memory(tmp_path)
    if "--view" in args:
        args = [*args, "--concept", json.loads(path.read_text())["concepts"][0]["name"]]
    shown = _arcmemo("memory", "show", str(path), *args, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    for raw in RAW:
        assert raw not in shown.stdout + shown.stderr, (raw, shown.stdout[-400:])
    assert b"PWNED" in shown.stdout  # shown, escaped: the reader sees what the file holds
    assert b"\\u202e" in shown.stdout or b"\\\\u202e" in shown.stdout


def test_memory_stats_and_diff_write_no_control_sequence(tmp_path: Path) -> None:
    path = _hostile_memory(tmp_path)
    clean = tmp_path / "clean.json"
    _arcmemo("memory", "init", "--domain", "aime", "--out", str(clean), cwd=tmp_path)
    for args in (["stats", str(path)], ["diff", str(clean), str(path)]):
        shown = _arcmemo("memory", *args, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        for raw in RAW:
            assert raw not in shown.stdout + shown.stderr, (args, shown.stdout[-400:])


def test_memory_validate_names_each_field_and_character(tmp_path: Path) -> None:
    path = _hostile_memory(tmp_path)
    checked = _arcmemo("memory", "validate", str(path), cwd=tmp_path)
    assert checked.returncode == 1
    report = checked.stderr.decode()
    assert "$.concepts[0].description" in report and "$.concepts[0].cues[0]" in report
    assert "U+001B" in report and "U+202E" in report and "U+009B" in report
    for raw in RAW:
        assert raw not in checked.stdout + checked.stderr


def test_a_memory_with_unsafe_text_is_not_saved(tmp_path: Path) -> None:
    path = _hostile_memory(tmp_path)
    before = path.read_bytes()
    memory = Memory.load(path)
    with pytest.raises(MemorySaveError, match=r"concepts\[0\]\.description"):
        memory.save(tmp_path / "copy.json")
    edited = _arcmemo("memory", "prune", str(path), "--min-evidence", "1", cwd=tmp_path)
    assert edited.returncode != 0 and b"refused on save" in edited.stderr
    assert path.read_bytes() == before


def test_html_view_escapes_markup_and_shows_overrides(tmp_path: Path) -> None:
    path = _hostile_memory(tmp_path)
    data = json.loads(path.read_text())
    data["concepts"][0]["description"] = "<script>alert(1)</script>\u202e"
    path.write_text(json.dumps(data))
    page = tmp_path / "memory.html"
    made = _arcmemo("memory", "show", str(path), "--html", str(page), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    # Entries travel deflated and base64-encoded (arcmemo.analysis.report.pack).
    packed = re.findall(r'class="mem-data"[^>]*>([^<]*)</script>', page.read_text())
    html = page.read_text() + "".join(
        zlib.decompress(base64.b64decode(blob)).decode() for blob in packed
    )
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    assert "\u202e" not in html and "\x1b" not in html


def test_field_and_depth_limits_give_one_line_errors(tmp_path: Path) -> None:
    from arcmemo.memory.untrusted import MAX_DEPTH, MAX_FIELD_CHARS

    path = _hostile_memory(tmp_path)
    data = json.loads(path.read_text())
    data["concepts"][0]["description"] = "x" * (MAX_FIELD_CHARS + 1)
    path.write_text(json.dumps(data))
    with pytest.raises(MemoryFileError, match=r"concepts\[0\]\.description: \d+ characters"):
        Memory.load(path)
    deep = tmp_path / "deep.json"
    deep.write_text('{"schema_version": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    checked = _arcmemo("memory", "validate", str(deep), cwd=tmp_path)
    assert checked.returncode == 1 and b"Traceback" not in checked.stderr
    assert b"nested" in checked.stderr
    shallow = tmp_path / "shallow.json"
    shallow.write_text(
        '{"schema_version": 1, "x": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}"
    )
    with pytest.raises(MemoryFileError, match="nested more than"):
        Memory.load(shallow)
