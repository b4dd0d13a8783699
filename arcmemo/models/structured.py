"""Structured model output: generate, parse, re-ask once with the exact error, or give up.

Every place that parses model output into typed records goes through
:func:`generate_structured`, so the repair policy lives in one place and a failure always
carries the raw text that could not be parsed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field

from arcmemo.core import prompting
from arcmemo.core.tokens import Usage
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.context import PromptTooLongError

T = TypeVar("T")

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
PYTHON_LANGUAGES = ("", "python", "py", "python3")


class OutputError(ValueError):
    """Model output that does not parse or validate; the message is shown to the model."""


class Structured(BaseModel, Generic[T]):
    """The outcome of a structured call: the value, or the error and raw text."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    value: Any = None
    ok: bool = False
    error: str | None = Field(default=None, description="The last parse or validation error.")
    raw: list[str] = Field(default_factory=list, description="Every raw answer, in order.")
    usage: Usage = Field(default_factory=Usage)


def fenced_blocks(text: str, languages: tuple[str, ...]) -> list[str]:
    """The bodies of the fenced blocks of ``text`` tagged with one of ``languages``, in order
    (an untagged block counts as language ``""``)."""
    return [body for lang, body in _FENCE.findall(text) if lang.lower() in languages]


def last_fenced_block(text: str, languages: tuple[str, ...] = ("yaml", "yml", "json", "")) -> str:
    """The body of the last fenced block in one of ``languages``; the text itself if none."""
    blocks = fenced_blocks(text, languages)
    return blocks[-1] if blocks else text


def load_yaml_block(text: str) -> Any:
    """Parse the last yaml/json fenced block (JSON is YAML) with a located error message."""
    body = last_fenced_block(text)
    try:
        return yaml.safe_load(body)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise OutputError(f"the YAML block does not parse{where}: {problem}") from None


def tagged(text: str, tag: str) -> str | None:
    """The content of the last ``<tag>...</tag>`` section, stripped; None when absent."""
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", text, re.DOTALL)
    return found[-1].strip() if found else None


# Times an unusable answer is re-asked with the error appended (dry-run estimates count them).
REPAIRS = 1


async def generate_structured(
    model: ModelClient,
    messages: list[Message],
    parse: Callable[[str], T],
    *,
    stage: str,
    task_id: str | None = None,
    repairs: int = REPAIRS,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> Structured[T]:
    """Ask, parse with ``parse`` (raising :class:`OutputError`), and re-ask up to ``repairs``
    times with the exact error appended to the conversation."""
    outcome: Structured[T] = Structured()
    conversation = list(messages)
    for round_ in range(repairs + 1):
        try:
            (completion,) = await model.generate(
                conversation,
                stage=stage if round_ == 0 else f"{stage}-repair",
                task_id=task_id,
                temperature=temperature,
                max_tokens=max_tokens,
            )
        except PromptTooLongError:
            if round_ == 0:
                raise
            return outcome  # the conversation outgrew the window: the last error stands
        outcome.raw.append(completion.text)
        outcome.usage = outcome.usage + completion.usage
        try:
            outcome.value = parse(completion.text)
        except OutputError as error:
            outcome.error = str(error)
            conversation += [
                Message(role="assistant", content=completion.text),
                Message(role="user", content=prompting.render("repair", error=str(error))),
            ]
            continue
        outcome.ok = True
        outcome.error = None
        return outcome
    return outcome
