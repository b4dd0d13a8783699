"""Options of the ``jetspec`` provider (``--model-arg key=value``; strings are parsed)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from arcmemo.models.base import ProviderOptions

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
# Drafters that need no trained head: JetSpec's two stubs and arcmemo's prompt lookup.
STUB_DRAFTERS: tuple[str, ...] = ("random", "echo", "lookup")
STUB_TREE_DEPTH = 7  # tree depth used with a stub drafter when none is given
# What a request for several samples that names no temperature is sampled at (Qwen3's
# recommended temperature without thinking); one sample with none is decoded greedily.
SAMPLING_TEMPERATURE = 0.7
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


class JetSpecOptions(ProviderOptions):
    """Options of the ``jetspec`` provider; strings from ``--model-arg`` are parsed."""

    draft: str | None = Field(
        default=None,
        description="Draft-head directory (or 'repo::subfolder'); 'lookup' to draft the "
        "tokens that followed the context's last n-gram earlier in it (any model, no head); "
        "'random'/'echo' for JetSpec's stub tree drafters; None = plain decoding.",
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
    temperature: float | None = Field(
        default=None,
        ge=0.0,
        description=f"Temperature when a request sets none; None: {SAMPLING_TEMPERATURE} for a "
        "request of several samples (so they differ), greedy (0) for one.",
    )
    timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds one sample may decode, counted from when the engine starts it "
        "(queue wait excluded); None: the client's request timeout, when it hands one over.",
    )
    kv_pool: Literal["shared", "upstream"] = Field(
        default="shared",
        description="shared: one key and one value tensor serve every layer's blocks (memory "
        "= layers x tokens); upstream: JetSpec's own pool, which gives each layer a tensor "
        "spanning all layers' blocks (layers^2 x tokens).",
    )
    lean: bool = Field(
        default=True,
        description="arcmemo's lean paths: a prefill computes the last position's logits "
        "only and attends with SDPA over its own keys and values, KV blocks are handed out "
        "in O(1) each, and single-sequence attention over the paged pool runs as batched "
        "matrix products over all keys at once; false: JetSpec's own (logits for every "
        "prompt position, the paged triton kernel, which runs one program per KV head for a "
        "decode step and slows down with context).",
    )
    round_ring: int = Field(
        default=0,
        ge=0,
        description="Nogather backends with the lean paths: keep the verify rounds' KV blocks "
        "in a ring of this many rounds, moving the accepted tokens' keys and values into dense "
        "blocks when it runs low, so memory grows with the tokens kept, not the rounds taken; "
        "0 = off (JetSpec's own reservation). Not yet measured on a GPU.",
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
            raise ValueError("speculative=true needs draft=PATH (or draft=lookup / random / echo)")
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

    @property
    def speculates(self) -> bool:
        """Whether requests use tree speculation by default."""
        return self.draft is not None and self.speculative is not False

    @property
    def compiles(self) -> bool:
        """Whether the engine uses torch.compile (a compiled backend, target or drafter)."""
        backend = self.attn_backend
        return (
            "compiled" in backend
            or "cudagraph" in backend
            or self.torch_compile
            or self.drafter == "compiled"
        )

    def temperature_for(self, temperature: float | None, n: int) -> float:
        """The temperature a request of ``n`` samples decodes at (its own, else the default)."""
        if temperature is not None:
            return float(temperature)
        if self.temperature is not None:
            return float(self.temperature)
        return SAMPLING_TEMPERATURE if n > 1 else 0.0

    def engine_devices(self) -> list[str | None]:
        """One entry per engine to build; None means 'cuda if available, else cpu'."""
        if self.devices:
            return list(self.devices)
        return [self.device]
