"""The ``jetspec`` provider: arcmemo's chat requests decoded by JetSpec on local GPUs."""

from __future__ import annotations

import asyncio
import importlib.util
import time
import warnings
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    Provider,
    ProviderError,
    RetryDecision,
)
from arcmemo.models.jetspec.engine import LoadedEngine
from arcmemo.models.jetspec.hooks import EngineTimeout
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

    stat_labels = STAT_LABELS
    # One sample without a temperature is a greedy decode (several sample at 0.7).
    greedy_by_default: ClassVar[bool] = True
    # Requests wait in a queue for the engine; the timeout counts from when it starts one,
    # so a client hands its timeout over (request_timeout_s) instead of imposing its own.
    timeout_excludes_queue: ClassVar[bool] = True

    def __init__(self, options: JetSpecOptions, *, model: str) -> None:
        super().__init__(model)
        self.settings = options
        self.request_timeout_s: float | None = None
        self._warned_greedy = False
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
        self._warn_if_greedy_repeats(params)
        start = time.perf_counter()
        timeout = self.timeout_s
        try:
            completions = await self.run_on_engine(
                lambda engine: engine.complete(messages, params, speculative), timeout_s=timeout
            )
        except EngineTimeout as error:
            raise ProviderError(
                f"jetspec provider ({self.model}): timeout: {error}",
                decision=RetryDecision.TRANSIENT,
                kind="timeout",
            ) from error
        except ProviderError:
            raise
        except Exception as error:
            raise ProviderError(
                f"jetspec provider ({self.model}): {type(error).__name__}: {error}",
                decision=RetryDecision.NO,
            ) from error
        latency = time.perf_counter() - start
        return [c.model_copy(update={"latency_s": latency}) for c in completions]

    @property
    def timeout_s(self) -> float | None:
        """Seconds each sample may decode once started: the ``timeout`` option, else the
        client's request timeout (``request_timeout_s``), else none."""
        return self.settings.timeout or self.request_timeout_s

    def _warn_if_greedy_repeats(self, params: GenerateParams) -> None:
        if params.n < 2 or self.settings.temperature_for(params.temperature, params.n) > 0:
            return
        if not self._warned_greedy:
            self._warned_greedy = True
            warnings.warn(
                f"jetspec provider: {params.n} samples at temperature 0 are {params.n} copies "
                "of one greedy decode; give a temperature > 0 (or none: several samples "
                "then sample at the default) for samples that differ",
                stacklevel=3,
            )

    async def run_on_engine(
        self,
        run: Callable[[LoadedEngine], T],
        *,
        engine: int | None = None,
        timeout_s: float | None = None,
    ) -> T:
        """Run ``run(loaded_engine)`` on a worker thread (the least busy, or ``engine``).

        A caller that stops waiting (cancellation) stops the decode at its next step.
        """
        worker = self._least_busy() if engine is None else self._workers[engine]
        job = worker.submit(run, timeout_s=timeout_s)
        try:
            return await asyncio.wrap_future(job.future)
        except asyncio.CancelledError:
            job.abort.set()
            raise

    def cache_identity(self) -> dict[str, Any]:
        """Greedy outputs depend on the model, dtype and template; not on the drafter."""
        settings = self.settings
        identity: dict[str, Any] = {
            "provider": self.name,
            "model": self.model,
            "dtype": settings.dtype,
            "thinking": settings.thinking,
            "speculative": settings.speculates,
        }
        if settings.temperature is not None:  # decides requests that give no temperature
            identity["temperature"] = settings.temperature
        return identity

    async def aclose(self) -> None:
        """Stop the workers and free their engines."""
        for worker in self._workers:
            await asyncio.to_thread(worker.close)
