"""Local generation on a GPU through JetSpec (``jetspec:MODEL_DIR``).

JetSpec (github hao-ai-lab/JetSpec, not on PyPI) runs one causal LM in-process and,
given a draft head, decodes it with lossless speculative *tree* decoding. This provider
turns arcmemo's chat requests into JetSpec calls:

* messages become a prompt through the target tokenizer's chat template
  (``enable_thinking`` from the ``thinking`` option), tokenized without extra special
  tokens so a template that already carries BOS is not doubled;
* each engine lives on its own worker thread fed from a queue, because a
  ``JetSpecEngine`` is not thread-safe; with ``devices=cuda:0,cuda:1`` there is one
  engine (and thread) per GPU and requests go to the least busy one;
* stop strings are applied after generation (JetSpec only stops at EOS or
  ``max_new_tokens``); ``n > 1`` runs sequentially;
* every completion carries JetSpec's statistics in ``Completion.stats``
  (see :class:`GenerationStats`); :func:`summarize_stats` aggregates them for a run.

Neither torch nor jetspec is imported at module import time: both are imported on the
worker thread when the engine is built, so ``import arcmemo.models`` stays light.

Options (``--model-arg key=value``; strings are parsed, see :class:`JetSpecOptions`):
``draft`` (draft-head directory, or ``random`` / ``echo`` for JetSpec's stub drafters),
``drafter``, ``speculative``, ``tree_depth``, ``budget``, ``width``, ``algo``,
``attn_backend``, ``attn_implementation``, ``dtype``, ``device``, ``devices``,
``kv_block_size``, ``thinking``, ``session``, ``session_prompt_capacity``,
``max_tokens``, ``temperature``, ``fuse_gemms``, ``torch_compile``, ``fused_moe``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    Provider,
    ProviderError,
    RetryDecision,
    Usage,
    register_provider,
)

T = TypeVar("T")

INSTALL_HINT = (
    "JetSpec is not on PyPI; install it from source next to arcmemo: "
    "git clone https://github.com/hao-ai-lab/JetSpec && "
    "pip install -e './JetSpec[kernel]' 'transformers>=4.57,<4.58' "
    "(needs torch; transformers must stay < 5). "
    "See the README section 'Local generation with JetSpec'."
)

# JetSpecEngine accepts any string and silently treats an unknown one as "sdpa".
KNOWN_ATTN_BACKENDS: tuple[str, ...] = (
    "sdpa",
    "triton_paged_tree",
    "triton_paged_tree_compiled",
    "triton_paged_tree_cudagraph",
    "triton_paged_tree_compiled_nogather",
    "triton_paged_tree_cudagraph_nogather",
)
CUDAGRAPH_BUDGET_LIMIT = 256  # JetSpec captures tree-verify graphs for buckets up to 256 nodes
STUB_DRAFTERS: tuple[str, ...] = ("random", "echo")
STUB_TREE_DEPTH = 7  # tree depth used with a stub drafter when none is given
_DTYPE_ALIASES = {
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "fp16": "float16",
    "half": "float16",
    "float16": "float16",
    "fp32": "float32",
    "float": "float32",
    "float32": "float32",
}
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"


class JetSpecOptionError(ProviderError, ValueError):
    """A ``jetspec`` provider option is unknown or has a bad value."""


class JetSpecOptions(BaseModel):
    """Options of the ``jetspec`` provider; strings from ``--model-arg`` are parsed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    draft: str | None = Field(
        default=None,
        description="Draft-head directory (or 'repo::subfolder'), or 'random'/'echo' for "
        "JetSpec's stub tree drafters; None = plain decoding.",
    )
    drafter: Literal["eager", "compiled", "graphed"] = Field(
        default="eager",
        description="How a draft head runs: eager, torch.compile'd, or CUDA-graphed (GPU only).",
    )
    speculative: bool | None = Field(
        default=None,
        description="False forces plain decoding; True requires a draft; None = use the draft "
        "when there is one.",
    )
    tree_depth: int | None = Field(
        default=None,
        ge=1,
        description="Draft tree depth; default: the head's block_size - 1 (7 for stubs).",
    )
    budget: int = Field(default=128, ge=1, description="Tree node budget per verify round.")
    width: int = Field(default=7, ge=1, description="Tree width (children per node).")
    algo: str = Field(default="accum_logp", description="jetspec.tree algorithm name.")
    attn_backend: str = Field(default="sdpa", description="JetSpecEngine attention backend.")
    attn_implementation: Literal["sdpa", "auto", "flash_attention_2", "eager"] = Field(
        default="sdpa", description="HF attention implementation used to load the target."
    )
    dtype: Literal["bfloat16", "float16", "float32"] = Field(
        default="bfloat16", description="Weights dtype (fp32 for exact losslessness checks)."
    )
    device: str | None = Field(
        default=None, description="One device; default cuda when present, else cpu."
    )
    devices: tuple[str, ...] | None = Field(
        default=None, description="Several devices, one engine each (comma-separated on the CLI)."
    )
    kv_block_size: int = Field(
        default=16, ge=1, description="Paged KV cache page size (engine block_size)."
    )
    thinking: bool = Field(default=False, description="enable_thinking for the chat template.")
    session: bool = Field(
        default=False,
        description="Reuse JetSpec's tree session (KV pool and CUDA graphs) across calls.",
    )
    session_prompt_capacity: int | None = Field(
        default=None,
        ge=1,
        description="Longest prompt a session holds; default: rounded up per prompt.",
    )
    max_tokens: int = Field(
        default=2048, ge=1, description="max_new_tokens when a request sets none."
    )
    temperature: float = Field(
        default=0.0, ge=0.0, description="Temperature when a request sets none."
    )
    fuse_gemms: bool = Field(
        default=False, description="Fuse QKV and gate/up GEMMs (compiled backends)."
    )
    torch_compile: bool = Field(
        default=False, description="torch.compile the HF target (experimental)."
    )
    fused_moe: bool = Field(default=False, description="Grouped-mm experts for Qwen3-MoE targets.")

    @field_validator("dtype", mode="before")
    @classmethod
    def _dtype_alias(cls, value: Any) -> Any:
        if isinstance(value, str) and value.lower() in _DTYPE_ALIASES:
            return _DTYPE_ALIASES[value.lower()]
        return value

    @field_validator("devices", mode="before")
    @classmethod
    def _split_devices(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("draft", "device", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("", "none"):
            return None
        return value

    @field_validator("attn_backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        if value not in KNOWN_ATTN_BACKENDS:
            raise ValueError(
                f"unknown attention backend {value!r}; JetSpec would silently use sdpa. "
                f"Known: {', '.join(KNOWN_ATTN_BACKENDS)}"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> JetSpecOptions:
        if self.speculative is True and self.draft is None:
            raise ValueError("speculative=true needs draft=PATH (or draft=random / draft=echo)")
        if self.device is not None and self.devices is not None:
            raise ValueError("give either device or devices, not both")
        if self.devices is not None and not self.devices:
            raise ValueError("devices is empty")
        if self.draft in STUB_DRAFTERS and self.drafter != "eager":
            raise ValueError(f"drafter={self.drafter} needs a draft head, not draft={self.draft}")
        if "cudagraph" in self.attn_backend and self.budget > CUDAGRAPH_BUDGET_LIMIT:
            raise ValueError(
                f"budget={self.budget} exceeds {CUDAGRAPH_BUDGET_LIMIT}, the largest tree "
                f"bucket the {self.attn_backend} backend captures"
            )
        return self

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> JetSpecOptions:
        """Validate ``options`` (values may be strings); raise :class:`JetSpecOptionError`."""
        try:
            return cls.model_validate(dict(options))
        except ValidationError as error:
            problems = []
            for item in error.errors():
                where = ".".join(str(part) for part in item["loc"]) or "options"
                message = item["msg"].removeprefix("Value error, ")
                if item["type"] == "extra_forbidden":
                    message = f"unknown option; known: {', '.join(sorted(cls.model_fields))}"
                got = f" (got {item['input']!r})" if item["loc"] else ""
                problems.append(f"{where}: {message}{got}")
            raise JetSpecOptionError("jetspec provider options: " + "; ".join(problems)) from None

    @property
    def speculates(self) -> bool:
        """Whether requests use tree speculation by default."""
        return self.draft is not None and self.speculative is not False

    def engine_devices(self) -> list[str | None]:
        """One entry per engine to build; None means 'cuda if available, else cpu'."""
        if self.devices:
            return list(self.devices)
        return [self.device]


class GenerationStats(BaseModel):
    """What one JetSpec decode reports; stored as ``Completion.stats``."""

    mode: Literal["speculative", "plain"]
    device: str
    engine: int = Field(description="Index of the engine (one per device) that served it.")
    prompt_tokens: int
    generated_tokens: int
    rounds: int = Field(description="Verify rounds (speculative) or decode steps (plain).")
    tokens_per_round: float = Field(description="JetSpec's tpf; 1.0 for plain decoding.")
    mean_accept_length: float | None = Field(
        default=None, description="sum(accept_lengths) / rounds; None when no round ran."
    )
    mean_tree_size: float | None = Field(default=None, description="Mean tree nodes per round.")
    generation_s: float = Field(description="Decode wall time, synchronized on CUDA.")
    tokens_per_s: float


class StatsSummary(BaseModel):
    """Aggregate of many :class:`GenerationStats` (e.g. for a run summary)."""

    completions: int = 0
    generated_tokens: int = 0
    generation_s: float = 0.0
    tokens_per_s: float = Field(
        default=0.0, description="All generated tokens / all generation time."
    )
    rounds: int = 0
    tokens_per_round: float | None = Field(default=None, description="Generated tokens / rounds.")
    mean_accept_length: float | None = Field(default=None, description="Round-weighted mean.")
    by_mode: dict[str, int] = Field(default_factory=dict)


def summarize_stats(stats: Iterable[Mapping[str, Any]]) -> StatsSummary:
    """Aggregate ``Completion.stats`` dicts produced by this provider (others are skipped)."""
    summary = StatsSummary()
    accepted_weighted = 0.0
    accepted_rounds = 0
    for raw in stats:
        if raw.get("mode") not in ("speculative", "plain"):
            continue
        item = GenerationStats.model_validate(raw)
        summary.completions += 1
        summary.generated_tokens += item.generated_tokens
        summary.generation_s += item.generation_s
        summary.rounds += item.rounds
        summary.by_mode[item.mode] = summary.by_mode.get(item.mode, 0) + 1
        if item.mean_accept_length is not None:
            accepted_weighted += item.mean_accept_length * item.rounds
            accepted_rounds += item.rounds
    if summary.generation_s > 0:
        summary.tokens_per_s = summary.generated_tokens / summary.generation_s
    if summary.rounds:
        summary.tokens_per_round = summary.generated_tokens / summary.rounds
    if accepted_rounds:
        summary.mean_accept_length = accepted_weighted / accepted_rounds
    return summary


def apply_stop(text: str, stop: Iterable[str] | None) -> tuple[str, bool]:
    """Cut ``text`` at the earliest stop string; return (text, whether one was found)."""
    cut = min((i for s in stop or () if s and (i := text.find(s)) >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


def split_thinking(text: str) -> tuple[str | None, str]:
    """Split Qwen3-style ``<think>...</think>`` off the answer: (reasoning, answer)."""
    if _THINK_CLOSE not in text:
        return None, text
    reasoning, _, answer = text.partition(_THINK_CLOSE)
    return reasoning.replace(_THINK_OPEN, "", 1).strip(), answer.lstrip()


def missing_runtime() -> str | None:
    """Name of the first of jetspec/torch that cannot be found (without importing it)."""
    for name in ("jetspec", "torch"):
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except (ImportError, ValueError):
            return name
    return None


@dataclass(frozen=True)
class _Job:
    """One request to a worker: a function of the loaded engine and its result future."""

    run: Callable[[LoadedEngine], Any]
    future: concurrent.futures.Future[Any]


class LoadedEngine:
    """A JetSpecEngine with its tokenizer and drafter; used only on its worker's thread."""

    def __init__(self, model_dir: str, options: JetSpecOptions, device: str | None, index: int):
        try:
            import torch
            from jetspec.inference_engine import JetSpecEngine, SamplingParams
        except ImportError as error:
            raise ProviderError(
                f"jetspec provider: cannot import {error.name}. {INSTALL_HINT}"
            ) from error
        self.torch = torch
        self.sampling_params_class = SamplingParams
        self.options = options
        self.index = index
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.engine = JetSpecEngine(
            model_dir,
            device=self.device,
            dtype=getattr(torch, options.dtype),
            block_size=options.kv_block_size,
            attn_implementation=options.attn_implementation,
            attn_backend=options.attn_backend,
            fuse_gemms=options.fuse_gemms,
            torch_compile=options.torch_compile,
            fused_moe=options.fused_moe,
        )
        self.tokenizer = self.engine.tokenizer
        self.drafter: Any = None
        self.target_layer_ids: list[int] | None = None
        self.tree_depth = options.tree_depth or STUB_TREE_DEPTH
        if options.draft is not None:
            self._build_drafter(options.draft)
        self._session_key: tuple[int, int] | None = None

    def _build_drafter(self, draft: str) -> None:
        options = self.options
        if draft == "random":
            from jetspec.draft import RandomTreeDrafter

            self.drafter = RandomTreeDrafter(self.engine.model.config.vocab_size)
            return
        if draft == "echo":
            from jetspec.draft import TargetEchoTreeDrafter

            self.drafter = TargetEchoTreeDrafter(self.engine.model)
            return
        from jetspec.draft_head_adapter import (
            CompiledDraftHead,
            DraftHeadTreeDrafter,
            GraphedDraftHead,
        )
        from jetspec.models.draft_head import load_draft_head

        head = load_draft_head(
            draft,
            device=self.device,
            dtype=getattr(self.torch, options.dtype),
            attn_implementation=getattr(
                self.engine, "resolved_attn_implementation", options.attn_implementation
            ),
        )
        self.target_layer_ids = list(head.target_layer_ids)
        # The drafter may draft deeper than the head was trained for; JetSpec sizes it
        # as tree_depth + 1 and needs the same block size in generate_tree.
        self.tree_depth = options.tree_depth or int(head.block_size) - 1
        drafter_class = {
            "eager": DraftHeadTreeDrafter,
            "compiled": CompiledDraftHead,
            "graphed": GraphedDraftHead,
        }[options.drafter]
        self.drafter = drafter_class(
            head,
            target=self.engine.model,
            block_size=self.tree_depth + 1,
            target_layer_ids=self.target_layer_ids,
            draft_shift=False,
        )

    # -- prompt --------------------------------------------------------------------------

    def render_prompt(self, messages: list[Message]) -> str:
        """The chat-templated prompt text, ending with the assistant turn's opening."""
        if not getattr(self.tokenizer, "chat_template", None):
            raise ProviderError(
                "jetspec provider: the tokenizer of this model has no chat template; "
                "add one (tokenizer_config.json 'chat_template') to use it with arcmemo"
            )
        return self.tokenizer.apply_chat_template(
            [{"role": m.role, "content": m.content} for m in messages],
            tokenize=False,
            add_generation_prompt=True,
            enable_thinking=self.options.thinking,
        )

    def encode(self, prompt: str) -> Any:
        """Prompt ids as a (1, T) tensor; the template already holds any special tokens."""
        return self.tokenizer(prompt, add_special_tokens=False, return_tensors="pt").input_ids

    # -- decoding ------------------------------------------------------------------------

    def _synchronize(self) -> None:
        if str(self.device).startswith("cuda"):
            self.torch.cuda.synchronize(self.device)

    def sampling_params(self, params: GenerateParams) -> Any:
        """JetSpec's SamplingParams for a request (temperature and max_new_tokens only)."""
        temperature = self.options.temperature if params.temperature is None else params.temperature
        max_new = params.max_tokens or self.options.max_tokens
        return self.sampling_params_class(temperature=float(temperature), max_new_tokens=max_new)

    def tree_kwargs(self, prompt_len: int, max_new_tokens: int) -> dict[str, Any]:
        """Keyword arguments of ``generate_tree`` (except prompt, drafter, sampling_params)."""
        options = self.options
        kwargs: dict[str, Any] = {
            # block_size must equal tree_depth + 1, or JetSpec raises
            "block_size": self.tree_depth + 1,
            "tree_depth": self.tree_depth,
            "tree_width": options.width,
            "budget": options.budget,
            "algo": options.algo,
            "target_layer_ids": self.target_layer_ids,
            "return_stats": True,
        }
        if options.session:
            kwargs["session"] = True
            kwargs["session_prompt_capacity"] = self._session_capacity(prompt_len, max_new_tokens)
        return kwargs

    def _session_capacity(self, prompt_len: int, max_new_tokens: int) -> int:
        # A JetSpec session is tagged with max_new_tokens and caps the prompt length; a
        # request outside it would raise, so drop the session (no public reset exists).
        key = self._session_key
        if key is None or max_new_tokens != key[0] or prompt_len > key[1]:
            wanted = ((prompt_len + 255) // 256) * 256
            capacity = max(self.options.session_prompt_capacity or 0, wanted)
            if key is not None:
                self.engine._tree_session = None
            self._session_key = (max_new_tokens, capacity)
        return self._session_key[1]

    def decode(self, input_ids: Any, sampling_params: Any, speculative: bool) -> tuple[dict, float]:
        """One engine call; returns JetSpec's result dict and its synchronized wall time."""
        if speculative and self.drafter is None:
            raise ProviderError("jetspec provider: speculative decoding needs draft=...")
        self._synchronize()
        start = time.perf_counter()
        if speculative:
            result = self.engine.generate_tree(
                input_ids,
                self.drafter,
                sampling_params=sampling_params,
                **self.tree_kwargs(int(input_ids.shape[1]), sampling_params.max_new_tokens),
            )
        else:
            result = self.engine.generate(input_ids, sampling_params)
        self._synchronize()
        return result, time.perf_counter() - start

    def complete(
        self, messages: list[Message], params: GenerateParams, speculative: bool
    ) -> list[Completion]:
        """``params.n`` completions, decoded one after another."""
        input_ids = self.encode(self.render_prompt(messages))
        prompt_tokens = int(input_ids.shape[1])
        sampling_params = self.sampling_params(params)
        if params.seed is not None:
            self.torch.manual_seed(params.seed)
        completions = []
        for _ in range(params.n):
            result, seconds = self.decode(input_ids, sampling_params, speculative)
            completions.append(
                self._completion(result, seconds, prompt_tokens, params, speculative)
            )
        return completions

    def _completion(
        self,
        result: Mapping[str, Any],
        seconds: float,
        prompt_tokens: int,
        params: GenerateParams,
        speculative: bool,
    ) -> Completion:
        token_ids = [int(t) for t in result["token_ids"]]
        generated = len(token_ids)
        ended_by_eos = bool(token_ids) and token_ids[-1] in self.engine.eos_token_ids
        text, stopped = apply_stop(result["text"], params.stop)
        reasoning, answer = split_thinking(text)
        if speculative:
            # generate_tree omits the stats keys when the first token is EOS
            rounds = int(result.get("rounds", 0))
            accept_lengths = result.get("accept_lengths") or []
            tree_sizes = result.get("tree_sizes") or []
            tokens_per_round = float(result.get("tpf", 0.0))
            mean_accept = sum(accept_lengths) / rounds if rounds and accept_lengths else None
            mean_tree = sum(tree_sizes) / len(tree_sizes) if tree_sizes else None
        else:
            rounds, tokens_per_round, mean_accept, mean_tree = generated, 1.0, None, None
        stats = GenerationStats(
            mode="speculative" if speculative else "plain",
            device=str(self.device),
            engine=self.index,
            prompt_tokens=prompt_tokens,
            generated_tokens=generated,
            rounds=rounds,
            tokens_per_round=tokens_per_round,
            mean_accept_length=mean_accept,
            mean_tree_size=mean_tree,
            generation_s=seconds,
            tokens_per_s=generated / seconds if seconds > 0 else 0.0,
        )
        return Completion(
            text=answer,
            reasoning=reasoning,
            finish_reason="stop" if stopped or ended_by_eos else "length",
            usage=Usage(
                prompt_tokens=prompt_tokens,
                completion_tokens=generated,
                reasoning_tokens=self._reasoning_tokens(token_ids),
            ),
            latency_s=seconds,
            stats=stats.model_dump(),
        )

    def _reasoning_tokens(self, token_ids: list[int]) -> int:
        close_id = self.tokenizer.convert_tokens_to_ids(_THINK_CLOSE)
        if close_id is None or close_id == getattr(self.tokenizer, "unk_token_id", None):
            return 0
        return token_ids.index(close_id) + 1 if close_id in token_ids else 0

    def close(self) -> None:
        """Drop the engine and give its GPU memory back (JetSpec has no close())."""
        on_cuda = str(self.device).startswith("cuda")
        self.engine = self.drafter = self.tokenizer = None
        if on_cuda:
            self.torch.cuda.empty_cache()


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
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
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

    def submit(self, run: Callable[[LoadedEngine], T]) -> concurrent.futures.Future[T]:
        """Queue ``run(engine)``; its result or exception arrives in the returned future."""
        if not self._thread.is_alive():
            raise ProviderError("jetspec provider: the engine worker is closed")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._pending_lock:
            self._pending += 1
        self._jobs.put(_Job(run, future))
        return future

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
                    job.future.set_result(job.run(self._loaded()))
                except BaseException as error:
                    job.future.set_exception(error)
            with self._pending_lock:
                self._pending -= 1
        if self._engine is not None:
            self._engine.close()
            self._engine = None


@register_provider("jetspec")
class JetSpecProvider(Provider):
    """``jetspec:MODEL_DIR``: a local HF model decoded by JetSpec, optionally speculatively."""

    name = "jetspec"

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        self.settings = JetSpecOptions.parse(options)
        missing = missing_runtime()
        if missing is not None:
            raise ProviderError(f"jetspec provider: {missing} is not installed. {INSTALL_HINT}")
        self._workers = [
            EngineWorker(model, self.settings, device, index)
            for index, device in enumerate(self.settings.engine_devices())
        ]

    @property
    def workers(self) -> list[EngineWorker]:
        """The engine workers, one per device."""
        return list(self._workers)

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
