"""The two places where arcmemo reaches into a running JetSpec engine.

* **The KV pool.** JetSpec's ``PagedKVCache`` (one sequence) hands block ids out of one free
  list shared by all layers, but gives every layer its own pool tensor indexed by those
  ids, so each layer's tensor spans the blocks of *all* layers: a model of ``L`` layers
  holds ``L x L`` blocks per 16 tokens, ``L`` times the KV it needs (28x for Qwen3-0.6B,
  36x for Qwen3-8B). A block id belongs to one layer at a time, so one tensor can serve
  every layer: :func:`shared_pool_class` keeps a single key and a single value tensor that
  all layers index (``kv_pool=shared``, the default). The logical-KV ("nogather")
  backends give every layer the *same* round block ids; when the engine reserves such
  layer-shared blocks the cache goes back to one tensor per layer before it grows.
* **A checkpoint per decoding step**, for request timeouts that start when the engine
  starts the request: the engine's sampler (called once per plain decoding step and at
  prefill) and the drafter (called once per verify round) check the current job's
  deadline and raise :class:`EngineTimeout` past it.

Both are module-level replacements inside ``jetspec.inference_engine.engine``, configured
per thread (each engine lives on its own worker thread), so engines with other settings,
or JetSpec used outside arcmemo's workers, behave as upstream. Only imported on a worker
thread, after torch and jetspec.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

_settings = threading.local()
_install_lock = threading.Lock()


class EngineTimeout(Exception):
    """A decode ran past its deadline (or was abandoned by its caller) and was stopped."""


def configure_thread(*, kv_pool: str, layers: int | None = None) -> None:
    """Settings of the engine owned by the calling thread (``layers``: the target's)."""
    _settings.kv_pool = kv_pool
    _settings.layers = layers


def expect_tokens(tokens: int | None) -> None:
    """How many tokens the next decode on this thread may hold at once (prompt, new tokens
    and one tree): a shared pool is sized for them at its first growth, not grown (and
    copied) over and over."""
    _settings.expected_tokens = tokens


def set_checkpoint(check: Callable[[], None] | None) -> None:
    """The deadline check run at every decoding step on the calling thread (None: none)."""
    _settings.check = check


def checkpoint() -> None:
    """Raise :class:`EngineTimeout` when the calling thread's job is past its deadline."""
    check = getattr(_settings, "check", None)
    if check is not None:
        check()


def install(engine_module: Any) -> None:
    """Put the checkpointed sampler and the shared KV pool into JetSpec's engine module.

    Idempotent; a JetSpec without these names (another version, the test fake) is left
    as it is.
    """
    with _install_lock:
        sample = getattr(engine_module, "sample", None)
        if sample is not None and not getattr(sample, "_arcmemo_checkpointed", False):
            engine_module.sample = _checkpointed(sample)
        cache_class = getattr(engine_module, "PagedKVCache", None)
        if cache_class is not None and not getattr(cache_class, "_arcmemo_shared_pool", False):
            engine_module.PagedKVCache = shared_pool_class(cache_class)


def _checkpointed(sample: Callable[..., Any]) -> Callable[..., Any]:
    def checked_sample(*args: Any, **kwargs: Any) -> Any:
        checkpoint()
        return sample(*args, **kwargs)

    checked_sample._arcmemo_checkpointed = True  # type: ignore[attr-defined]
    return checked_sample


class DeadlineDrafter:
    """A tree drafter that checks the deadline before every draft (once per verify round).

    Everything else (``reset_cache``, ``block_size``, ...) is the wrapped drafter's.
    """

    def __init__(self, drafter: Any) -> None:
        self.inner = drafter

    def propose_logits(self, *args: Any, **kwargs: Any) -> Any:
        checkpoint()
        return self.inner.propose_logits(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def shared_pool_class(base: Any) -> type:
    """A subclass of JetSpec's ``PagedKVCache`` whose layers share one pool tensor pair."""
    import torch

    class SharedPoolKVCache(base):
        """``PagedKVCache`` with one key and one value pool tensor indexed by every layer.

        Active for single-sequence caches built on a thread configured with
        ``kv_pool=shared``; otherwise exactly JetSpec's class.
        """

        _arcmemo_shared_pool = True
        # JetSpec's own attributes, set by its __init__ and first append
        _num_blocks: int
        _num_heads: int | None
        _head_dim: int | None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._layers_share = (
                getattr(_settings, "kv_pool", "upstream") == "shared" and self._is_single_seq
            )
            self._exact_growth = False

        def _ensure_layer(self, layer_idx: int, key_states: Any) -> None:
            if not self._layers_share or layer_idx in self._kpool:
                super()._ensure_layer(layer_idx, key_states)
                return
            if self._num_heads is None:
                self._num_heads = key_states.shape[1]
                self._head_dim = key_states.shape[-1]
            if self._kpool:
                first = next(iter(self._kpool))
                self._kpool[layer_idx] = self._kpool[first]
                self._vpool[layer_idx] = self._vpool[first]
                return
            shape = (self._num_blocks, self._block_size, self._num_heads, self._head_dim)
            self._kpool[layer_idx] = torch.zeros(shape, dtype=self.dtype, device=self.device)
            self._vpool[layer_idx] = torch.zeros(shape, dtype=self.dtype, device=self.device)

        def _grow_pool(self, extra_blocks: int) -> None:
            if not self._layers_share or not self._kpool:
                super()._grow_pool(extra_blocks)
                return
            if self._pool_frozen:
                raise RuntimeError(
                    "PagedKVCache pool is frozen; late growth would relocate the pool"
                )
            if not self._exact_growth:
                # On-demand growth (one block per layer every block_size tokens) would copy
                # the whole pool each time: size it for the whole decode at once, and then
                # grow by an eighth at least.
                layers = getattr(_settings, "layers", None) or len(self._kpool)
                expected = getattr(_settings, "expected_tokens", None) or 0
                planned = layers * (math.ceil(expected / self._block_size) + 1)
                extra_blocks = max(
                    extra_blocks, planned - self._num_blocks, math.ceil(self._num_blocks / 8)
                )
            old = self._num_blocks
            first = next(iter(self._kpool))
            shape = (extra_blocks, self._block_size, self._num_heads, self._head_dim)
            pools = []
            for pool in (self._kpool[first], self._vpool[first]):
                grown = torch.zeros(
                    (old + extra_blocks, *shape[1:]), dtype=self.dtype, device=self.device
                )
                grown[:old].copy_(pool)
                pools.append(grown)
            for layer_idx in self._kpool:
                self._kpool[layer_idx], self._vpool[layer_idx] = pools
            self._num_blocks = old + extra_blocks
            self._free_blocks.extend(range(old, self._num_blocks))

        def reserve_capacity(
            self,
            total_tokens: int,
            block_table_tokens: int | None = None,
            extra_shared_blocks: int = 0,
        ) -> None:
            if self._layers_share and extra_shared_blocks > 0:
                self._separate_layers()
            self._exact_growth = True
            try:
                super().reserve_capacity(
                    total_tokens,
                    block_table_tokens=block_table_tokens,
                    extra_shared_blocks=extra_shared_blocks,
                )
            finally:
                self._exact_growth = False

        def _separate_layers(self) -> None:
            """Back to one tensor per layer (for blocks that every layer uses at once)."""
            for layer_idx in list(self._kpool):
                self._kpool[layer_idx] = self._kpool[layer_idx].clone()
                self._vpool[layer_idx] = self._vpool[layer_idx].clone()
            self._layers_share = False

        def pool_bytes(self) -> int:
            """Bytes held by the distinct pool tensors of this cache."""
            distinct = {id(t): t for t in (*self._kpool.values(), *self._vpool.values())}
            return sum(t.numel() * t.element_size() for t in distinct.values())

    SharedPoolKVCache.__name__ = SharedPoolKVCache.__qualname__ = "SharedPoolKVCache"
    return SharedPoolKVCache
