"""``arcmemo run jsonl`` with the rest of a run: the report, resume after a killed run (no
answered call paid twice), ``--shard`` and ``arcmemo merge``, ``--update online`` with a
memory, and Parquet input. The scripted model answers ``What is K plus one hundred?``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arcmemo.analysis.report.pack import unpack

ROOT = Path(__file__).resolve().parents[3]
PACKED = '<script type="application/x-deflate-base64" class="task-data">'
# Right unless K is divisible by 3; kills its own process when asked KILL_AT (a run cut off
# mid-way, as by a crash or a kill -9), and logs every answer it gives to CALL_LOG.
MODEL = """
import os, re, signal
async def respond(messages):
    text = "\\n".join(m.content for m in messages)
    if "<cheatsheet></cheatsheet>" in text:
        return "<cheatsheet>Add one hundred to the number.</cheatsheet>"
    k = int(re.search(r"What is (\\d+) plus one hundred", text).group(1))
    if os.environ.get("KILL_AT") == str(k):
        os.kill(os.getpid(), signal.SIGKILL)
    with open(os.environ["CALL_LOG"], "a") as log:
        log.write(f"{k} {'sheet' if 'Add one hundred' in text else 'plain'}\\n")
    return f"Answer: {k + 100 + (k % 3 == 0)}"
"""


def write_problems(path: Path, count: int) -> Path:
    records = [
        {"id": f"sum-{k}", "problem": f"What is {k} plus one hundred?", "answer": str(k + 100)}
        for k in range(1, count + 1)
    ]
    if path.suffix == ".parquet":
        import pyarrow as arrow
        import pyarrow.parquet as parquet

        parquet.write_table(arrow.Table.from_pylist(records), path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


class Runs:
    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path
        self.model = tmp_path / "model.py"
        self.model.write_text(MODEL, encoding="utf-8")
        self.log = tmp_path / "calls.log"
        self.data = write_problems(tmp_path / "p.jsonl", 5)

    def arcmemo(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "arcmemo", *args],
            cwd=self.dir, capture_output=True, text=True, timeout=180,
            env={**os.environ, "PYTHONPATH": str(ROOT), "CALL_LOG": str(self.log), **env},
        )  # fmt: skip

    def run_args(self, out: str, *extra: str, data: Path | None = None) -> list[str]:
        return [
            *("run", "jsonl", "--data", str(data or self.data)),
            *("--benchmark-arg", "checker=numeric", "--model", f"scripted:{self.model}"),
            *("--concurrency", "1", "--attempts", "1", "--out", out, *extra),
        ]

    def run(self, out: str, *extra: str, data: Path | None = None) -> dict[str, object]:
        done = self.arcmemo(*self.run_args(out, *extra, data=data))
        assert done.returncode == 0, done.stderr
        return dict(json.loads((self.dir / out / "summary.json").read_text()))

    def calls(self) -> list[str]:
        return self.log.read_text().split("\n")[:-1] if self.log.exists() else []


@pytest.fixture
def runs(tmp_path: Path) -> Runs:
    return Runs(tmp_path)


@pytest.mark.slow
def test_the_report_shows_the_problems_and_their_scores(runs: Runs) -> None:
    summary = runs.run("run")
    assert summary["pass@1"] == pytest.approx(4 / 5)
    done = runs.arcmemo("report", "run")
    assert done.returncode == 0, done.stderr
    html = (runs.dir / "run" / "report.html").read_text(encoding="utf-8")
    # A task's details are packed until it is opened in the browser.
    details = "".join(unpack(data) for data in re.findall(f"{PACKED}([^<]*)</script>", html))
    assert "What is 3 plus one hundred?" in details and "sum-5" in html
    assert "pass@1" in html


@pytest.mark.slow
def test_a_killed_run_resumes_without_paying_an_answered_call_twice(runs: Runs) -> None:
    killed = runs.arcmemo(*runs.run_args("run"), KILL_AT="3")
    assert killed.returncode != 0
    before = runs.calls()
    assert before == ["1 plain", "2 plain"]
    summary = runs.run("run")
    assert summary["n_tasks"] == 5 and summary["pass@1"] == pytest.approx(4 / 5)
    assert runs.calls()[: len(before)] == before
    assert sorted(runs.calls()[len(before) :]) == ["3 plain", "4 plain", "5 plain"]


@pytest.mark.slow
def test_shards_merge_into_the_whole_run(runs: Runs) -> None:
    for index in range(2):
        runs.run(f"s{index}", "--shard", f"{index}/2")
    assert sorted(runs.calls()) == [f"{k} plain" for k in range(1, 6)]
    done = runs.arcmemo("merge", "s0", "s1", "--out", "all")
    assert done.returncode == 0, done.stderr
    merged = json.loads((runs.dir / "all" / "summary.json").read_text())
    assert merged["complete"] is True
    assert merged["n_tasks"] == 5 and merged["pass@1"] == pytest.approx(4 / 5)


def test_an_online_run_grows_the_memory_the_next_problems_see(runs: Runs) -> None:
    memory = runs.dir / "memory.json"
    memory.write_text('{"schema_version": 1, "domain": "text"}\n', encoding="utf-8")
    summary = runs.run(
        "run", "--memory", str(memory), "--memory-format", "cheatsheet", "--select", "all",
        "--update", "online", "--update-every", "1", "--aux-model", f"scripted:{runs.model}",
    )  # fmt: skip
    assert summary["pass@1"] == pytest.approx(4 / 5)
    sheet = json.loads(memory.read_text())["cheatsheet"]
    assert sheet == "Add one hundred to the number."
    # Learned from sum-1 (accepted by the checker); every later problem is shown the sheet.
    assert runs.calls() == ["1 plain"] + [f"{k} sheet" for k in range(2, 6)]


def test_parquet_problems_run_as_jsonl_ones_do(runs: Runs) -> None:
    data = write_problems(runs.dir / "p.parquet", 5)
    summary = runs.run("run", data=data)
    assert summary["n_tasks"] == 5 and summary["pass@1"] == pytest.approx(4 / 5)
