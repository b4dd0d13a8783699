"""The ``scripted`` provider: answers come from a script instead of a model.

It is a real provider (same interface, same accounting) so the whole pipeline can run
offline, in tests and in demos. A script is one of:

* a **list** of answers, handed out in call order; running past its end is an error;
* a **mapping** from a prompt pattern to an answer or a list of answers. A pattern is a
  substring of the conversation text (all message contents joined by blank lines), or a
  regular expression when it starts with ``re:``. The first pattern that matches, in the
  mapping's order, answers; each pattern's list is consumed in order and running past its
  end is an error. The pattern ``*`` matches anything and is tried last;
* a **callable** ``(messages: list[Message]) -> str | Completion`` (it may be async).

An answer is a string, a :class:`~arcmemo.models.base.Completion`, or a mapping with the
fields of one (``{"text": ..., "reasoning": ..., "finish_reason": ...}``).

``--model scripted:FILE`` loads the script from ``.json``, ``.yaml``/``.yml`` (a list or a
mapping as above) or ``.py`` (a module defining ``respond(messages)`` or ``SCRIPT``).

Ordering under concurrency: answers are consumed under a lock, so each answer is handed
out exactly once; when calls run concurrently, "in order" means in the order the calls
reach the provider, which is the order they were started only if nothing awaits between.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from arcmemo.core.registry import NoOptions
from arcmemo.core.tokens import Usage
from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    Provider,
    ProviderError,
    RetryDecision,
)
from arcmemo.models.registry import register_provider

Responder = Callable[[list[Message]], Any]
_WILDCARD = "*"
_REGEX_PREFIX = "re:"


class ScriptError(ProviderError, ValueError):
    """A script file or object is malformed (a user error, reported in one line)."""


def count_tokens_roughly(text: str) -> int:
    """Whitespace-separated words: a rough, deterministic stand-in for a tokenizer."""
    return len(text.split())


def conversation_text(messages: Sequence[Message]) -> str:
    """The text a mapping script's patterns are matched against."""
    return "\n\n".join(message.content for message in messages)


def _to_completion(answer: Any, where: str) -> Completion:
    if isinstance(answer, Completion):
        return answer.model_copy(deep=True)
    if isinstance(answer, str):
        return Completion(text=answer, finish_reason="stop")
    if isinstance(answer, Mapping):
        if "text" not in answer:
            raise ScriptError(
                f"{where}: an answer mapping needs a 'text' field, got {dict(answer)}"
            )
        return Completion.model_validate({"finish_reason": "stop", **answer})
    raise ScriptError(
        f"{where}: an answer must be a string, a Completion or a mapping with 'text'; "
        f"got {type(answer).__name__}"
    )


class _ListScript:
    def __init__(self, answers: Sequence[Any], source: str) -> None:
        self._answers = list(answers)
        self._next = 0
        self._source = source

    def answer(self, messages: list[Message]) -> Any:
        if self._next >= len(self._answers):
            raise ProviderError(
                f"scripted ({self._source}): script exhausted: all {len(self._answers)} "
                f"answers were used and call {self._next + 1} asked for another",
                decision=RetryDecision.NO,
            )
        answer = self._answers[self._next]
        self._next += 1
        return answer


class _Pattern:
    def __init__(self, key: str, answers: Any) -> None:
        self.key = key
        self.regex = (
            re.compile(key[len(_REGEX_PREFIX) :]) if key.startswith(_REGEX_PREFIX) else None
        )
        self.answers = list(answers) if isinstance(answers, list | tuple) else None
        self.single = None if self.answers is not None else answers
        self.used = 0

    def matches(self, text: str) -> bool:
        if self.key == _WILDCARD:
            return True
        if self.regex is not None:
            return self.regex.search(text) is not None
        return self.key in text


class _MappingScript:
    def __init__(self, mapping: Mapping[str, Any], source: str) -> None:
        patterns = []
        for key, value in mapping.items():
            if not isinstance(key, str):
                raise ScriptError(f"{source}: pattern keys must be strings, got {key!r}")
            try:
                patterns.append(_Pattern(key, value))
            except re.error as error:
                raise ScriptError(f"{source}: bad regular expression {key!r}: {error}") from error
        # The wildcard answers only when nothing more specific did.
        self._patterns = sorted(patterns, key=lambda pattern: pattern.key == _WILDCARD)
        self._source = source

    def answer(self, messages: list[Message]) -> Any:
        text = conversation_text(messages)
        for pattern in self._patterns:
            if not pattern.matches(text):
                continue
            if pattern.answers is None:
                return pattern.single
            if pattern.used >= len(pattern.answers):
                raise ProviderError(
                    f"scripted ({self._source}): answers for pattern {pattern.key!r} exhausted "
                    f"after {len(pattern.answers)} uses",
                    decision=RetryDecision.NO,
                )
            pattern.used += 1
            return pattern.answers[pattern.used - 1]
        snippet = text[-200:].replace("\n", " ")
        raise ProviderError(
            f"scripted ({self._source}): no pattern matches the prompt (patterns: "
            f"{[pattern.key for pattern in self._patterns]}); prompt ends with: {snippet!r}",
            decision=RetryDecision.NO,
        )


class _CallableScript:
    def __init__(self, responder: Responder, source: str) -> None:
        self._responder = responder
        self._source = source

    def answer(self, messages: list[Message]) -> Any:
        return self._responder(list(messages))


def _digest_of(script: Any) -> str:
    """A stable fingerprint of a script, so editing it invalidates cached answers."""
    if callable(script):
        try:
            material = inspect.getsource(script)
        except (OSError, TypeError):
            material = f"{getattr(script, '__module__', '')}.{getattr(script, '__qualname__', '')}"
    else:
        try:
            material = json.dumps(script, sort_keys=True, default=repr)
        except (TypeError, ValueError):
            material = repr(script)
    return hashlib.sha256(material.encode()).hexdigest()[:16]


class ScriptedProvider(Provider):
    """A provider whose answers come from a list, a pattern mapping or a callable."""

    def __init__(self, script: Any, *, model: str = "inline", digest: str | None = None) -> None:
        super().__init__(model)
        self._lock = threading.Lock()
        self._digest = digest or _digest_of(script)
        source = model
        if callable(script):
            self._script: _ListScript | _MappingScript | _CallableScript = _CallableScript(
                script, source
            )
        elif isinstance(script, Mapping):
            self._script = _MappingScript(script, source)
        elif isinstance(script, list | tuple):
            self._script = _ListScript(script, source)
        else:
            raise ScriptError(
                f"scripted ({source}): a script is a list, a mapping or a callable; "
                f"got {type(script).__name__}"
            )

    @classmethod
    def from_script(cls, script: Any, *, model: str = "inline") -> ScriptedProvider:
        """Build from a Python list, mapping or callable (handy in tests)."""
        return cls(script, model=model)

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        """Load a script from a ``.json``, ``.yaml``/``.yml`` or ``.py`` file."""
        script_path = Path(path).expanduser()
        if not script_path.is_file():
            raise ScriptError(f"scripted: script file {script_path} does not exist")
        script = load_script(script_path)
        digest = hashlib.sha256(script_path.read_bytes()).hexdigest()[:16]
        return cls(script, model=str(script_path), digest=digest)

    def cache_identity(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "script": self._digest}

    async def generate(self, messages: list[Message], params: GenerateParams) -> list[Completion]:
        prompt_tokens = count_tokens_roughly(conversation_text(messages))
        completions = []
        for _ in range(params.n):
            with self._lock:
                answer = self._script.answer(messages)
            if inspect.isawaitable(answer):
                answer = await answer
            completion = _to_completion(answer, f"scripted ({self.model})")
            if completion.usage == Usage():
                completion.usage = Usage(
                    prompt_tokens=prompt_tokens,
                    completion_tokens=count_tokens_roughly(completion.text),
                )
            completions.append(completion)
        return completions


def load_script(path: Path) -> Any:
    """Read a script object from a file; errors name the file."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            return json.loads(path.read_text())
        if suffix in (".yaml", ".yml"):
            return yaml.safe_load(path.read_text())
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        raise ScriptError(f"scripted: cannot parse {path}: {error}") from error
    if suffix == ".py":
        return _load_python_script(path)
    raise ScriptError(f"scripted: {path}: unsupported script type {suffix!r} (.json, .yaml, .py)")


def _load_python_script(path: Path) -> Any:
    module_name = f"_arcmemo_script_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ScriptError(f"scripted: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered before running, as an import would: dataclasses and typing look it up.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    if callable(getattr(module, "respond", None)):
        return module.respond
    if hasattr(module, "SCRIPT"):
        return module.SCRIPT
    raise ScriptError(f"scripted: {path} defines neither respond(messages) nor SCRIPT")


@register_provider(
    "scripted", summary="Answers from a script file (tests and demos)", cls=ScriptedProvider
)
def scripted_from_spec(options: NoOptions, *, model: str) -> ScriptedProvider:
    """Factory for ``scripted:PATH`` specs (a script takes no options)."""
    return ScriptedProvider.from_file(model)
