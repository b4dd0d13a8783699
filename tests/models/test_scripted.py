"""The scripted provider: lists, pattern mappings, callables, script files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from arcmemo.models import Completion, GenerateParams, Message, ProviderError, create_provider
from arcmemo.models.scripted import ScriptedProvider, ScriptError


def _ask(provider: ScriptedProvider, text: str, n: int = 1) -> list[Completion]:
    messages = [Message(role="system", content="be brief"), Message(role="user", content=text)]
    return asyncio.run(provider.generate(messages, GenerateParams(n=n)))


def test_list_answers_in_order_then_clear_error_when_exhausted() -> None:
    provider = ScriptedProvider.from_script(["one", "two", "three"])
    assert [c.text for c in _ask(provider, "q", n=2)] == ["one", "two"]
    assert _ask(provider, "q")[0].text == "three"
    with pytest.raises(ProviderError, match="exhausted"):
        _ask(provider, "q")


def test_mapping_substring_regex_lists_and_wildcard() -> None:
    provider = ScriptedProvider.from_script(
        {
            "*": "fallback",
            "grid": ["first grid", "second grid"],
            r"re:task \d+": "numbered",
        }
    )
    assert _ask(provider, "solve this grid")[0].text == "first grid"
    assert _ask(provider, "another grid")[0].text == "second grid"
    assert _ask(provider, "see task 42")[0].text == "numbered"
    assert _ask(provider, "see task 43")[0].text == "numbered"
    assert _ask(provider, "nothing special")[0].text == "fallback"
    with pytest.raises(ProviderError, match="'grid' exhausted"):
        _ask(provider, "a third grid")


def test_mapping_without_match_names_patterns() -> None:
    provider = ScriptedProvider.from_script({"alpha": "a"})
    with pytest.raises(ProviderError, match="no pattern matches"):
        _ask(provider, "beta")


def test_callable_may_return_text_or_completion_and_be_async() -> None:
    def respond(messages: list[Message]) -> str:
        return messages[-1].content.upper()

    async def respond_async(messages: list[Message]) -> Completion:
        return Completion(text="async", finish_reason="length")

    assert _ask(ScriptedProvider.from_script(respond), "hello")[0].text == "HELLO"
    completion = _ask(ScriptedProvider.from_script(respond_async), "x")[0]
    assert (completion.text, completion.finish_reason) == ("async", "length")


def test_usage_is_counted_roughly() -> None:
    completion = _ask(
        ScriptedProvider.from_script(["three word answer"]), "four word question here"
    )[0]
    assert completion.usage.completion_tokens == 3
    assert completion.usage.prompt_tokens == 2 + 4  # system + user words


def test_concurrent_calls_hand_out_each_answer_once() -> None:
    answers = [f"answer {i}" for i in range(50)]
    provider = ScriptedProvider.from_script(answers)

    async def many() -> list[str]:
        messages = [Message(role="user", content="q")]
        batches = await asyncio.gather(
            *(provider.generate(messages, GenerateParams()) for _ in range(50))
        )
        return [batch[0].text for batch in batches]

    texts = asyncio.run(many())
    assert sorted(texts) == sorted(answers)
    assert texts == answers  # no await inside a call, so call order is start order


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".py"])
def test_script_files_load_through_the_registry(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"script{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps({"hello": "from json"}))
    elif suffix == ".yaml":
        path.write_text("hello: from yaml\n")
    else:
        path.write_text("def respond(messages):\n    return 'from py'\n")
    provider = create_provider(f"scripted:{path}")
    assert isinstance(provider, ScriptedProvider)
    assert _ask(provider, "hello")[0].text.startswith("from")
    assert provider.cache_identity()["script"]


def test_python_script_constant_and_bad_files(tmp_path: Path) -> None:
    constant = tmp_path / "constant.py"
    constant.write_text("SCRIPT = ['x', 'y']\n")
    assert _ask(ScriptedProvider.from_file(constant), "q")[0].text == "x"
    empty = tmp_path / "empty.py"
    empty.write_text("VALUE = 1\n")
    with pytest.raises(ScriptError, match="neither respond"):
        ScriptedProvider.from_file(empty)
    broken = tmp_path / "broken.json"
    broken.write_text("{nope")
    with pytest.raises(ScriptError, match=r"broken\.json"):
        ScriptedProvider.from_file(broken)
    with pytest.raises(ScriptError, match="does not exist"):
        ScriptedProvider.from_file(tmp_path / "missing.yaml")


def test_editing_a_script_file_changes_its_cache_identity(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("- a\n")
    before = ScriptedProvider.from_file(path).cache_identity()
    path.write_text("- b\n")
    assert ScriptedProvider.from_file(path).cache_identity() != before
