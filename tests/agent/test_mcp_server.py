"""``arcmemo mcp`` driven by the mcp SDK's own client, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install '.[mcp]')")
from mcp import Client, StdioServerParameters  # noqa: E402

from arcmemo.memory.schema import Concept, Memory  # noqa: E402
from arcmemo.memory.store import load_memory, save_memory  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = {
    "Rewrite the solution as short pseudocode": (
        "<summary>pair the factors</summary>\n<pseudocode>\nlist divisor pairs\n</pseudocode>"
    ),
    "Abstract the reusable concepts": (
        "```yaml\n- name: pair divisors\n  kind: routine\n  routine_subtype: technique\n"
        "  description: list the divisors of n in pairs d, n/d\n  cues: [count divisors]\n```"
    ),
}


def seeded(path: Path) -> None:
    memory = Memory(domain="text")
    memory.add(Concept(name="parity argument", kind="routine", description="odd or even"))
    save_memory(memory, path)


def server_args(tmp_path: Path) -> list[str]:
    script = tmp_path / "abstract.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return ["-m", "arcmemo", "mcp", "--memory", str(tmp_path / "memory.json"),
            "--model-role", f"abstract=scripted:{script}"]  # fmt: skip


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def stdio(tmp_path: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=server_args(tmp_path), env=env())


def data(result: Any) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


async def walk_through(client: Client) -> None:
    tools = {tool.name for tool in (await client.list_tools()).tools}
    assert {"select_concepts", "record_outcome", "record_solution", "get_concept"} <= tools
    picked = data(await client.call_tool("select_concepts", {"problem": "Is 7 odd?"}))
    assert picked["concepts"] == ["parity argument"] and "parity argument" in picked["block"]
    written = data(
        await client.call_tool(
            "record_solution",
            {"problem": "How many divisors has 12?", "solution": "Answer: 6", "task_id": "d12"},
        )
    )
    assert written["written"] == ["pair-divisor"] and not written["failures"]
    concept = data(await client.call_tool("get_concept", {"name": "pair divisors"}))
    assert concept["description"].startswith("list the divisors")
    assert concept["provenance"]["sources"] == ["d12"]
    resource = await client.read_resource("memory://concepts/pair divisors")
    assert "list the divisors" in resource.contents[0].text  # type: ignore[union-attr]
    # A bad argument is a tool error, and the server keeps serving.
    bad = await client.call_tool("record_outcome", {"concepts": ["no such idea"], "solved": 1})
    assert bad.is_error
    bad = await client.call_tool("record_outcome", {"concepts": ["no such idea"], "solved": True})
    assert bad.is_error and "no such idea" in bad.content[0].text  # type: ignore[union-attr]
    assert (await client.call_tool("select_concepts", {})).is_error
    stats = data(await client.call_tool("memory_stats", {}))
    assert stats["concepts"] == 2 and stats["outcomes"] == 0


def test_stdio_tools_select_learn_and_read_back(tmp_path: Path) -> None:
    seeded(tmp_path / "memory.json")

    async def main() -> None:
        async with Client(stdio(tmp_path)) as client:
            await walk_through(client)

    asyncio.run(main())
    history = load_memory(tmp_path / "memory.json").history
    (added,) = [e for e in history if e.op == "add" and e.target == "pair-divisor"]
    assert added.task_id == "d12" and added.actor.endswith("abstract.json")
    assert "(through mcp client " in (added.why or "")
    assert "key" not in json.dumps([e.model_dump(mode="json") for e in history]).lower()


def test_two_clients_record_forty_outcomes(tmp_path: Path) -> None:
    seeded(tmp_path / "memory.json")

    async def one(agent: str) -> None:
        async with Client(stdio(tmp_path)) as client:
            for n in range(20):
                arguments = {"concepts": ["parity argument"], "solved": n % 2 == 0,
                             "task_id": f"{agent}-{n}", "outcome_id": f"{agent}-{n}"}  # fmt: skip
                data(await client.call_tool("record_outcome", arguments))
            # The same outcome again counts once.
            again = await client.call_tool("record_outcome", arguments)
            assert data(again)["counted"] is False

    async def main() -> None:
        await asyncio.gather(one("a"), one("b"))

    asyncio.run(main())
    memory = load_memory(tmp_path / "memory.json")
    (concept,) = memory.concepts
    assert concept.stats.selected == 40 and concept.stats.selected_solved == 20
    assert len(concept.stats.helpful) == 20 and len(concept.stats.harmful) == 20
    assert sum(e.op == "stats" for e in memory.history) == 40


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    seeded(tmp_path / "memory.json")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *server_args(tmp_path), "--transport", "http", "--port", str(port)],
        env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.2)
    try:
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_http_tools_and_a_killed_server_leaves_a_loadable_memory(
    tmp_path: Path, http_server: tuple[str, subprocess.Popen[bytes]]
) -> None:
    url, process = http_server

    async def main() -> None:
        async with Client(url) as client:
            await walk_through(client)
            for n in range(10):
                arguments = {"concepts": ["pair divisors"], "solved": True, "outcome_id": str(n)}
                data(await client.call_tool("record_outcome", arguments))

    asyncio.run(main())
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    memory = load_memory(tmp_path / "memory.json")
    assert memory.find("pair divisors").stats.selected == 10  # type: ignore[union-attr]
