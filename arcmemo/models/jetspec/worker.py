"""One thread per engine: a JetSpecEngine is not thread-safe, so its jobs are queued.

A job's clock starts when the engine starts it: the time it waited in the queue (behind
other requests, or the model load) is reported as ``queue_s`` and never counts towards its
timeout (:class:`~arcmemo.models.jetspec.engine.JobContext`).
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from arcmemo.models.base import ProviderError
from arcmemo.models.jetspec.engine import JobContext, LoadedEngine
from arcmemo.models.jetspec.options import JetSpecOptions

T = TypeVar("T")


@dataclass(frozen=True)
class Job(Generic[T]):
    """One request to a worker: a function of the loaded engine, its result future, and
    ``abort``, which stops its decode at the next step once set (a caller gave up)."""

    run: Callable[[LoadedEngine], T]
    future: concurrent.futures.Future[T]
    timeout_s: float | None = None
    submitted: float = field(default_factory=time.monotonic)
    abort: threading.Event = field(default_factory=threading.Event)


class EngineWorker:
    """One thread that owns one engine and runs queued jobs on it, one at a time.

    The engine is built on the thread by the first job, so constructing a provider is
    cheap and never touches torch.
    """

    def __init__(self, model_dir: str, options: JetSpecOptions, device: str | None, index: int):
        self.model_dir = model_dir
        self.options = options
        self.device = device
        self.index = index
        self._jobs: queue.Queue[Job[Any] | None] = queue.Queue()
        self._pending = 0
        self._pending_lock = threading.Lock()
        self._engine: LoadedEngine | None = None
        self._load_error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._loop, name=f"jetspec-engine-{index}", daemon=True
        )
        self._thread.start()

    @property
    def pending(self) -> int:
        """Jobs queued or running on this worker."""
        return self._pending

    def submit(self, run: Callable[[LoadedEngine], T], *, timeout_s: float | None = None) -> Job[T]:
        """Queue ``run(engine)``; its result or exception arrives in the job's future.

        ``timeout_s`` bounds each sample's decode, counted from when it starts.
        """
        if not self._thread.is_alive():
            raise ProviderError("jetspec provider: the engine worker is closed")
        job: Job[T] = Job(run, concurrent.futures.Future(), timeout_s)
        with self._pending_lock:
            self._pending += 1
        self._jobs.put(job)
        return job

    def close(self) -> None:
        """Finish queued jobs, then stop the thread and free the engine."""
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join()

    def _loaded(self) -> LoadedEngine:
        if self._load_error is not None:
            raise self._load_error
        if self._engine is None:
            try:
                self._engine = LoadedEngine(self.model_dir, self.options, self.device, self.index)
            except ProviderError as error:
                self._load_error = error
                raise
            except Exception as error:
                self._load_error = ProviderError(
                    f"jetspec provider: cannot load {self.model_dir!r} on "
                    f"{self.device or 'default device'}: {type(error).__name__}: {error}"
                )
                raise self._load_error from error
        return self._engine

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            if job.future.set_running_or_notify_cancel():
                try:
                    engine = self._loaded()
                    engine.job = JobContext(
                        queue_s=time.monotonic() - job.submitted,
                        timeout_s=job.timeout_s,
                        abort=job.abort,
                    )
                    try:
                        result = job.run(engine)
                    finally:
                        engine.job = None
                    job.future.set_result(result)
                except BaseException as error:
                    job.future.set_exception(error)
            with self._pending_lock:
                self._pending -= 1
        if self._engine is not None:
            self._engine.close()
            self._engine = None
