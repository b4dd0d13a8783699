"""Memory text that leaves arcmemo for a program or a terminal other than the memory commands
(the agent facade, the MCP server, ``arcmemo demo``'s story) shows control sequences and
bidirectional overrides escaped, never raw."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from arcmemo.agent.memory import open_memory
from arcmemo.cli.demo.story import story
from arcmemo.core.records import Selection, TaskResult
from arcmemo.memory.schema import Concept, Memory

# Set the terminal's title (OSC 0 ... BEL) and a right-to-left override.
HOSTILE = "pair \x1b]0;X\x07 then \u202eexe.txt"
NAME = "hostile \u202eeman"
RAW = ["\x1b", "\x07", "\u202e"]


def raw_in(text: str) -> list[str]:
    return [char for char in RAW if char in text]


def hostile_memory(path: Path) -> Path:
    """A memory file someone else wrote: loads (so it can be looked at), never saved by us."""
    memory = Memory(domain="text")
    memory.add(Concept(name=NAME, kind="routine", description="odd or even"))
    data = json.loads(memory.model_dump_json())
    data["concepts"][0]["description"] = HOSTILE
    data["concepts"][0]["cues"] = [HOSTILE]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_the_facade_select_block_and_search_show_the_memory_escaped(tmp_path: Path) -> None:
    mem = open_memory(hostile_memory(tmp_path / "memory.json"), selector="all")
    picked = asyncio.run(mem.select("Is 7 odd?"))
    # a block is prompt text: rendered as every prompt is, without them
    assert "description: pair ]0;X then exe.txt" in picked.block
    assert not raw_in(picked.block), picked.block
    assert picked.concepts == ["hostile \\u202eeman"]
    for message in picked.messages:  # the prompt drops them, as every prompt does
        assert not raw_in(str(message.content))
    assert mem.search("hostile pair") == ["hostile \\u202eeman"]
    asyncio.run(mem.aclose())


def _texts(result: Any) -> list[str]:
    """Every string a client reads out of a tool or resource result, as sent and decoded."""
    contents = getattr(result, "content", None) or getattr(result, "contents", None) or result
    texts = []
    for part in contents:
        text = getattr(part, "text", None) or getattr(part, "content", None)
        assert isinstance(text, str), part
        texts.append(text)
        texts.append(json.dumps(json.loads(text), ensure_ascii=False) if text[:1] in "{[" else text)
    structured = getattr(result, "structuredContent", None) or getattr(
        result, "structured_content", None
    )
    if structured is not None:
        texts.append(json.dumps(structured, ensure_ascii=False))
    return texts


def test_mcp_tools_and_resources_return_the_memory_escaped(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install '.[mcp]')")
    from mcp.server.mcpserver.exceptions import ToolError

    from arcmemo.agent.mcp_server import build_server

    mem = open_memory(hostile_memory(tmp_path / "memory.json"), selector="all")
    server = build_server(mem)

    async def calls() -> list[tuple[str, Any]]:
        return [
            ("get_concept", await server.call_tool("get_concept", {"name": NAME})),
            ("select_concepts", await server.call_tool("select_concepts", {"problem": "7?"})),
            ("search_memory", await server.call_tool("search_memory", {"query": "hostile"})),
            ("memory_stats", await server.call_tool("memory_stats", {})),
            ("resource", await server.read_resource(f"memory://concepts/{NAME}")),
            ("view", await server.read_resource("memory://view/full")),
        ]

    async def missing() -> None:
        await server.call_tool("get_concept", {"name": "no \u202e\x1b[2J"})

    with pytest.raises(ToolError) as error:  # the server sends its message to the client
        asyncio.run(missing())
    assert not raw_in(str(error.value)), str(error.value)
    results = asyncio.run(calls())
    seen = {}
    for what, result in results:
        texts = _texts(result)
        seen[what] = "\n".join(texts)
        for text in texts:
            assert not raw_in(text), (what, text[:300])
    concept = json.loads(_texts(results[0][1])[0])
    assert concept["description"] == "pair \\x1b]0;X\\x07 then \\u202eexe.txt"
    assert "\\u202eexe.txt" in seen["resource"] and "\\x1b]0;X" in seen["view"]
    asyncio.run(mem.aclose())


def test_the_demo_story_shows_the_memory_escaped(tmp_path: Path) -> None:
    memory_path = hostile_memory(tmp_path / "memory.json")
    data = json.loads(memory_path.read_text(encoding="utf-8"))
    data["concepts"][0]["stats"]["helpful"] = ["t\x1b[2J"]
    memory_path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    result = TaskResult(task_id="t\x1b[2J", selection=Selection(selector="all", selected=[NAME]))
    (run_dir / "results.jsonl").write_text(result.model_dump_json() + "\n", encoding="utf-8")
    lines = story(run_dir, memory_path)
    printed = "\n".join(lines)
    assert not raw_in(printed), printed
    assert "selected: hostile \\u202eeman" in printed
    assert "credit: hostile \\u202eeman" in printed  # the escaped id still finds its concept


def test_a_name_with_an_override_has_a_display_copy(tmp_path: Path) -> None:
    from arcmemo.memory.untrusted import display_copy

    memory = Memory.load(hostile_memory(tmp_path / "memory.json"))
    shown = display_copy(memory)
    assert [c.name for c in shown.concepts] == ["hostile \\u202eeman"]
    assert [c.id for c in shown.concepts] == [c.id for c in memory.concepts]  # refs still hold
