"""The agent loop of docs/agents.md, run as written with a scripted abstract model."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

import arcmemo
from arcmemo.models.base import Message

DOCS = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
SCRIPT = {
    "Rewrite the solution as short pseudocode": (
        "<summary>add the two numbers</summary>\n<pseudocode>\nreturn a + b\n</pseudocode>"
    ),
    "Abstract the reusable concepts": (
        "```yaml\n- name: add two numbers\n  kind: routine\n  routine_subtype: technique\n"
        "  description: add the numbers the problem gives\n  cues: [a sum is asked for]\n```"
    ),
}


def loop_block() -> str:
    (block,) = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    return block


def test_the_docs_loop_is_at_most_ten_lines() -> None:
    assert len(loop_block().strip().splitlines()) <= 10


def test_the_docs_loop_selects_learns_and_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    seen: list[str] = []

    async def my_agent(messages: list[Message]) -> str:
        seen.append("\n".join(m.content for m in messages))
        return "Adding them. Answer: 5"

    def my_check(problem: str, answer: str) -> bool:
        return answer.endswith("5")

    namespace = {
        "arcmemo": arcmemo,
        "MODEL": f"scripted:{tmp_path / 'script.json'}",
        "my_agent": my_agent,
        "my_check": my_check,
    }
    exec(loop_block(), namespace)
    solve = namespace["solve_and_learn"]
    asyncio.run(solve("What is 2 + 3?", "first"))  # type: ignore[operator]
    asyncio.run(solve("What is 1 + 4?", "second"))  # type: ignore[operator]

    memory = json.loads((tmp_path / "memory.json").read_text(encoding="utf-8"))
    (concept,) = memory["concepts"]
    # Learned from the first problem (provenance), selected for the second (the first saw
    # an empty memory) and credited by its outcome.
    assert concept["name"] == "add two numbers"
    assert concept["provenance"]["sources"][0] == "first"
    assert concept["stats"]["selected"] == 1 and concept["stats"]["selected_solved"] == 1
    assert concept["stats"]["helpful"] == ["second"]
    assert "add two numbers" in seen[1] and "add two numbers" not in seen[0]
    outcomes = [e for e in memory["history"] if e["op"] == "stats"]
    assert [(e["target"], e["task_id"], e["why"]) for e in outcomes] == [
        ("outcome first", "first", "solved"),
        ("outcome second", "second", "solved"),
    ]
    assert outcomes[1]["changes"] == ["add two numbers"]
    added = [e for e in memory["history"] if e["op"] == "add"]
    assert added[0]["why"].endswith("(through python)")
