"""The ``jetspec`` provider: arcmemo's chat requests decoded by JetSpec on local GPUs."""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import Callable
from typing import Any, TypeVar

from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    Provider,
    ProviderError,
    RetryDecision,
)
from arcmemo.models.jetspec.engine import LoadedEngine
from arcmemo.models.jetspec.options import JetSpecOptions
from arcmemo.models.jetspec.stats import STAT_LABELS
from arcmemo.models.jetspec.worker import EngineWorker
from arcmemo.models.registry import JETSPEC_INSTALL_HINT, create_provider, register_provider

T = TypeVar("T")


def missing_runtime() -> str | None:
    """Name of the first of jetspec/torch that cannot be found (without importing it)."""
    for name in ("jetspec", "torch"):
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except (ImportError, ValueError):
            return name
    return None


@register_provider(
    "jetspec",
    options=JetSpecOptions,
    summary="A local model decoded by JetSpec on GPUs (speculatively with a draft head)",
)
class JetSpecProvider(Provider):
    """``jetspec:MODEL_DIR``: a local HF model decoded by JetSpec, optionally speculatively."""

    name = "jetspec"
    stat_labels = STAT_LABELS

    def __init__(self, options: JetSpecOptions, *, model: str) -> None:
        super().__init__(model)
        self.settings = options
        missing = missing_runtime()
        if missing is not None:
            raise ProviderError(
                f"jetspec provider: {missing} is not installed. {JETSPEC_INSTALL_HINT}"
            )
        self._workers = [
            EngineWorker(model, self.settings, device, index)
            for index, device in enumerate(self.settings.engine_devices())
        ]

    @classmethod
    def open(cls, model_dir: str, **model_args: Any) -> JetSpecProvider:
        """The provider of ``jetspec:MODEL_DIR`` with ``--model-arg`` style options (strings)."""
        provider = create_provider(f"{cls.name}:{model_dir}", **model_args)
        if not isinstance(provider, cls):
            raise TypeError(f"{cls.name}: registered as {type(provider).__name__}, not {cls}")
        return provider

    def _least_busy(self) -> EngineWorker:
        return min(self._workers, key=lambda worker: worker.pending)

    async def generate(self, messages: list[Message], params: GenerateParams) -> list[Completion]:
        """Completions decoded speculatively when a draft is configured, plainly otherwise."""
        return await self.generate_mode(messages, params, speculative=self.settings.speculates)

    async def generate_mode(
        self, messages: list[Message], params: GenerateParams, *, speculative: bool
    ) -> list[Completion]:
        """Like :meth:`generate` with the decoding mode chosen by the caller (benchmarks)."""
        if speculative and self.settings.draft is None:
            raise ProviderError("jetspec provider: speculative decoding needs draft=...")
        start = time.perf_counter()
        try:
            completions = await self.run_on_engine(
                lambda engine: engine.complete(messages, params, speculative)
            )
        except ProviderError:
            raise
        except Exception as error:
            raise ProviderError(
                f"jetspec provider ({self.model}): {type(error).__name__}: {error}",
                decision=RetryDecision.NO,
            ) from error
        latency = time.perf_counter() - start
        return [c.model_copy(update={"latency_s": latency}) for c in completions]

    async def run_on_engine(
        self, run: Callable[[LoadedEngine], T], *, engine: int | None = None
    ) -> T:
        """Run ``run(loaded_engine)`` on a worker thread (the least busy, or ``engine``)."""
        worker = self._least_busy() if engine is None else self._workers[engine]
        return await asyncio.wrap_future(worker.submit(run))

    def cache_identity(self) -> dict[str, Any]:
        """Greedy outputs depend on the model, dtype and template; not on the drafter."""
        settings = self.settings
        return {
            "provider": self.name,
            "model": self.model,
            "dtype": settings.dtype,
            "thinking": settings.thinking,
            "speculative": settings.speculates,
        }

    async def aclose(self) -> None:
        """Stop the workers and free their engines."""
        for worker in self._workers:
            await asyncio.to_thread(worker.close)
