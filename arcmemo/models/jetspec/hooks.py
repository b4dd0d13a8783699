"""The two places where arcmemo reaches into a running JetSpec engine.

* **The KV pool.** JetSpec's ``PagedKVCache`` (one sequence) hands block ids out of one free
  list shared by all layers, but gives every layer its own pool tensor indexed by those
  ids, so each layer's tensor spans the blocks of *all* layers: a model of ``L`` layers
  holds ``L x L`` blocks per 16 tokens, ``L`` times the KV it needs (28x for Qwen3-0.6B,
  36x for Qwen3-8B). A block id belongs to one layer at a time, so one tensor can serve
  every layer: :func:`shared_pool_class` keeps a single key and a single value tensor that
  all layers index (``kv_pool=shared``, the default). The logical-KV ("nogather")
  backends give every layer the *same* round block ids, which one shared tensor cannot
  hold; for them the cache keeps one tensor per layer and gives every layer the *same*
  block ids for the prompt too (a block id is then a position range of all layers, as in
  vLLM), so each tensor spans one layer's blocks: ``L`` times the KV, not ``L x L``
  (JetSpec's pool there: about 3 MB per prompt token of Qwen3-0.6B, 28x its KV).
* **The verify rounds' blocks.** On those backends JetSpec leases fresh blocks for every
  verify round and frees none until the decode ends (the accepted tokens' keys and values
  stay where the verify wrote them), so it reserves blocks for every round the decode could
  take, up front: ``(new tokens + depth + 1) x ceil(tree bucket / 16)`` blocks of every
  layer, about 7 GiB of Qwen3-0.6B at 2,048 new tokens. With the ``round_ring`` option set
  (off by default: not yet measured on a GPU), the cache reserves a ring of that many
  rounds' blocks plus dense blocks for the accepted tokens, and when the
  ring runs low, between two rounds, moves the accepted tokens' keys and values into the
  dense blocks, points the engine's window at them and returns the rounds' blocks
  (:meth:`compact`): the reservation then grows with the tokens kept, not the rounds taken.
* **A checkpoint per decoding step**, for request timeouts that start when the engine
  starts the request: the engine's sampler (called once per plain decoding step and at
  prefill) and the drafter (called once per verify round) check the current job's
  deadline and raise :class:`EngineTimeout` past it.

* **Prefill that moves fewer bytes.** JetSpec's engine prefills the prompt through the same
  forward as a verify round: the model's lm_head runs over every prompt position (at 8,000
  tokens and Qwen3's 151,936-token vocabulary, 2.4 GB of bf16 logits of which the engine
  reads the last row), and on the paged-kernel backends the prompt's causal attention runs
  through the tree-verify kernel, built for a few dozen query rows. :func:`trim_prefill_logits`
  asks JetSpec's own ``ModelRunner.forward`` for the last position's logits only when the
  cache is empty (a prefill: the engine then samples ``logits[:, -1:]``), and the cache
  below hands a prefill's own keys and values back to attention as dense tensors (the
  prompt is the whole context then), so JetSpec's attention function takes its SDPA
  fallback (flash attention) instead of the kernel. The pool is written the same way.

The pool and checkpoint are module-level replacements inside ``jetspec.inference_engine.engine``,
configured per thread (each engine lives on its own worker thread), so engines with other settings,
or JetSpec used outside arcmemo's workers, behave as upstream. Only imported on a worker
thread, after torch and jetspec.
"""

from __future__ import annotations

import inspect
import math
import threading
from collections.abc import Callable
from typing import Any

_settings = threading.local()
_install_lock = threading.Lock()


class EngineTimeout(Exception):
    """A decode ran past its deadline (or was abandoned by its caller) and was stopped."""


def configure_thread(
    *,
    kv_pool: str,
    layers: int | None = None,
    lean: bool = True,
    logical_kv: bool = False,
    round_blocks: int | None = None,
    round_ring: int = 0,
) -> None:
    """Settings of the engine owned by the calling thread (``layers``: the target's;
    ``lean``: the lean prefill, block bookkeeping and pool attention described above;
    ``logical_kv``: the engine's backend is a logical-KV ("nogather") one;
    ``round_blocks``: the blocks one verify round leases there; ``round_ring``: the rounds
    whose blocks are kept between two compactions, 0 for none)."""
    _settings.kv_pool = kv_pool
    _settings.layers = layers
    _settings.lean = lean
    _settings.logical_kv = logical_kv
    _settings.round_blocks = round_blocks
    _settings.round_ring = round_ring


def trim_prefill_logits(runner: Any) -> bool:
    """Make ``runner.forward`` (JetSpec's ``ModelRunner``) compute the last position's logits
    only for a prefill (more than one new token into an empty cache, no attention mask).

    Every other call (plain steps, tree verifies, batched forwards) is passed through as it
    is. Returns whether the runner was wrapped (False for a runner without that option).
    """
    forward = getattr(runner, "forward", None)
    if forward is None or getattr(forward, "_arcmemo_trimmed", False):
        return False
    try:
        parameters = inspect.signature(forward).parameters
    except (TypeError, ValueError):
        return False
    if "last_position_logits_only" not in parameters:
        return False

    def trimmed_forward(
        input_ids: Any, past_key_values: Any, position_ids: Any = None, **kwargs: Any
    ) -> Any:
        if (
            input_ids.shape[-1] > 1
            and kwargs.get("attention_mask") is None
            and past_key_values is not None
            and past_key_values.get_seq_length() == 0
        ):
            kwargs["last_position_logits_only"] = True
        return forward(input_ids, past_key_values, position_ids, **kwargs)

    trimmed_forward._arcmemo_trimmed = True  # type: ignore[attr-defined]
    runner.forward = trimmed_forward
    return True


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


def install(engine_module: Any, *, compaction: bool = False) -> None:
    """Put the checkpointed sampler and the shared KV pool into JetSpec's engine module, and
    the lean pool attention under its paged tree-attention op (when triton is there).

    Idempotent; a JetSpec without these names (another version, the test fake) is left
    as it is. ``compaction`` also wraps the logical-KV round buffers' slot staging, where
    the cache compacts the rounds' blocks (until an engine asks for it, they stay JetSpec's).
    """
    with _install_lock:
        try:
            from jetspec.inference_engine import paged_tree_attn as kernel_module
        except ImportError:  # no triton (CPU), or a JetSpec laid out otherwise
            kernel_module = None
        kernel = getattr(kernel_module, "paged_tree_attn", None)
        if kernel is not None and not getattr(kernel, "_arcmemo_pool_attention", False):
            # JetSpec's custom op imports this name at every call (and at graph capture)
            kernel_module.paged_tree_attn = _pool_attention(kernel)
        sample = getattr(engine_module, "sample", None)
        if sample is not None and not getattr(sample, "_arcmemo_checkpointed", False):
            engine_module.sample = _checkpointed(sample)
        cache_class = getattr(engine_module, "PagedKVCache", None)
        if cache_class is not None and not getattr(cache_class, "_arcmemo_shared_pool", False):
            engine_module.PagedKVCache = shared_pool_class(cache_class)
        buffers = getattr(engine_module, "_LogicalRoundBuffers", None)
        stage = getattr(buffers, "stage_slots", None)
        if (
            compaction
            and buffers is not None
            and stage is not None
            and not getattr(stage, "_arcmemo_compacting", False)
        ):
            buffers.stage_slots = _compacting(stage)


def _compacting(stage_slots: Callable[..., Any]) -> Callable[..., Any]:
    """JetSpec stages a round's slots at window position ``wlen`` (the tokens accepted so
    far) after it leased the round's blocks: the one point between two rounds where the
    host knows the window's length. The cache that leased them may compact first."""

    def staged(buffers: Any, wlen: int, *args: Any, **kwargs: Any) -> Any:
        cache = getattr(_settings, "compacting", None)
        if cache is not None:
            cache.compact(buffers.slots, int(wlen))
        return stage_slots(buffers, wlen, *args, **kwargs)

    staged._arcmemo_compacting = True  # type: ignore[attr-defined]
    return staged


def record_top2(record: list[Any] | None) -> None:
    """Append the two largest logits of every row the engine samples on this thread to
    ``record`` (device tensors; None: stop). For where greedy tokens part from another
    implementation's: how near a tie the choice was."""
    _settings.top2 = record


def _checkpointed(sample: Callable[..., Any]) -> Callable[..., Any]:
    def checked_sample(*args: Any, **kwargs: Any) -> Any:
        checkpoint()
        record = getattr(_settings, "top2", None)
        if record is not None and args:
            record.append(args[0][..., -1, :].float().topk(2, dim=-1).values.reshape(-1, 2)[0])
        return sample(*args, **kwargs)

    checked_sample._arcmemo_checkpointed = True  # type: ignore[attr-defined]
    return checked_sample


# Keys per chunk of the lean pool attention: each (chunk, KV head) is one block of work for
# the attention kernel, so a long context is spread over the whole GPU (flash-decoding).
POOL_ATTENTION_CHUNK = 256


def _pool_attention(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """JetSpec's paged tree-attention kernel, or, for one sequence on a lean thread, the
    same attention split over chunks of the context.

    The kernel launches one program per (16 query rows, KV head): a decode step of a model
    with 8 KV heads runs 8 programs, each walking the whole context serially, so decoding
    slows with context (Qwen3-0.6B: 140 tok/s at 1,000 prompt tokens, 42 at 8,000). Here
    the keys of the block table are gathered (the whole table: fixed shapes, so CUDA graphs
    capture it; positions past the sequence are masked), cut into chunks of
    ``POOL_ATTENTION_CHUNK`` keys, attended per (chunk, KV head) by torch's memory-efficient
    attention with its log-sum-exp, and the chunks merged by their log-sum-exps
    (:func:`merge_chunks`). The bias is the causal mask over the query section plus the
    tree bias, as the kernel applies. The query heads that share a KV head become rows of
    one query, so grouped-query attention reads each key once. (Before: fp32 matrix
    products over all keys at once; their second product ran as a skinny GEMM of 277 us a
    layer at 8,000 tokens, 54% of the GPU time of a Qwen3-0.6B decode step.)
    """
    import torch

    constants: dict[tuple[Any, ...], Any] = {}

    def positions(width: int, padded: int, block_size: int, device: Any) -> tuple[Any, Any]:
        key = (width, padded, block_size, str(device))
        if key in constants:
            return constants[key]
        position = torch.arange(padded, device=device)
        made = (position, position[:width] % block_size)
        # made during a CUDA-graph capture, they would hold values only once it replays
        if not (position.is_cuda and torch.cuda.is_current_stream_capturing()):
            constants[key] = made
        return made

    def pool_attention(
        q: Any,
        k_pool: Any,
        v_pool: Any,
        block_table: Any,
        cu_seqlens_q: Any,
        seq_lens_k: Any,
        qq_bias: Any,
        scale: float,
        num_queries_per_kv: int,
        block_size: int,
        logical_kv_slots: Any = None,
        logical_kv_starts: Any = None,
        logical_kv_lens: Any = None,
    ) -> Any:
        if not getattr(_settings, "lean", False) or seq_lens_k.shape[0] != 1:
            return kernel(
                q, k_pool, v_pool, block_table, cu_seqlens_q, seq_lens_k, qq_bias, scale,
                num_queries_per_kv, block_size, logical_kv_slots, logical_kv_starts,
                logical_kv_lens,
            )  # fmt: skip
        rows, query_heads, dim = q.shape
        kv_heads = k_pool.shape[2]
        group = num_queries_per_kv
        width = block_table.shape[1] * block_size
        chunks = max(1, math.ceil(width / POOL_ATTENTION_CHUNK))
        padded = chunks * POOL_ATTENTION_CHUNK
        position, in_block = positions(width, padded, block_size, q.device)
        slot = block_table[0].long().repeat_interleave(block_size) * block_size + in_block
        if logical_kv_slots is not None:  # the nogather backends' remapped key range
            offset = position[:width] - logical_kv_starts[0].long()
            remapped = (offset >= 0) & (offset < logical_kv_lens[0].long())
            index = offset.clamp(0, logical_kv_slots.shape[1] - 1)
            slot = torch.where(remapped, logical_kv_slots[0].long()[index], slot)
        if padded > width:  # slot 0 for the padding: read, and masked below
            slot = torch.nn.functional.pad(slot, (0, padded - width))
        keys = k_pool.reshape(-1, kv_heads, dim).index_select(0, slot)
        values = v_pool.reshape(-1, kv_heads, dim).index_select(0, slot)
        context = seq_lens_k[0].long() - rows
        row = torch.arange(rows, device=q.device)
        visible = position[None, :] <= context + row[:, None]  # (rows, padded)
        bias = torch.zeros((rows, padded), device=q.device, dtype=torch.float32)
        bias = bias.masked_fill(~visible, float("-inf"))
        if qq_bias is not None:  # the tree's ancestor mask over the query section
            offset = position - context
            node = (offset >= 0) & (offset < rows)
            tree = qq_bias.float()[:, offset.clamp(0, rows - 1)]
            bias = bias + torch.where(node[None, :], tree, torch.zeros_like(tree))
        # query row g * rows + r: query head (kv head, g) of row r
        query = q.reshape(rows, kv_heads, group, dim).permute(1, 2, 0, 3)
        query = query.reshape(1, kv_heads, group * rows, dim).expand(chunks, -1, -1, -1)
        bias = bias.to(q.dtype).repeat(group, 1)  # (group * rows, padded)
        bias = bias.view(group * rows, chunks, POOL_ATTENTION_CHUNK).transpose(0, 1)
        seen = torch.isfinite(bias).any(dim=-1).unsqueeze(1)  # (chunks, 1, group * rows)
        shape = (chunks, POOL_ATTENTION_CHUNK, kv_heads, dim)
        out, lse = attend_chunks(
            query.contiguous(),
            keys.view(shape).transpose(1, 2),
            values.view(shape).transpose(1, 2),
            bias.unsqueeze(1).expand(-1, kv_heads, -1, -1),
            scale,
        )
        merged = merge_chunks(out, lse, seen)  # (kv_heads, L, dim)
        merged = merged.view(kv_heads, group, rows, dim).permute(2, 0, 1, 3)
        # contiguous, as the custom op's fake (empty_like(q)) promises the compiled stack
        return merged.reshape(rows, query_heads, dim).to(q.dtype).contiguous()

    pool_attention._arcmemo_pool_attention = True  # type: ignore[attr-defined]
    return pool_attention


def attend_chunks(query: Any, keys: Any, values: Any, bias: Any, scale: float) -> Any:
    """Attention of each chunk on its own, with its log-sum-exp: ``query`` (chunks, heads,
    rows, dim), ``keys``/``values`` (chunks, heads, keys, dim), ``bias`` (chunks, heads,
    rows, keys) added to the scaled scores. Returns ``out`` (chunks, heads, rows, dim) in
    ``query``'s dtype and ``lse`` (chunks, heads, rows) in fp32.

    On CUDA: torch's memory-efficient attention kernel. Elsewhere (it has no CPU kernel): the
    same contract in plain fp32 torch, so the CPU tests exercise everything around the
    kernel. That includes the kernel's answer for a row with no visible key in the chunk:
    PyTorch's ``mem_eff_attention/kernel_forward.h`` sets such a row's running maximum to
    0 and its sum of exponentials to 1, so it reports a log-sum-exp of 0 (finite) and an
    output of 0 (older releases report -inf); :func:`merge_chunks` must not trust either.
    """
    import torch

    if query.is_cuda:
        out, lse = torch.ops.aten._scaled_dot_product_efficient_attention(
            query, keys, values, bias, True, scale=scale
        )[:2]
        return out, lse[..., : query.shape[-2]]  # the kernel pads rows to a multiple of 32
    scores = torch.einsum("chrd,chkd->chrk", query.float(), keys.float()) * scale
    scores = scores + bias.float()
    empty = ~torch.isfinite(scores).any(dim=-1)  # (chunks, heads, rows)
    scores = scores.masked_fill(empty[..., None], 0.0)
    lse = torch.logsumexp(scores, dim=-1).masked_fill(empty, 0.0)
    weights = torch.exp(scores - lse[..., None]).masked_fill(empty[..., None], 0.0)
    out = torch.einsum("chrk,chkd->chrd", weights, values.float())
    return out.to(query.dtype), lse


def merge_chunks(out: Any, lse: Any, seen: Any = None) -> Any:
    """Attention over all keys from attention over chunks of them.

    ``out`` (chunks, heads, rows, dim): each chunk's softmax-weighted values; ``lse``
    (chunks, heads, rows): each chunk's log-sum-exp of scores; ``seen`` (broadcast to
    ``lse``): whether the chunk has a visible key for that row. A chunk without one is left
    out whatever the kernel reports for it: the kernel reports a log-sum-exp of 0 there
    (:func:`attend_chunks`), which would take a share of the softmax mass and pull
    attention over a short context towards zero, the more so the wider the block table
    (a CUDA-graphed step attends over the whole table). Each other chunk counts by its
    share of the total softmax mass, in fp32. Returns (heads, rows, dim) in fp32.
    """
    import torch

    lse = lse.float()
    visible = torch.isfinite(lse)
    if seen is not None:
        visible = visible & seen
    top = torch.where(visible, lse, torch.full_like(lse, float("-inf"))).amax(dim=0)
    weight = torch.where(visible, torch.exp(lse - top), torch.zeros_like(lse))
    values = torch.where(
        visible[..., None], out.float(), torch.zeros_like(out, dtype=torch.float32)
    )
    return (weight[..., None] * values).sum(dim=0) / weight.sum(dim=0)[..., None]


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
        """``PagedKVCache`` with one key and one value pool tensor indexed by every layer,
        and a prefill that attends over its own dense keys and values.

        Active for single-sequence caches built on a thread configured with
        ``kv_pool=shared`` (and ``lean``); otherwise exactly JetSpec's class.
        """

        _arcmemo_shared_pool = True
        # JetSpec's own attributes, set by its __init__ and first append
        _num_blocks: int
        _num_heads: int | None
        _head_dim: int | None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            shared = getattr(_settings, "kv_pool", "upstream") == "shared" and self._is_single_seq
            self._lean = bool(getattr(_settings, "lean", False))
            # logical-KV backends: one tensor per layer, one block id for all layers
            self._ids_shared = (
                shared and self._lean and bool(getattr(_settings, "logical_kv", False))
            )
            self._layers_share = shared and not self._ids_shared
            self._exact_growth = False
            self._ring = int(getattr(_settings, "round_ring", 0) or 0)
            round_blocks = getattr(_settings, "round_blocks", None)
            on = self._ids_shared and self._ring > 0
            self._round_blocks: int = int(round_blocks or 0) if on else 0
            self.compactions = 0
            self._forget_rounds()

        def _forget_rounds(self) -> None:
            self._leased: list[list[int]] = []  # each round's blocks since the last compaction
            self._dense: list[int] = []  # blocks of the accepted tokens, in window order
            self._moved = 0  # window positions already in the dense blocks
            self._largest_round = self._round_blocks

        def reset(self) -> None:
            super().reset()
            self._forget_rounds()

        def reserve_logical_slots(self, n_nodes: int) -> Any:
            node_blocks, round_blocks = super().reserve_logical_slots(n_nodes)
            # the round's slots are staged next, on this thread: by this cache, if it compacts
            _settings.compacting = self if self._round_blocks else None
            if self._round_blocks:
                self._leased.append(round_blocks)
                self._largest_round = max(self._largest_round, len(round_blocks))
            return node_blocks, round_blocks

        def compact(self, slots: Any, accepted: int) -> None:
            """When fewer free blocks are left than two rounds take: copy the keys and values
            of window positions not yet moved (up to ``accepted``) from the round blocks into
            the dense blocks, point ``slots`` (the engine's window) at them, and free every
            leased round block but the round just leased (its slots are staged next)."""
            if len(self._free_blocks) >= 2 * self._largest_round or len(self._leased) < 2:
                return
            size = self._block_size
            start = self._moved
            missing = self._blocks_for(accepted) - len(self._dense)
            if missing > 0:
                self._dense += [int(b) for b in self.allocate(missing).tolist()]
            if accepted > start:
                position = torch.arange(start, accepted)
                dense = torch.tensor(self._dense, dtype=torch.long)[position // size]
                target = (dense * size + position % size).to(self.device)
                source = slots[0, start:accepted]
                for pools in (self._kpool, self._vpool):
                    for pool in pools.values():  # one tensor per layer here
                        flat = pool.view(-1, *pool.shape[2:])
                        flat.index_copy_(0, target, flat.index_select(0, source))
                slots[0, start:accepted] = target
                self._moved = accepted
            current = self._leased.pop()
            self._free_blocks += [b for blocks in self._leased for b in blocks]
            self._leased = [current]
            self.compactions += 1

        def update(
            self, key_states: Any, value_states: Any, layer_idx: int, cache_kwargs: Any = None
        ) -> Any:
            # A prefill (several tokens into an empty single-sequence cache, no tree bias)
            # attends over exactly its own keys and values: hand them back dense, so
            # attention runs as SDPA's causal kernel, not the paged tree kernel nor over a
            # copy gathered back from the pool. The pool is written as before.
            meta = getattr(self, "_jetspec_attn_meta", None) or {}
            prefill = (
                self._lean
                and self._is_single_seq
                and key_states.shape[0] == 1
                and key_states.shape[-2] > 1
                and meta.get("qq_bias") is None
                and self.get_seq_length(layer_idx) == 0
            )
            result = super().update(key_states, value_states, layer_idx, cache_kwargs)
            return (key_states, value_states) if prefill else result

        def append(
            self,
            key_states: Any,
            value_states: Any,
            layer_idx: int,
            block_ids: Any = None,
            seq_id: int | None = None,
        ) -> int:
            if not self._ids_shared or block_ids is not None:
                return int(super().append(key_states, value_states, layer_idx, block_ids, seq_id))
            # Layer-shared ids: the blocks that hold positions [start, start + n) of this
            # layer are the ones another layer already took for them; only blocks past
            # every layer's table are new. Each layer still writes its own tensor.
            seq_id = self._default_seq_id if seq_id is None else seq_id
            self._ensure_layer(layer_idx, key_states)
            self._ensure_seq(seq_id)
            new = key_states.shape[-2]
            start = self.get_seq_length(layer_idx, seq_id=seq_id)
            if new == 0:
                return start
            size = self._block_size
            tables = self._seq_block_tables[seq_id]
            table = tables.setdefault(layer_idx, [])
            missing = -(-(start + new) // size) - len(table)
            if missing > 0:
                longest = max(tables.values(), key=len)
                taken = longest[len(table) : len(table) + missing]
                fresh = self.allocate(missing - len(taken)).tolist() if missing > len(taken) else []
                for block in (*taken, *fresh):
                    self._incref_block(int(block))
                table.extend([*taken, *(int(b) for b in fresh)])
            positions = start + torch.arange(new, device=self.device)
            blocks = torch.tensor(table, dtype=torch.long, device=self.device)[positions // size]
            offsets = positions % size
            self._kpool[layer_idx][blocks, offsets] = key_states[0].transpose(0, 1)
            self._vpool[layer_idx][blocks, offsets] = value_states[0].transpose(0, 1)
            self._seq_filled[seq_id][layer_idx] = (start + new - 1) % size + 1
            self._touch(seq_id)
            return start + new

        def allocate(self, num_blocks: int) -> Any:
            # JetSpec pops the free list's head one block at a time (each pop shifts the
            # whole list) and checks every claimed block against the list: quadratic in
            # the pool's size, 0.7 s of an 8,000-token prefill of Qwen3-0.6B. Same blocks,
            # same order, one slice.
            if not self._lean or num_blocks <= 0 or self._num_heads is None:
                return super().allocate(num_blocks)
            if len(self._free_blocks) < num_blocks:
                if not self._is_single_seq:
                    return super().allocate(num_blocks)  # JetSpec's eviction signal
                self._grow_pool(num_blocks - len(self._free_blocks))
            ids = self._free_blocks[:num_blocks]
            del self._free_blocks[:num_blocks]
            return torch.tensor(ids, dtype=torch.long, device=self.device)

        def _incref_block(self, block_id: int) -> None:
            if not self._lean:
                super()._incref_block(block_id)
                return
            # blocks come from allocate() or a caller's reservation, both off the free list
            self._block_refcounts[block_id] = self._block_refcounts.get(block_id, 0) + 1

        def reserve_tree_slots(
            self,
            seq_id: int | None,
            n_nodes: int,
            past_len: int,
            block_table_width: int | None = None,
        ) -> Any:
            # A plain decoding step of the compiled backends (one node, fixed table
            # width). JetSpec rebuilds every layer's block table from its Python list and
            # pads it on the device each step (about 5 launches a layer, growing with the
            # table: 3 ms a step at 1,000 prompt tokens of Qwen3-0.6B, 7 ms at 8,000). Same
            # bookkeeping and results here, the tables uploaded at once when a block is
            # added, the slots in one upload.
            if not (
                self._lean
                and self._is_single_seq
                and n_nodes == 1
                and block_table_width is not None
            ):
                return super().reserve_tree_slots(
                    seq_id, n_nodes, past_len, block_table_width=block_table_width
                )
            seq_id = self._default_seq_id if seq_id is None else seq_id
            self._ensure_seq(seq_id)
            size = self._block_size
            layer_ids = sorted(self._kpool)
            tables = self._seq_block_tables[seq_id]
            filled = self._seq_filled[seq_id]
            full = [
                not tables.setdefault(layer, []) or filled.setdefault(layer, 0) >= size
                for layer in layer_ids
            ]
            # layer-shared ids: one new block serves every layer that needs one
            count = (1 if self._ids_shared else sum(full)) if any(full) else 0
            new_blocks = self.allocate(count).tolist() if count else []
            for layer, needs in zip(layer_ids, full, strict=True):
                if needs:
                    block = int(new_blocks[0] if self._ids_shared else new_blocks.pop(0))
                    self._incref_block(block)
                    tables[layer].append(block)
                filled[layer] = past_len % size + 1
            # the uploaded tables stand while no layer's table has changed at its end
            key = (seq_id, block_table_width, *((len(tables[i]), tables[i][-1]) for i in layer_ids))
            cached = getattr(self, "_lean_tables", None)
            if cached is None or cached[0] != key:
                rows = []
                for layer in layer_ids:
                    table = tables[layer]
                    if len(table) > block_table_width:
                        raise ValueError(
                            f"block_table for layer {layer} has {len(table)} blocks > "
                            f"requested fixed width {block_table_width}"
                        )
                    rows.append(table + [0] * (block_table_width - len(table)))
                device_tables = torch.tensor(rows, dtype=torch.int32).to(self.device)
                cached = self._lean_tables = (key, [t.view(1, -1) for t in device_tables])
            index = past_len // size
            slots = [tables[layer][index] for layer in layer_ids]
            slots += [past_len % size, past_len + 1]
            staged = torch.tensor(slots, dtype=torch.long).to(self.device)
            node_blks = [staged[i : i + 1] for i in range(len(layer_ids))]
            node_offs = [staged[-2:-1]] * len(layer_ids)
            self._touch(seq_id)
            return cached[1], node_blks, node_offs, staged[-1:].to(torch.int32)

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
            if not (self._layers_share or self._ids_shared) or not self._kpool:
                super()._grow_pool(extra_blocks)
                return
            if self._pool_frozen:
                raise RuntimeError(
                    "PagedKVCache pool is frozen; late growth would relocate the pool"
                )
            if not self._exact_growth:
                # On-demand growth (one block per layer every block_size tokens) would copy
                # the whole pool each time: size it for the whole decode at once, and then
                # grow by an eighth at least. Layer-shared ids need one id per block of
                # positions, not one per layer.
                layers = 1 if self._ids_shared else None
                layers = layers or getattr(_settings, "layers", None) or len(self._kpool)
                expected = getattr(_settings, "expected_tokens", None) or 0
                planned = layers * (math.ceil(expected / self._block_size) + 1)
                extra_blocks = max(
                    extra_blocks, planned - self._num_blocks, math.ceil(self._num_blocks / 8)
                )
            old = self._num_blocks
            grown: dict[Any, Any] = {}  # a tensor of several layers is grown once
            for pools in (self._kpool, self._vpool):
                for layer_idx, pool in pools.items():
                    if id(pool) not in grown:
                        bigger = pool.new_zeros((old + extra_blocks, *pool.shape[1:]))
                        bigger[:old].copy_(pool)
                        grown[id(pool)] = bigger
                        del bigger
                    pools[layer_idx] = grown[id(pool)]
            self._num_blocks = old + extra_blocks
            self._free_blocks.extend(range(old, self._num_blocks))

        def reserve_capacity(
            self,
            total_tokens: int,
            block_table_tokens: int | None = None,
            extra_shared_blocks: int = 0,
        ) -> None:
            if self._ids_shared and self._num_heads is not None:
                # JetSpec counts one id per layer for every block of positions; here one id
                # serves all layers, and the logical rounds' layer-shared ids come on top
                table_tokens = total_tokens if block_table_tokens is None else block_table_tokens
                width = self._blocks_for(table_tokens) + 1
                self._reserved_per_layer = max(getattr(self, "_reserved_per_layer", 0), width)
                if self._round_blocks and extra_shared_blocks > 1:
                    # JetSpec asks for (new tokens + slack) rounds of round_blocks each, + 1:
                    # keep dense blocks for that many tokens and a ring of rounds instead
                    kept = math.ceil((extra_shared_blocks - 1) / self._round_blocks)
                    ring = self._ring * self._round_blocks + 1
                    extra_shared_blocks = min(extra_shared_blocks, self._blocks_for(kept) + ring)
                needed = self._blocks_for(total_tokens) + 1 + extra_shared_blocks
                if needed > self._num_blocks:
                    self._exact_growth = True
                    try:
                        self._grow_pool(needed - self._num_blocks)
                    finally:
                        self._exact_growth = False
                return
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
