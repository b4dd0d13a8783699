"""Shared CLI options: a command's model gets its sampling from --temperature/--max-tokens."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arcmemo.cli.options import open_cli_model
from arcmemo.models.base import Completion, GenerateParams, Message


def test_sampling_options_become_the_models_defaults(tmp_path: Path) -> None:
    script = tmp_path / "answers.yaml"
    script.write_text("- ok\n")
    options = {
        "model": f"scripted:{script}",
        "base_url": None,
        "model_args": (),
        "temperature": 0.3,
        "max_tokens": 1024,
        "concurrency": 2,
        "no_cache": True,
    }
    client = open_cli_model(options)
    seen: list[GenerateParams] = []

    async def generate(messages: list[Message], params: GenerateParams) -> list[Completion]:
        seen.append(params)
        return [Completion(text="ok")]

    client.provider.generate = generate  # type: ignore[method-assign]
    asyncio.run(client.generate([Message(role="user", content="hi")], stage="abstract"))
    assert (seen[0].temperature, seen[0].max_tokens) == (0.3, 1024)
