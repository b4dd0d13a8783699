"""A model's context window: where it is known from, and the prompt that cannot fit it.

The window of a model comes, first to last, from ``--model-arg context_window=N`` (per
role), from its server (llama.cpp's ``/props`` ``n_ctx``; ``/v1/models`` where it reports
``context_length``, vLLM's ``max_model_len`` or llama.cpp's ``meta.n_ctx_train``), or from
the packaged table ``context_windows.json`` of known hosted models. A prompt that cannot fit
is not an infrastructure failure: :class:`PromptTooLongError` ends the call, and the run
records the task as ``prompt_too_long`` (inspect_ai's ``model_length``). A server's own
refusal of an over-long prompt (an HTTP 400 whose text says so) is mapped to the same
outcome by :func:`is_context_overflow`, for when the estimate was wrong.
"""

from __future__ import annotations

import asyncio
import json
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arcmemo.core.registry import RegistryError
from arcmemo.models.retry import ModelCallError

if TYPE_CHECKING:
    from arcmemo.models.base import Provider

DEFAULT_WINDOWS_PATH = Path(__file__).with_name("context_windows.json")
PROMPT_TOO_LONG = "prompt_too_long"
# The context-length refusals of OpenAI (context_length_exceeded), vLLM ("maximum context
# length"), llama.cpp ("exceeds the available context size") and Anthropic ("prompt is too
# long").
_OVERFLOW = re.compile(
    r"context_length_exceeded|maximum context length|exceeds the available context size"
    r"|context window|prompt is too long|too many tokens",
    re.IGNORECASE,
)


class PromptTooLongError(ModelCallError):
    """A prompt that cannot fit the model's context window (by arcmemo's estimate, or as
    the server said): a recorded outcome of the task, not a failure of the run."""

    def __init__(
        self,
        cause: str,
        *,
        stage: str,
        task_id: str | None,
        prompt_tokens: int | None = None,
        context_window: int | None = None,
        attempts: int = 0,
    ) -> None:
        super().__init__(
            cause, stage=stage, task_id=task_id, attempts=attempts, kind=PROMPT_TOO_LONG
        )
        self.prompt_tokens = prompt_tokens
        self.context_window = context_window


def split_context_window(model_args: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
    """``context_window=N`` taken out of a role's ``--model-arg`` options (every provider
    takes it; arcmemo, not the provider, uses it), and the options left."""
    if "context_window" not in model_args:
        return None, model_args
    rest = dict(model_args)
    raw = rest.pop("context_window")
    try:
        window = int(raw)
    except (TypeError, ValueError):
        window = 0
    if window <= 0:
        raise RegistryError(f"--model-arg context_window={raw}: expected a positive integer")
    return window, rest


def known_window(spec: str, model_args: dict[str, Any]) -> int | None:
    """The window known without asking a server (what a dry run, which opens no model,
    can know): ``context_window=N`` among the role's options, else the packaged table."""
    window, _ = split_context_window(model_args)
    return window if window is not None else table_window(spec)


def answer_room(window: int, max_tokens: int | None) -> int:
    """The tokens of a window kept for the answer when a prompt is budgeted to fit it: the
    role's max_tokens, else an eighth of the window (at most 4,096)."""
    if max_tokens is not None:
        return min(max_tokens, window // 2)
    return min(window // 8, 4096)


def is_context_overflow(status: int | None, message: str) -> bool:
    """Whether an HTTP error is the server refusing a prompt longer than its window."""
    return status in (400, 413) and bool(_OVERFLOW.search(message))


@cache
def _table(path: Path) -> dict[str, int]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): int(v) for k, v in data["models"].items()}


def table_window(spec: str, path: Path = DEFAULT_WINDOWS_PATH) -> int | None:
    """The packaged window of ``provider:model`` (or of its bare model name: a local
    server may serve a known model under any provider), else None."""
    table = _table(path)
    model = spec.split(":", 1)[-1]
    for key in (spec, model, model.rsplit("/", 1)[-1]):
        if key in table:
            return table[key]
    return None


def window_from_props(data: Any) -> int | None:
    """llama.cpp's ``/props``: ``default_generation_settings.n_ctx`` (or a top-level
    ``n_ctx``)."""
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    for source in (settings, data):
        if isinstance(source, dict) and _positive(source.get("n_ctx")):
            return int(source["n_ctx"])
    return None


def window_from_models(data: Any, model: str) -> int | None:
    """``/v1/models``: the entry of ``model`` (or the only one) where it reports its window."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
        for value in (
            entry.get("context_length"),
            entry.get("max_model_len"),
            entry.get("context_window"),
            meta.get("n_ctx"),
            meta.get("n_ctx_train"),
        ):
            if isinstance(value, int) and _positive(value):
                return value
    return None


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


class WindowProbe:
    """A model's context window, found once and shared by a client and its views:
    ``--model-arg context_window=N``, else what its server reports, else the packaged table;
    None when nothing says."""

    def __init__(self, provider: Provider, spec: str) -> None:
        self._provider = provider
        self._spec = spec
        self.known: int | None = None
        self._found = False
        self._lock = asyncio.Lock()

    async def find(self) -> int | None:
        """The window (the server is asked once)."""
        async with self._lock:
            if not self._found:
                window = self._provider.context_window
                if window is None:
                    try:
                        window = await self._provider.server_context_window()
                    except Exception:
                        window = None
                self.known = window if window is not None else table_window(self._spec)
                self._found = True
        return self.known

    async def check_fits(self, tokens: int, *, stage: str, task_id: str | None) -> None:
        """Raise :class:`PromptTooLongError` for a prompt of about ``tokens`` that cannot fit
        the window (by estimate; a server's own refusal is mapped the same way when a
        request is sent)."""
        window = await self.find()
        if window is not None and tokens >= window:
            raise PromptTooLongError(
                f"the prompt is about {tokens:,} tokens; {self._spec}'s context window is "
                f"{window:,}",
                stage=stage,
                task_id=task_id,
                prompt_tokens=tokens,
                context_window=window,
            )
