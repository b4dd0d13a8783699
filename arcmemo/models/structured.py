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
from arcmemo.sandbox.text import clean_text

T = TypeVar("T")

_FENCE = "```"
_LANGUAGE = re.compile(r"[ \t]*([\w+-]*)")
PYTHON_LANGUAGES = ("", "python", "py", "python3")

MAX_PARSED_CHARS = 1_000_000
"""Characters of a completion that are parsed: its tail. About 250,000 tokens, above the
longest answer any provider returns (the largest output limits are 128,000 tokens), so only
a runaway repetition loop or a hostile answer is longer; the whole text is still kept."""
MAX_DEPTH = 50
"""Deepest nesting accepted in YAML or JSON from a model (a concept is four levels deep)."""


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


def parsed_window(text: str) -> tuple[str, int]:
    """The part of a completion that is parsed (its last :data:`MAX_PARSED_CHARS`
    characters, where answers are) and how many characters were left out before it."""
    cut = max(0, len(text) - MAX_PARSED_CHARS)
    return (text[cut:] if cut else text), cut


def fenced_spans(text: str) -> list[tuple[int, int, int, str]]:
    """``(start, body start, body end, language)`` of every closed fenced block of
    ``text``, in order; the block ends three characters after its body.

    A block opens at three backquotes followed by an optional language word and the rest of
    that line, and closes at the next three backquotes. One pass with ``str.find`` (a
    regular expression retried at every unclosed opener is quadratic)."""
    spans = []
    position = 0
    while (start := text.find(_FENCE, position)) >= 0:
        newline = text.find("\n", start + 3)
        if newline < 0:
            break  # no opener after this one has a line end either
        close = text.find(_FENCE, newline + 1)
        if close < 0:
            break  # every later opener would look for the same missing closer
        spans.append((start, newline + 1, close, fence_language(text, start, newline)))
        position = close + 3
    return spans


def fence_language(text: str, start: int, newline: int) -> str:
    """The language word of the fence opening at ``start`` whose line ends at ``newline``."""
    language = _LANGUAGE.match(text, start + 3, newline)
    return language.group(1) if language else ""


def fenced_sections(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every closed fenced block of ``text``, in order."""
    return [(lang, text[body:end]) for _, body, end, lang in fenced_spans(text)]


def fenced_blocks(text: str, languages: tuple[str, ...]) -> list[str]:
    """The bodies of the fenced blocks of ``text`` tagged with one of ``languages``, in order
    (an untagged block counts as language ``""``)."""
    return [body for lang, body in fenced_sections(text) if lang.lower() in languages]


def last_fenced_block(text: str, languages: tuple[str, ...] = ("yaml", "yml", "json", "")) -> str:
    """The body of the last fenced block in one of ``languages``; the text itself if none."""
    blocks = fenced_blocks(text, languages)
    return blocks[-1] if blocks else text


# A run of openers far deeper than MAX_DEPTH: refused before the YAML scanner, which looks
# ahead over every open flow level at each token (seconds on a run of thousands).
_DEEP_OPENERS = re.compile(rf"(?:[\[{{][ \t\r\n]*){{{4 * MAX_DEPTH}}}")


class _ModelYamlLoader(yaml.SafeLoader):
    """YAML as a model may write it: no anchors or aliases (shared nodes make a document
    whose walk is exponential in its size), at most :data:`MAX_DEPTH` levels deep."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise yaml.MarkedYAMLError(
                problem="anchors and aliases (&name, *name) are not accepted; write each "
                "value out in full",
                problem_mark=event.start_mark,
            )
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise yaml.MarkedYAMLError(
                problem=f"nested more than {MAX_DEPTH} levels deep",
                problem_mark=event.start_mark,
            )
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def load_yaml_block(text: str) -> Any:
    """Parse the last yaml/json fenced block (JSON is YAML) with a located error message;
    every string of the value passes through :func:`~arcmemo.sandbox.text.clean_text`."""
    body = last_fenced_block(text)
    deep = _DEEP_OPENERS.search(body)
    if deep is not None:
        line = body.count("\n", 0, deep.start()) + 1
        column = deep.start() - (body.rfind("\n", 0, deep.start()) + 1) + 1
        raise OutputError(
            f"the YAML block does not parse at line {line} column {column}: "
            f"nested more than {MAX_DEPTH} levels deep"
        )
    try:
        value = yaml.load(body, Loader=_ModelYamlLoader)  # a SafeLoader
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise OutputError(f"the YAML block does not parse{where}: {problem}") from None
    return _clean_strings(value)


def _clean_strings(value: Any) -> Any:
    """``value`` with every string in it (keys too) through :func:`clean_text`; other
    values as they are (the loader bounds the depth)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_clean_strings(item) for item in value]
    if isinstance(value, dict):
        return {_clean_strings(key): _clean_strings(item) for key, item in value.items()}
    return value


def tagged(text: str, tag: str) -> str | None:
    """The content of the last ``<tag>...</tag>`` section, stripped; None when absent.

    Sections are read left to right as a lazy regular expression would (each opener to the
    first closer after it), in one pass."""
    opener, closer = f"<{tag}>", f"</{tag}>"
    found = None
    position = 0
    while (start := text.find(opener, position)) >= 0:
        end = text.find(closer, start + len(opener))
        if end < 0:
            break
        found = text[start + len(opener) : end]
        position = end + len(closer)
    return clean_text(found.strip()) if found is not None else None


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
        window, left_out = parsed_window(completion.text)
        try:
            outcome.value = parse(window)
        except OutputError as error:
            outcome.error = str(error)
            if left_out:
                outcome.error += (
                    f" (the answer is {len(completion.text)} characters long; only its last "
                    f"{MAX_PARSED_CHARS} were read)"
                )
            conversation += [
                Message(role="assistant", content=completion.text),
                Message(role="user", content=prompting.render("repair", error=str(error))),
            ]
            continue
        outcome.ok = True
        outcome.error = None
        return outcome
    return outcome
