"""How close does ModelClient get to ideal concurrency against a server with fixed latency?

Starts the test suite's fake LLM server on 127.0.0.1 with a fixed artificial latency,
sends CALLS distinct requests through ``ModelClient`` (real SDK client, no response
cache) at CONCURRENCY, and prints the wall time and its ratio to the ideal
``calls / concurrency x latency``. A ratio near 1.0 means the client adds no
serialization of its own. Also reports the peak number of requests the server saw in
flight, and the per-call overhead of a cache hit. The server runs in a separate
process, so its request handling does not compete with the client for the GIL. One
warm-up call precedes the timed ones (the SDKs load parts of themselves on first use);
its time is reported separately.

    python experiments/bench_concurrency.py [--calls 160] [--concurrency 16] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from multiprocessing.synchronize import Event as EventType
from pathlib import Path

from arcmemo.models import (
    Message,
    ModelClient,
    ModelConfig,
    ResponseCache,
    ScriptedProvider,
    create_provider,
)

_FAKE_SERVER = Path(__file__).resolve().parents[1] / "tests" / "support" / "fake_llm_server.py"


def _load_fake_server():  # -> module
    spec = importlib.util.spec_from_file_location("arcmemo_fake_server", _FAKE_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


async def _run_calls(client: ModelClient, calls: int) -> float:
    started = time.perf_counter()
    await asyncio.gather(
        *(
            client.generate([Message(role="user", content=f"request {i}")], stage="bench")
            for i in range(calls)
        )
    )
    return time.perf_counter() - started


async def _warm_then_run(client: ModelClient, calls: int) -> tuple[float, float]:
    started = time.perf_counter()
    await client.generate([Message(role="user", content="warm-up")], stage="warmup")
    first = time.perf_counter() - started
    wall = await _run_calls(client, calls)
    await client.aclose()
    return wall, first


def _serve(latency: float, urls: multiprocessing.Queue, stop: EventType) -> None:
    # The server runs in its own process so it does not share the client's GIL.
    fake_server = _load_fake_server()
    with fake_server.FakeLLMServer(latency_s=latency) as server:
        urls.put((server.openai_base_url, server.url))
        stop.wait()
        urls.put(server.state.max_in_flight)


def bench_provider(spec: str, calls: int, concurrency: int, latency: float) -> dict[str, float]:
    """Wall time of ``calls`` requests to the fake server through ``spec``'s SDK."""
    context = multiprocessing.get_context("spawn")
    urls, stop = context.Queue(), context.Event()
    server = context.Process(target=_serve, args=(latency, urls, stop), daemon=True)
    server.start()
    try:
        openai_url, anthropic_url = urls.get(timeout=60)
        base_url = openai_url if spec.startswith("openai:") else anthropic_url
        config = ModelConfig(concurrency=concurrency, cache=False, cache_write=False)
        client = ModelClient(create_provider(spec, base_url=base_url), config=config)
        wall, first = asyncio.run(_warm_then_run(client, calls))
        stop.set()
        peak = urls.get(timeout=60)
    finally:
        stop.set()
        server.join(60)
    ideal = calls / concurrency * latency
    return {
        "wall_s": wall,
        "ideal_s": ideal,
        "ratio": wall / ideal,
        "peak_in_flight": peak,
        "first_call_s": first,
    }


def bench_cache_hits(calls: int) -> float:
    """Mean seconds per fully cached generate() call (SQLite lookup + accounting)."""
    with tempfile.TemporaryDirectory() as directory:
        provider = ScriptedProvider.from_script(lambda messages: "answer")
        client = ModelClient(provider, cache=ResponseCache(Path(directory)))
        asyncio.run(_run_calls(client, calls))  # fill
        timings = [asyncio.run(_run_calls(client, calls)) / calls for _ in range(3)]
        asyncio.run(client.aclose())
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=160)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.2, help="server latency, seconds")
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "bench-dummy-key")
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench-dummy-key")
    print(
        f"{arguments.calls} calls, concurrency {arguments.concurrency}, "
        f"server latency {arguments.latency:g} s, "
        f"ideal {arguments.calls / arguments.concurrency * arguments.latency:.3f} s"
    )
    for spec in ("openai:bench-model", "anthropic:bench-model"):
        runs = [
            bench_provider(spec, arguments.calls, arguments.concurrency, arguments.latency)
            for _ in range(arguments.repeats)
        ]
        ratios = [run["ratio"] for run in runs]
        walls = ", ".join(f"{run['wall_s']:.3f}" for run in runs)
        print(
            f"{spec:24s} wall [{walls}] s  ratio median {statistics.median(ratios):.3f} "
            f"(min {min(ratios):.3f}, max {max(ratios):.3f})  "
            f"peak in flight {max(run['peak_in_flight'] for run in runs):.0f}  "
            f"first call {statistics.median(run['first_call_s'] for run in runs):.3f} s"
        )
    per_hit = bench_cache_hits(1000)
    print(
        f"cache hit overhead: {per_hit * 1e6:.0f} us per generate() call (1000 calls, median of 3)"
    )


if __name__ == "__main__":
    main()
