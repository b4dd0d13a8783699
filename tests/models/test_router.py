"""The scale-out recipes of docs/scale.md, run for real: ``arcmemo run`` in front of two
llama.cpp servers (SmolLM2), one of them killed while it decodes a request, through
LiteLLM's proxy and through arcmemo's own ``--base-url`` balancing.

Both hide the dead replica: the request it was answering goes again, at once, to the other
one, so arcmemo sees every request answered once (one line each in ``calls.jsonl``, none
an error) and the servers together answer exactly as many requests as the run has tasks.
Skipped, with the reason, where llama-cpp-python's server, the SmolLM2 model or (for the
router) the ``litellm`` command is missing (``pip install 'litellm[proxy]'``, or
``ARCMEMO_LITELLM=PATH``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from arcmemo.models.local_server import (
    LlamaServer,
    LocalOptions,
    free_port,
    gguf_path,
)
from tests.support.local_model import real_model_missing

PROBLEMS = 12
KEY = "sk-arcmemo-router-test"
POST = "POST /v1/chat/completions HTTP/1.1"
# The recipe of docs/scale.md, section (a): two replicas of one model name, retried on the
# other when one fails, the failed one put aside.
ROUTER_CONFIG = """\
model_list:
  - model_name: smollm2
    litellm_params: {{model: openai/smollm2, api_base: "{first}", api_key: none}}
  - model_name: smollm2
    litellm_params: {{model: openai/smollm2, api_base: "{second}", api_key: none}}
router_settings:
  routing_strategy: least-busy
  num_retries: 3
  allowed_fails: 0
  cooldown_time: 600
litellm_settings:
  request_timeout: 600
general_settings:
  master_key: {key}
"""


def _skip_without_llama() -> None:
    missing = real_model_missing()
    if missing is not None:
        print(f"scale-out test skipped: {missing}")
        pytest.skip(missing)


def _litellm() -> str | None:
    return os.environ.get("ARCMEMO_LITELLM") or shutil.which("litellm")


def _ready(url: str) -> bool:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {KEY}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _posts(server: LlamaServer) -> int:
    assert server.log_path is not None
    return server.log_path.read_text(errors="replace").count(POST)


def _decoding(server: LlamaServer) -> bool:
    """Whether the server is decoding a request it has not answered yet."""
    assert server.log_path is not None
    log = server.log_path.read_text(errors="replace")
    return POST in log and "Llama.generate:" in log[log.rindex(POST) :]


def _lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclass
class KilledRun:
    """What a run with its first replica killed left, and what each replica answered."""

    out: Path
    answered_at_kill: int
    first_answered: int
    second_answered: int

    def calls(self) -> list[dict]:
        return _lines(self.out / "calls.jsonl")

    def check_complete(self) -> None:
        """Every task answered, once, and by exactly one request that reached a server."""
        assert self.answered_at_kill < PROBLEMS  # killed mid-run
        # The failure was hidden from the run: one line per request, none an error.
        records = self.calls()
        assert all(r["error"] is None and r["attempts"] == 1 for r in records)
        assert sorted(r["task_id"] for r in records) == sorted(
            f"sum-{i}" for i in range(1, PROBLEMS + 1)
        )
        # The servers answered exactly the run's requests, the one cut off by the kill
        # included (by the second replica): none lost, none twice.
        assert self.first_answered + self.second_answered == PROBLEMS
        results = _lines(self.out / "results.jsonl")
        assert len(results) == PROBLEMS and all(not r.get("error") for r in results)
        summary = json.loads((self.out / "summary.json").read_text())
        assert summary["complete"] and summary["n_errors"] == 0
        assert summary["n_tasks"] == PROBLEMS


def _problems(tmp_path: Path) -> Path:
    problems = tmp_path / "problems.jsonl"
    problems.write_text(
        "".join(
            json.dumps({"id": f"sum-{i}", "year": 2099, "contest": "I", "number": i,
                        "problem": f"Find ${i} + {i + 1}$.", "answer": 2 * i + 1}) + "\n"
            for i in range(1, PROBLEMS + 1)
        )
    )  # fmt: skip
    return problems


@contextmanager
def _replicas(tmp_path: Path) -> Iterator[list[LlamaServer]]:
    gguf = gguf_path("smollm2")
    servers = [
        LlamaServer(gguf, LocalOptions(server_log=tmp_path / f"llama-{n}.log"), n_ctx=2048)
        for n in (1, 2)
    ]
    try:
        for server in servers:
            asyncio.run(server.start())
        yield servers
    finally:
        for server in servers:
            server.stop(keep_log=True)


@contextmanager
def _litellm_proxy(tmp_path: Path, servers: list[LlamaServer]) -> Iterator[str]:
    """LiteLLM's proxy in front of ``servers``; yields its base URL."""
    port = free_port()
    config = tmp_path / "litellm.yaml"
    config.write_text(
        ROUTER_CONFIG.format(first=servers[0].base_url, second=servers[1].base_url, key=KEY)
    )
    router_log = tmp_path / "litellm.log"
    with router_log.open("wb") as log:
        router = subprocess.Popen(
            [
                _litellm() or "litellm",
                "--config",
                str(config),
                *("--host", "127.0.0.1"),
                *("--port", str(port)),
            ],
            # The packaged price map, not one fetched from the network.
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 180
        while not _ready(f"http://127.0.0.1:{port}/v1/models"):
            assert router.poll() is None, router_log.read_text()[-3000:]
            assert time.monotonic() < deadline, router_log.read_text()[-3000:]
            time.sleep(1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        if router.poll() is None:
            os.killpg(router.pid, signal.SIGTERM)  # its own session: the proxy and any worker
            router.wait(30)


def _run_killing_the_first(tmp_path: Path, servers: list[LlamaServer], base_url: str) -> KilledRun:
    """``arcmemo run`` on the problems through ``base_url``; the first replica is killed
    while it decodes a request it has not answered: llama-cpp-python logs
    "Llama.generate" as a generation starts (a prompt sharing a prefix with the last, as
    every solve prompt does) and the access line once it has answered."""
    out = tmp_path / "run"
    env = {**os.environ, "ROUTER_KEY": KEY, "ARCMEMO_CACHE_DIR": str(tmp_path / "cache")}
    command = [
        *(sys.executable, "-c", "from arcmemo.cli.main import cli; cli()", "run", "aime"),
        *("--data", str(_problems(tmp_path)), "--attempts", "1", "--max-tokens", "48"),
        *("--model", "openai:smollm2", "--base-url", base_url),
        *("--model-arg", "api_key_env=ROUTER_KEY", "--concurrency", "4"),
        *("--sampling-seed", "7", "--out", str(out)),
    ]
    run_log = tmp_path / "run.log"
    with run_log.open("wb") as log:
        run = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        calls = out / "calls.jsonl"
        deadline = time.monotonic() + 600
        while len(_lines(calls)) < 2 or not _decoding(servers[0]):
            assert run.poll() is None, run_log.read_text()[-3000:]
            assert time.monotonic() < deadline
            time.sleep(0.1)
        answered_at_kill = len(_lines(calls))
        killed = servers[0].process
        assert killed is not None
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert run.wait(timeout=600) == 0, run_log.read_text()[-3000:]
    finally:
        if run.poll() is None:
            run.terminate()
            run.wait(30)
    result = KilledRun(out, answered_at_kill, _posts(servers[0]), _posts(servers[1]))
    print(
        f"{base_url}: {PROBLEMS} requests; replica 1 killed while decoding one, after "
        f"{answered_at_kill} calls were logged, having answered {result.first_answered}; "
        f"replica 2 answered {result.second_answered}; calls.jsonl {len(result.calls())} "
        f"lines, {sum(r['error'] is not None for r in result.calls())} of them errors"
    )
    return result


@pytest.mark.slow
def test_a_run_through_litellm_survives_a_replica_killed_mid_run(tmp_path: Path) -> None:
    _skip_without_llama()
    if _litellm() is None:
        missing = "no litellm command (pip install 'litellm[proxy]' or set ARCMEMO_LITELLM)"
        print(f"router test skipped: {missing}")
        pytest.skip(missing)
    with _replicas(tmp_path) as servers, _litellm_proxy(tmp_path, servers) as url:
        run = _run_killing_the_first(tmp_path, servers, url)
    run.check_complete()


@pytest.mark.slow
def test_arcmemos_own_balancing_survives_a_replica_killed_mid_run(tmp_path: Path) -> None:
    _skip_without_llama()
    with _replicas(tmp_path) as servers:
        urls = ",".join(server.base_url for server in servers)
        run = _run_killing_the_first(tmp_path, servers, urls)
    run.check_complete()
