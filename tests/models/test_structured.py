"""Structured model output: fenced-block parsing and the one-repair policy."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.models.structured import (
    OutputError,
    generate_structured,
    last_fenced_block,
    load_yaml_block,
    tagged,
)


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


class Recorder:
    """A scripted model that hands out ``answers`` in order and keeps what it was sent."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.received: list[list[Message]] = []

    def __call__(self, messages: list[Message]) -> str:
        self.received.append(list(messages))
        return self.answers[len(self.received) - 1]


def parse_list(text: str) -> list[int]:
    data = load_yaml_block(text)
    if not isinstance(data, list) or not all(isinstance(x, int) for x in data):
        raise OutputError("expected a YAML list of integers")
    return data


def run(recorder: Recorder, repairs: int = 1):
    client = ModelClient(ScriptedProvider.from_script(recorder))
    return asyncio.run(
        generate_structured(
            client,
            [Message(role="user", content="give me numbers")],
            parse_list,
            stage="test",
            task_id="t1",
            repairs=repairs,
        )
    )


def test_last_fenced_block_prefers_the_last_yaml_block() -> None:
    text = "draft:\n```yaml\n- 1\n```\nfinal:\n```yaml\n- 2\n```\n```python\nx = 3\n```"
    assert last_fenced_block(text) == "- 2\n"
    assert last_fenced_block("no fences: just text") == "no fences: just text"
    assert last_fenced_block("```json\n[1]\n```") == "[1]\n"


def test_load_yaml_block_reads_json_and_locates_errors() -> None:
    assert load_yaml_block('```json\n{"a": [1, 2]}\n```') == {"a": [1, 2]}
    with pytest.raises(OutputError, match="does not parse at line 2 column 7: mapping values"):
        load_yaml_block("```yaml\n- ok\n- a: b: c\n- fine\n```")


def test_tagged_returns_the_last_section_or_none() -> None:
    text = "<summary>first</summary> ... <summary>\n second \n</summary>"
    assert tagged(text, "summary") == "second"
    assert tagged(text, "pseudocode") is None


def test_a_good_first_answer_needs_no_repair() -> None:
    recorder = Recorder("```yaml\n- 1\n- 2\n```")
    outcome = run(recorder)
    assert outcome.ok and outcome.value == [1, 2] and outcome.error is None
    assert len(recorder.received) == 1
    assert outcome.usage.completion_tokens > 0


def test_a_bad_answer_is_repaired_once_with_the_exact_error() -> None:
    recorder = Recorder("```yaml\n- one\n```", "```yaml\n- 1\n```")
    outcome = run(recorder)
    assert outcome.ok and outcome.value == [1]
    assert outcome.raw == ["```yaml\n- one\n```", "```yaml\n- 1\n```"]
    repair = recorder.received[1]
    assert [m.role for m in repair] == ["user", "assistant", "user"]
    assert repair[1].content == "```yaml\n- one\n```"
    assert "Your answer could not be used: expected a YAML list of integers" in repair[2].content


def test_a_still_broken_answer_gives_up_with_every_raw_text() -> None:
    recorder = Recorder("- [", "- one", "never asked")
    outcome = run(recorder)
    assert not outcome.ok and outcome.value is None
    assert outcome.error == "expected a YAML list of integers"
    assert outcome.raw == ["- [", "- one"]
    assert len(recorder.received) == 2
    assert "does not parse at line 1" in recorder.received[1][-1].content


def test_repairs_zero_means_a_single_call() -> None:
    recorder = Recorder("- one", "- 1")
    outcome = run(recorder, repairs=0)
    assert not outcome.ok and len(recorder.received) == 1
