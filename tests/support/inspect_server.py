"""The local OpenAI-compatible test server answering from an arcmemo script (the same
scripts the scripted provider plays), so inspect's own OpenAI client can drive the loop."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from arcmemo.models.base import GenerateParams, Message
from arcmemo.models.registry import create_provider
from tests.support.fake_llm_server import FakeLLMServer


def _message(raw: dict[str, Any]) -> Message:
    content = raw.get("content") or ""
    if not isinstance(content, str):
        content = "".join(block.get("text", "") for block in content if isinstance(block, dict))
    role = raw["role"] if raw["role"] in ("system", "user", "assistant") else "user"
    return Message(role=role, content=content)


def scripted_server(script: Path) -> FakeLLMServer:
    """A server whose every answer comes from ``script`` (``scripted:FILE``)."""
    provider = create_provider(f"scripted:{script}")
    lock = threading.Lock()

    def respond(messages: list[dict[str, Any]], index: int) -> str:
        with lock:  # the script hands each answer out once, in arrival order
            (completion,) = asyncio.run(
                provider.generate([_message(m) for m in messages], GenerateParams(n=1))
            )
        return completion.text

    server = FakeLLMServer()
    server.state.respond = respond
    return server
