"""``arcmemo data fetch aime`` against a server on 127.0.0.1 speaking the Hub's file
protocol (HF_ENDPOINT), serving Parquet files in the layout of the default datasets, made
from this repository's own problems (tests/fixtures/aime/aime_2099.jsonl)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import pytest

from arcmemo.benchmarks.aime.fetch import FetchError, convert_rows, parse_source

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("huggingface_hub")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "aime"
COMMIT = "c0ffee" + "0" * 34


def own_problems() -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / "aime_2099.jsonl").read_text().splitlines()]


def h4_layout(rows: list[dict], year: int) -> list[dict]:
    """HuggingFaceH4/aime_2024's columns: id, problem, solution, answer (a string), url, year."""
    return [
        {
            "id": 60 + index,
            "problem": row["problem"],
            "solution": "Worked out by hand.",
            "answer": str(row["answer"]),
            "url": "https://example.org/wiki/index.php/"
            f"{year}_AIME_{row['contest']}_Problems/Problem_{row['number']}",
            "year": str(year),
        }
        for index, row in enumerate(rows)
    ]


def matharena_layout(rows: list[dict]) -> list[dict]:
    """MathArena/aime_2025's columns: problem_idx (1-30), problem, answer (a string)."""
    return [
        {"problem_idx": index, "problem": row["problem"], "answer": f"{row['answer']}"}
        for index, row in enumerate(rows, start=1)
    ]


class HubHandler(BaseHTTPRequestHandler):
    """The Hub's dataset info and resolve endpoints for the datasets in ``server.repos``."""

    server: ThreadingHTTPServer

    def log_message(self, *args: object) -> None:
        return

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        path = unquote(self.path.split("?")[0])
        repos: dict[str, dict[str, bytes]] = self.server.repos  # type: ignore[attr-defined]
        self.server.seen.append(path)  # type: ignore[attr-defined]
        for repo, files in repos.items():
            if path.startswith(f"/api/datasets/{repo}/revision/"):
                info = {
                    "id": repo,
                    "sha": COMMIT,
                    "siblings": [{"rfilename": name} for name in ["README.md", *files]],
                }
                self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"})
                return
            prefix = f"/datasets/{repo}/resolve/"
            if path.startswith(prefix):
                revision, _, name = path[len(prefix) :].partition("/")
                if name in files and revision in (COMMIT, "main"):
                    body = files[name]
                    etag = '"' + hashlib.sha256(body).hexdigest() + '"'
                    self._send(200, body, {"X-Repo-Commit": COMMIT, "ETag": etag})
                    return
        self._send(404, b'{"error": "not found"}', {"X-Error-Code": "EntryNotFound"})


def parquet_bytes(rows: list[dict], tmp: Path) -> bytes:
    path = tmp / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path.read_bytes()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[SimpleNamespace]:
    rows = own_problems()
    server = ThreadingHTTPServer(("127.0.0.1", 0), HubHandler)
    server.repos = {  # type: ignore[attr-defined]
        "HuggingFaceH4/aime_2024": {
            "data/train-00000-of-00001.parquet": parquet_bytes(h4_layout(rows, 2024), tmp_path)
        },
        "MathArena/aime_2025": {
            "data/train-00000-of-00001.parquet": parquet_bytes(matharena_layout(rows), tmp_path)
        },
    }
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield SimpleNamespace(
            url=f"http://127.0.0.1:{server.server_port}", server=server, rows=rows
        )
    finally:
        server.shutdown()
        server.server_close()


def arcmemo(tmp_path: Path, hub_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HF_ENDPOINT": hub_url,
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "XDG_DATA_HOME": str(tmp_path / "user-data"),
    }
    env.pop("ARCMEMO_DATA_DIR", None)
    env.pop("HF_HUB_OFFLINE", None)
    return subprocess.run(
        [sys.executable, "-m", "arcmemo", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )


@pytest.mark.slow
def test_fetched_years_are_read_by_run_without_a_data_dir(
    tmp_path: Path, hub: SimpleNamespace
) -> None:
    done = arcmemo(tmp_path, hub.url, "data", "fetch", "aime", "--split", "2024", "--split", "2025")
    assert done.returncode == 0, done.stderr[-2000:]
    folder = tmp_path / "user-data" / "arcmemo" / "aime"
    for year, repo in (("2024", "HuggingFaceH4/aime_2024"), ("2025", "MathArena/aime_2025")):
        written = folder / f"aime_{year}.jsonl"
        lines = [json.loads(line) for line in written.read_text().splitlines()]
        assert [r["answer"] for r in lines] == [r["answer"] for r in hub.rows]
        assert lines[16]["id"] == f"{year}-II-2" and lines[16]["problem"] == hub.rows[16]["problem"]
        record = json.loads((folder / f"aime_{year}.source.json").read_text())
        assert record["repo"] == repo and record["revision"] == COMMIT
        assert record["requested_revision"] == "main" and record["problems"] == 30
        assert record["sha256"] == hashlib.sha256(written.read_bytes()).hexdigest()
        served = hub.server.repos[repo]["data/train-00000-of-00001.parquet"]
        assert record["files"] == [
            {
                "name": "data/train-00000-of-00001.parquet",
                "sha256": hashlib.sha256(served).hexdigest(),
            }
        ]
        assert f"{repo}@{COMMIT}" in done.stdout
    assert any(f"/resolve/{COMMIT}/" in path for path in hub.server.seen)  # read at the commit
    script = tmp_path / "answers.yaml"
    script.write_text('"*": "The answer is \\\\boxed{48}."\n')
    run = arcmemo(
        tmp_path, hub.url,
        *("run", "aime", "--split", "2025", "--limit", "3", "--attempts", "1"),
        *("--model", f"scripted:{script}", "--out", str(tmp_path / "run")),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_tasks"] == 3 and summary["complete"]
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert str(folder / "aime_2025.jsonl") in json.dumps(config["dataset"])


@pytest.mark.slow
def test_an_unknown_dataset_or_revision_is_a_one_line_error(
    tmp_path: Path, hub: SimpleNamespace
) -> None:
    done = arcmemo(
        tmp_path, hub.url, "data", "fetch", "aime", "--split", "2025", "--source", "nobody/none"
    )
    assert done.returncode == 1
    assert done.stderr.startswith("Error: nobody/none@main") and done.stderr.count("\n") == 1
    assert not (tmp_path / "user-data" / "arcmemo" / "aime" / "aime_2025.jsonl").exists()


def test_sources_and_rows() -> None:
    assert parse_source("a/b") == ("a/b", "main")
    assert parse_source("a/b@v1.0") == ("a/b", "v1.0")
    for bad in ("nobody", "a/b@", "../x"):
        with pytest.raises(FetchError, match="bad --source"):
            parse_source(bad)
    rows = convert_rows(matharena_layout(own_problems()), "2025")
    assert (rows[0]["id"], rows[15]["id"], rows[29]["id"]) == (
        "2025-I-1",
        "2025-II-1",
        "2025-II-15",
    )
    few = convert_rows([{"question": "Find 1+1.", "answer": " 2 "}], "x")
    assert few == [{"id": "x-1", "problem": "Find 1+1.", "answer": "2"}]


def test_without_a_data_dir_run_names_the_fetch_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from arcmemo.benchmarks.aime.data import AimeDataError, split_path

    monkeypatch.delenv("ARCMEMO_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    with pytest.raises(
        AimeDataError, match=r"arcmemo data fetch aime --split 2025.*ARCMEMO_DATA_DIR"
    ):
        split_path("2025")
