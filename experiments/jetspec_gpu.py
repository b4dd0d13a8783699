"""JetSpec through arcmemo's provider on a GPU: equality, tokens/s, hook overhead, KV memory.

Builds randomly initialised Qwen3 targets (and random DFlash draft heads) in a folder, then
runs one of these through arcmemo's ``jetspec:`` provider (results as JSON under ``--out``):

``compare``
    the same prompts decoded plainly and speculatively for each configuration (backend x
    drafter), greedy outputs checked identical (fp32), tokens/s of both modes, peak memory.
``overhead``
    the engine called directly (``engine.generate`` / ``generate_tree`` with the bare
    drafter, CUDA-synchronised, on the worker thread) against the same request through the
    provider (``await provider.generate_mode``: template, tokenizer, queue, thread hop, the
    step checkpoints, stats), interleaved over many repetitions: the median of the paired
    ratios with a bootstrap 95% interval, and the provider's own cost per call in ms.
``memory``
    peak GPU memory above the weights while decoding prompts of several lengths, with
    JetSpec's KV pool (``kv_pool=upstream``) and arcmemo's shared one (``kv_pool=shared``).
``summary``
    the tables of all of the above, from their JSON files.

Random weights give no real speed-up (JetSpec's 4.6x-9.6x needs Qwen3-8B and its trained
head); the echo drafter shows the acceptance machinery, a random head the head path.

Exact recipe on an H200 (transformers 4.57.6 etc. as wheels in .whl, JetSpec's ``jetspec/``
folder from its source): see experiments/jetspec_gpu.sh.

The helpers ``write_tiny_qwen3`` and ``write_random_draft_head`` are also used by
tests/models/test_jetspec.py (CPU opt-in and GPU tests).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SPECIALS = ("<|im_start|>", "<|im_end|>", "<unk>", "<think>", "</think>")
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m.role }} {{ m.content }} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|im_start|> assistant "
    "{% if enable_thinking is defined and not enable_thinking %}<think> </think> {% endif %}"
    "{% endif %}"
)


def _prompt_words() -> list[str]:
    from arcmemo.models.jetspec.bench import DEFAULT_PROMPTS

    words = {"system", "user", "assistant", "be", "brief", "two", "plus"}
    for prompt in DEFAULT_PROMPTS:
        words.update(prompt.split())
    return sorted(words)


def write_tiny_qwen3(
    directory: Path,
    *,
    layers: int = 2,
    hidden: int = 64,
    vocab: int = 128,
    heads: int = 4,
    kv_heads: int = 2,
    intermediate: int | None = None,
    max_positions: int = 4096,
    head_dim: int | None = None,
    tie_word_embeddings: bool = False,
    rope_theta: float = 10000.0,
    dtype: str = "float32",
    seed: int = 0,
) -> str:
    """Save a random Qwen3 causal LM and a word-level tokenizer with a chat template.

    Built on the GPU when there is one (an 8B model initialised on the CPU takes minutes);
    saved in ``dtype``.
    """
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    directory.mkdir(parents=True, exist_ok=True)
    words = [*SPECIALS, *_prompt_words()]
    words += [f"w{i}" for i in range(max(0, vocab - len(words)))]
    token_ids = {word: i for i, word in enumerate(words[:vocab])}
    tokenizer = Tokenizer(models.WordLevel(token_ids, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="<unk>",
        eos_token="<|im_end|>",
        additional_special_tokens=["<|im_start|>"],
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(directory)

    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=intermediate or 2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim or hidden // heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=tie_word_embeddings,
        rope_theta=rope_theta,
        eos_token_id=token_ids["<|im_end|>"],
        bos_token_id=None,
        pad_token_id=None,
    )
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = Qwen3ForCausalLM(config)
    model.to(getattr(torch, dtype)).save_pretrained(directory)
    del model
    return str(directory)


def write_random_draft_head(
    directory: Path, target_dir: str, *, block_size: int = 8, seed: int = 1
) -> str:
    """Save a random one-layer DFlash draft head sized for the target in ``target_dir``."""
    import torch
    from jetspec.models.draft_head import DFlashDraftModel
    from transformers import Qwen3Config

    target = Qwen3Config.from_pretrained(target_dir)
    config = Qwen3Config(
        vocab_size=target.vocab_size,
        hidden_size=target.hidden_size,
        intermediate_size=target.intermediate_size,
        num_hidden_layers=1,
        num_attention_heads=target.num_attention_heads,
        num_key_value_heads=target.num_key_value_heads,
        head_dim=target.head_dim,
        max_position_embeddings=target.max_position_embeddings,
        tie_word_embeddings=False,
        block_size=block_size,
        num_target_layers=target.num_hidden_layers,
    )
    config.dflash_config = {
        "target_layer_ids": sorted({0, target.num_hidden_layers - 1}),
        "mask_token_id": target.vocab_size - 1,
        "causal_head": True,
    }
    torch.manual_seed(seed)
    DFlashDraftModel(config).save_pretrained(directory)
    return str(directory)


MODELS: dict[str, dict[str, Any]] = {
    # a tiny model with random weights: built in seconds, for checking that every path runs
    "small": {"layers": 4, "hidden": 256, "vocab": 512, "heads": 4, "kv_heads": 2},
    # Qwen3-0.6B's and Qwen3-8B's own configurations (config.json of Qwen/Qwen3-0.6B and
    # Qwen/Qwen3-8B): head dim 128, 8 KV heads, vocabulary 151,936; random weights, bf16.
    "qwen3-0.6b": {
        "layers": 28,
        "hidden": 1024,
        "vocab": 151936,
        "heads": 16,
        "kv_heads": 8,
        "head_dim": 128,
        "intermediate": 3072,
        "max_positions": 40960,
        "tie_word_embeddings": True,
        "rope_theta": 1000000.0,
        "dtype": "bfloat16",
    },
    "qwen3-8b": {
        "layers": 36,
        "hidden": 4096,
        "vocab": 151936,
        "heads": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "intermediate": 12288,
        "max_positions": 40960,
        "tie_word_embeddings": False,
        "rope_theta": 1000000.0,
        "dtype": "bfloat16",
    },
}
# The 8B shape's first 4 layers in fp32 (the whole model in fp32 is 30 GB of random weights
# to build): token equality with HF fp32 where bf16's near-ties are out of the way.
MODELS["qwen3-8b-4l-fp32"] = MODELS["qwen3-8b"] | {"layers": 4, "dtype": "float32"}
GIB = 2**30


def build_target(models_dir: Path, name: str) -> str:
    """The target ``name`` (built once per folder)."""
    target = models_dir / name
    if not (target / "config.json").is_file():
        write_tiny_qwen3(target, **MODELS[name])
    return str(target)


def build_models(models_dir: Path, name: str, tree_depth: int) -> tuple[str, str]:
    """The target ``name`` and a random draft head for it (built once per folder)."""
    target = Path(build_target(models_dir, name))
    head = models_dir / f"{name}-head{tree_depth + 1}"
    if not (head / "config.json").is_file():
        write_random_draft_head(head, str(target), block_size=tree_depth + 1)
    return str(target), str(head)


def _options(args: argparse.Namespace, backend: str, draft: str, **extra: str) -> dict[str, str]:
    options = {
        "draft": draft,
        "dtype": args.dtype,
        "device": args.device,
        "attn_backend": backend,
        "tree_depth": str(args.tree_depth),
        "budget": str(args.budget),
        "width": str(args.width),
    }
    if args.round_ring:
        options["round_ring"] = str(args.round_ring)
    return options | extra


def _write(path: Path, document: Any) -> None:
    from arcmemo.core.files import atomic_write_text

    atomic_write_text(path, json.dumps(document, indent=2) + "\n")


# -- compare: equality and tokens/s per configuration -----------------------------------------

# name: (attention backend, drafter kind, extra options); "head" drafts with a random head.
CONFIGS: dict[str, tuple[str, str, dict[str, str]]] = {
    "eager-head": ("triton_paged_tree", "head", {}),
    "eager-echo": ("triton_paged_tree", "echo", {}),
    "sdpa-echo": ("sdpa", "echo", {}),
    "sdpa-head": ("sdpa", "head", {}),
    "compiled-head": ("triton_paged_tree_compiled", "head", {}),
    "cudagraph-head": ("triton_paged_tree_cudagraph", "head", {"session": "true"}),
    "nogather-graphed": (
        "triton_paged_tree_cudagraph_nogather",
        "head",
        {"session": "true", "drafter": "graphed"},
    ),
}


def compare(args: argparse.Namespace) -> int:
    """Plain vs speculative for each ``--configs`` entry; exit 1 on any mismatch."""
    import torch

    from arcmemo.models.jetspec.bench import (
        DEFAULT_PROMPTS,
        format_result,
        repeat_prompts,
        run_generation_bench,
    )

    prompts = repeat_prompts(DEFAULT_PROMPTS, args.prompts)
    out_file = args.out / f"compare-{args.model}-{args.configs.replace(',', '+')}.json"
    results: list[dict[str, Any]] = []
    target, head = build_models(args.models_dir, args.model, args.tree_depth)
    for name in args.configs.split(","):
        backend, drafter, extra = CONFIGS[name]
        options = _options(args, backend, head if drafter == "head" else drafter, **extra)
        print(f"\n== {args.model} {name}: {backend} {drafter} {extra} {args.dtype}", flush=True)
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        started = time.perf_counter()
        record: dict[str, Any] = {"model": args.model, "config": name, "options": options}
        try:
            bench = asyncio.run(
                run_generation_bench(target, options, prompts, max_tokens=args.max_tokens)
            )
            print(format_result(bench), flush=True)
            record["bench"] = bench.model_dump()
        except Exception as error:  # keep measuring the other configurations
            record["error"] = f"{type(error).__name__}: {error}"
            print("FAILED:", record["error"], flush=True)
        record["wall_s"] = time.perf_counter() - started
        cuda = torch.cuda.is_available()
        record["peak_gib"] = torch.cuda.max_memory_allocated() / GIB if cuda else 0.0
        results.append(record)
        _write(out_file, {"args": _args(args), "results": results})
    return 1 if any("error" in r or not r["bench"]["identical"] for r in results) else 0


# -- overhead: the provider against the bare engine ----------------------------------------------


def _bootstrap_median(values: list[float], rounds: int = 2000) -> tuple[float, float]:
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds))
    return medians[int(0.025 * rounds)], medians[int(0.975 * rounds) - 1]


async def _overhead(provider: Any, prompts: list[str], max_tokens: int, reps: int) -> list[dict]:
    from arcmemo.models.base import GenerateParams, Message

    params = GenerateParams(max_tokens=max_tokens, temperature=0.0)
    rows = []
    for speculative in (False, True):

        def direct(loaded: Any, prompt: str, speculative: bool = speculative) -> tuple[int, float]:
            ids = loaded.encode(loaded.render_prompt([Message(role="user", content=prompt)]))
            sampling = loaded.sampling_params(params)
            loaded._synchronize()
            start = time.perf_counter()
            if speculative:
                result = loaded.engine.generate_tree(
                    ids,
                    loaded.drafter,
                    sampling_params=sampling,
                    **loaded.tree_kwargs(int(ids.shape[1]), sampling.max_new_tokens),
                )
            else:
                result = loaded.engine.generate(ids, sampling)
            loaded._synchronize()
            return len(result["token_ids"]), time.perf_counter() - start

        async def hooked(prompt: str, speculative: bool = speculative) -> tuple[int, float, float]:
            messages = [Message(role="user", content=prompt)]
            start = time.perf_counter()
            [completion] = await provider.generate_mode(messages, params, speculative=speculative)
            wall = time.perf_counter() - start
            return completion.usage.completion_tokens, wall, completion.stats["generation_s"]

        for prompt in prompts[:2]:  # warm both paths
            await provider.run_on_engine(lambda loaded, prompt=prompt: direct(loaded, prompt))
            await hooked(prompt)
        ratios, own_ms, same = [], [], True
        for rep in range(reps):
            prompt = prompts[rep % len(prompts)]
            first_direct = rep % 2 == 0  # alternate the order against drift
            if first_direct:
                tokens, direct_s = await provider.run_on_engine(
                    lambda loaded, prompt=prompt: direct(loaded, prompt)
                )
            hook_tokens, hook_s, engine_s = await hooked(prompt)
            if not first_direct:
                tokens, direct_s = await provider.run_on_engine(
                    lambda loaded, prompt=prompt: direct(loaded, prompt)
                )
            same = same and tokens == hook_tokens
            ratios.append(hook_s / direct_s)
            own_ms.append((hook_s - engine_s) * 1e3)
        low, high = _bootstrap_median(ratios)
        quartiles = statistics.quantiles(ratios, n=4)
        rows.append(
            {
                "mode": "speculative" if speculative else "plain",
                "reps": reps,
                "median_ratio": statistics.median(ratios),
                "ci95": [low, high],
                "iqr": [quartiles[0], quartiles[2]],
                "min_max": [min(ratios), max(ratios)],
                "provider_ms_median": statistics.median(own_ms),
                "same_token_counts": same,
            }
        )
        print(_overhead_line(rows[-1]), flush=True)
    return rows


def _overhead_line(row: dict) -> str:
    return (
        f"hook overhead ({row['mode']}, {row['reps']} paired reps): median "
        f"{(row['median_ratio'] - 1) * 100:+.2f}% (95% CI {(row['ci95'][0] - 1) * 100:+.2f}% .. "
        f"{(row['ci95'][1] - 1) * 100:+.2f}%; IQR {(row['iqr'][0] - 1) * 100:+.2f}% .. "
        f"{(row['iqr'][1] - 1) * 100:+.2f}%), provider's own time "
        f"{row['provider_ms_median']:.2f} ms/call"
    )


def overhead(args: argparse.Namespace) -> int:
    from arcmemo.models.jetspec import JetSpecProvider
    from arcmemo.models.jetspec.bench import DEFAULT_PROMPTS

    target, _ = build_models(args.models_dir, args.model, args.tree_depth)
    backend, drafter, extra = CONFIGS[args.configs.split(",")[0]]
    options = _options(args, backend, drafter, **extra)
    provider = JetSpecProvider.open(target, **options)
    try:
        rows = asyncio.run(_overhead(provider, list(DEFAULT_PROMPTS), args.max_tokens, args.reps))
    finally:
        asyncio.run(provider.aclose())
    _write(args.out / "overhead.json", {"args": _args(args), "options": options, "rows": rows})
    return 0 if all(r["same_token_counts"] for r in rows) else 1


# -- memory: peak above the weights per prompt length, upstream vs shared KV pool ----------------


def _memory_row(loaded: Any, words: int, max_tokens: int, speculative: bool) -> dict:
    from arcmemo.models.base import GenerateParams, Message

    torch = loaded.torch
    prompt = " ".join(f"w{i % 400}" for i in range(words))
    ids = loaded.encode(loaded.render_prompt([Message(role="user", content=prompt)]))
    sampling = loaded.sampling_params(GenerateParams(max_tokens=max_tokens, temperature=0.0))
    gc.collect()  # caches of earlier decodes live in reference cycles until collected
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    with _recorded_caches() as caches:
        result, seconds = loaded.decode(ids, sampling, speculative)
    peak = torch.cuda.max_memory_allocated() - base
    pools = {id(t): t for c in caches for t in (*c._kpool.values(), *c._vpool.values())}
    return {
        "prompt_tokens": int(ids.shape[1]),
        "generated": len(result["token_ids"]),
        "peak_above_weights_gib": peak / GIB,
        "kv_pool_gib": sum(t.numel() * t.element_size() for t in pools.values()) / GIB,
        "weights_gib": base / GIB,
        "decode_s": seconds,
    }


@contextlib.contextmanager
def _recorded_caches() -> Iterator[list[Any]]:
    """The KV caches the engine builds meanwhile (its module's PagedKVCache, wrapped)."""
    from jetspec.inference_engine import engine as engine_module

    caches: list[Any] = []
    original = engine_module.PagedKVCache

    class Recorded(original):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            caches.append(self)

    engine_module.PagedKVCache = Recorded
    try:
        yield caches
    finally:
        engine_module.PagedKVCache = original


def memory(args: argparse.Namespace) -> int:
    from arcmemo.models.jetspec import JetSpecProvider

    target, head = build_models(args.models_dir, args.model, args.tree_depth)
    rows = []
    for pool in ("upstream", "shared"):
        for config in args.configs.split(","):
            backend, drafter, extra = CONFIGS[config]
            options = _options(args, backend, head if drafter == "head" else drafter, **extra)
            provider = JetSpecProvider.open(target, **options | {"kv_pool": pool})
            try:
                for words in (int(w) for w in args.lengths.split(",")):
                    for speculative in (False, True):
                        row = asyncio.run(
                            provider.run_on_engine(
                                lambda loaded, w=words, s=speculative: _memory_row(
                                    loaded, w, args.max_tokens, s
                                )
                            )
                        )
                        row |= {"kv_pool": pool, "config": config, "speculative": speculative}
                        rows.append(row)
                        print(_memory_line(row), flush=True)
            finally:
                asyncio.run(provider.aclose())
            _write(args.out / "memory.json", {"args": _args(args), "rows": rows})
    return 0


def _memory_line(row: dict) -> str:
    mode = "speculative" if row["speculative"] else "plain"
    return (
        f"{row['config']:14} {mode:11} kv_pool={row['kv_pool']:8} prompt {row['prompt_tokens']:5} "
        f"tokens: peak above weights {row['peak_above_weights_gib']:7.3f} GiB, "
        f"KV pool {row['kv_pool_gib']:7.3f} GiB"
    )


# -- versus: JetSpec against Hugging Face generate, one process, exact shapes -------------------

# HF's two ways to decode: the default dynamic cache, and a static cache (one, sized for the
# longest prompt, reset between calls) with the decode step torch.compile'd by generate.
HF_CONFIGS = ("hf-dynamic", "hf-static-compile")
# JetSpec configurations of ``versus`` (plain; "spec" rows also with a random draft head).
PLAIN_CONFIGS: dict[str, tuple[str, dict[str, str]]] = {
    "eager": ("triton_paged_tree", {}),
    "cudagraph": ("triton_paged_tree_cudagraph", {}),
    # the same with the QKV and gate/up products fused (fewer, larger GEMMs a layer)
    "cudagraph-fused": ("triton_paged_tree_cudagraph", {"fuse_gemms": "true"}),
    "nogather-graphed": (
        "triton_paged_tree_cudagraph_nogather",
        {"session": "true", "drafter": "graphed"},
    ),
}


DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


def weight_bytes(shape: dict[str, Any]) -> int:
    """Bytes of weights one decode step reads: every layer's projections and norms, the
    final norm and the lm_head (the embedding matrix gives one row: not counted)."""
    hidden, layers = shape["hidden"], shape["layers"]
    head_dim = shape.get("head_dim") or hidden // shape["heads"]
    q, kv = shape["heads"] * head_dim, shape["kv_heads"] * head_dim
    intermediate = shape.get("intermediate") or 2 * hidden
    attention = hidden * q + 2 * hidden * kv + q * hidden + 2 * head_dim  # q/k norms
    layer = attention + 3 * hidden * intermediate + 2 * hidden  # MLP, two RMS norms
    parameters = layers * layer + hidden + shape["vocab"] * hidden
    return parameters * DTYPE_BYTES[shape.get("dtype", "float32")]


def step_bytes(shape: dict[str, Any], context: int) -> int:
    """The fewest bytes a batch-1 decode step at ``context`` tokens reads: the weights once
    and the keys and values of every layer over the context."""
    head_dim = shape.get("head_dim") or shape["hidden"] // shape["heads"]
    per_token = shape["layers"] * shape["kv_heads"] * head_dim * 2
    return weight_bytes(shape) + context * per_token * DTYPE_BYTES[shape.get("dtype", "float32")]


def copy_bandwidth(torch: Any, size: int = 1 << 30, reps: int = 20) -> float:
    """Bytes per second of a device-to-device copy of ``size`` bytes, read plus written
    (the median of ``reps`` copies, timed with CUDA events): the ceiling a decode step's
    reads are held against, measured on the card of the run."""
    source = torch.empty(size, dtype=torch.uint8, device="cuda").random_(0, 255)
    target = torch.empty_like(source)
    for _ in range(3):
        target.copy_(source)
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        target.copy_(source)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    del source, target
    torch.cuda.empty_cache()
    return 2 * size / statistics.median(times)


def _top2_margins(pairs: list[Any]) -> list[list[float]]:
    """[top-1 logit, top-1 minus top-2] per sampled position."""
    return [[float(a), float(a - b)] for a, b in (p.tolist() for p in pairs)]


def _timed(torch: Any, run: Any) -> tuple[Any, float]:
    torch.cuda.synchronize()
    start = time.perf_counter()
    result = run()
    torch.cuda.synchronize()
    return result, time.perf_counter() - start


def _first_difference(tokens: list[int], reference: list[int] | None) -> int | None:
    """None when equal; else the index of the first differing token (or the shorter end)."""
    if reference is None or tokens == reference:
        return None
    return next(
        (i for i, (a, b) in enumerate(zip(tokens, reference, strict=False)) if a != b),
        min(len(tokens), len(reference)),
    )


def _versus_rows(
    torch: Any,
    name: str,
    mode: str,
    run: Any,
    prompts: dict[int, Any],
    args: Any,
    base: int,
    reference: dict[int, list[int]],
    reference_top2: dict[int, list[list[float]]] | None = None,
    shape: dict[str, Any] | None = None,
    copy_rate: float = 0.0,
) -> list[dict[str, Any]]:
    """TTFT, tokens/s and peak memory of ``run(ids, max_new) -> (tokens, stats)`` per length.

    Per length: one new token twice (the second is the TTFT), then ``--max-tokens`` twice
    (the first, with any compilation or graph capture at that size, is ``first_call_s``;
    the second is timed, tokens/s and peak memory). Plain rows also get the bytes a step
    reads and the share of ``copy_rate`` that makes; a row whose greedy tokens part from
    HF's gets both sides' top-2 logit margins there (``run(ids, n, True)`` records them).
    """
    reference_top2 = {} if reference_top2 is None else reference_top2
    rows = []
    for length, ids in prompts.items():
        row: dict[str, Any] = {"config": name, "mode": mode, "prompt_tokens": length}
        try:
            # a session is tagged with max_new_tokens: each size is warmed, then timed
            run(ids, 1)
            _, row["ttft_s"] = _timed(torch, lambda ids=ids: run(ids, 1))
            _, row["first_call_s"] = _timed(torch, lambda ids=ids: run(ids, args.max_tokens))
            gc.collect()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            (tokens, stats), seconds = _timed(torch, lambda ids=ids: run(ids, args.max_tokens))
        except Exception as error:  # keep measuring the other rows
            row["error"] = f"{type(error).__name__}: {str(error)[:300]}"
            print(f"{name} {mode} {length}: FAILED {row['error']}", flush=True)
            rows.append(row)
            continue
        row["peak_above_weights_gib"] = (torch.cuda.max_memory_allocated() - base) / GIB
        row["generated"] = len(tokens)
        row["tokens_per_s"] = len(tokens) / seconds
        row["decode_tokens_per_s"] = (len(tokens) - 1) / max(seconds - row["ttft_s"], 1e-9)
        row |= stats
        if mode == "plain" and shape is not None and copy_rate:
            # the step's bytes at the decode's mean context, against the copy ceiling
            row["step_bytes"] = step_bytes(shape, length + len(tokens) // 2)
            achieved = row["step_bytes"] * row["decode_tokens_per_s"]
            row["bandwidth_fraction"] = achieved / copy_rate
        if name == "hf-dynamic":
            reference[length] = tokens
            reference_top2[length] = run(ids, args.max_tokens, True)[1]["top2"]
        row["first_difference"] = _first_difference(tokens, reference.get(length))
        row["equal_to_hf"] = row["first_difference"] is None and length in reference
        at = row["first_difference"]
        if at is not None and mode == "plain" and length in reference_top2:
            ours = run(ids, args.max_tokens, True)[1].get("top2") or []
            theirs = reference_top2[length]
            if at < len(ours) and at < len(theirs):
                row["margins"] = {"hf": theirs[at][1], "ours": ours[at][1]}
                row["top1_logit"] = max(abs(theirs[at][0]), abs(ours[at][0]))
        print(_versus_line(row), flush=True)
        rows.append(row)
    return rows


def _versus_line(row: dict[str, Any]) -> str:
    if "error" in row:
        head = f"{row['config']:18} {row['mode']:5} {row['prompt_tokens']:6}"
        return f"{head}  FAILED: {row['error'][:120]}"
    accept = row.get("mean_accept_length")
    if row["equal_to_hf"]:
        same = "yes"
    elif row["first_difference"] is None:
        same = "-"  # no HF run in this process
    else:
        same = f"from {row['first_difference']}"
    share = row.get("bandwidth_fraction")
    margins = row.get("margins")
    margin = f"{margins['hf']:.2g}/{margins['ours']:.2g}" if margins else ""
    return (
        f"{row['config']:18} {row['mode']:5} {row['prompt_tokens']:6} "
        f"{row['tokens_per_s']:8.1f} {row['decode_tokens_per_s']:8.1f} "
        f"{row['ttft_s'] * 1e3:8.1f} {row['first_call_s']:7.1f} "
        f"{'-' if accept is None else f'{accept:.2f}':>6} "
        f"{row['peak_above_weights_gib']:7.2f} "
        f"{'-' if share is None else f'{share:.0%}':>5} {same:>9} {margin}"
    ).rstrip()


def _live_caches(loaded: Any) -> list[Any]:
    """The KV cache a tree session keeps (the engine's own; none without a session)."""
    session = getattr(loaded.engine, "_tree_session", None) or {}
    cache = session.get("cache")
    return [cache] if cache is not None and hasattr(cache, "pool_bytes") else []


def versus(args: argparse.Namespace) -> int:
    """HF generate (dynamic; static + compile) and JetSpec through arcmemo's provider on the
    same random-token prompts, in this one process: TTFT, tok/s, peak memory, equality."""
    import torch

    from arcmemo.models.base import GenerateParams
    from arcmemo.models.jetspec import JetSpecProvider

    target = build_target(args.models_dir, args.model)
    configs = args.configs.split(",")
    lengths = [int(x) for x in args.lengths.split(",")]
    generator = torch.Generator().manual_seed(0)
    vocab = int(MODELS[args.model]["vocab"])
    prompts = {n: torch.randint(len(SPECIALS), vocab, (1, n), generator=generator) for n in lengths}
    out_file = args.out / f"versus-{args.model}-{args.tag or 'run'}.json"
    reference: dict[int, list[int]] = {}
    reference_top2: dict[int, list[list[float]]] = {}
    shape = MODELS[args.model]
    copy_rate = copy_bandwidth(torch)
    print(f"device-to-device copy: {copy_rate / 1e12:.2f} TB/s (read + written)", flush=True)
    rows: list[dict[str, Any]] = []
    dtype = getattr(torch, MODELS[args.model].get("dtype", "float32"))

    def document(rows: list[dict[str, Any]]) -> dict[str, Any]:
        card = torch.cuda.get_device_name(0)
        return {"args": _args(args), "card": card, "copy_bytes_per_s": copy_rate, "rows": rows}

    hf_configs = [c for c in configs if c in HF_CONFIGS]
    if hf_configs:
        from transformers import AutoModelForCausalLM, StaticCache

        model = (
            AutoModelForCausalLM.from_pretrained(target, dtype=dtype, attn_implementation="sdpa")
            .to("cuda")
            .eval()
        )
        base = torch.cuda.memory_allocated()
        static: Any = None
        for name in hf_configs:

            def run(
                ids: Any, new: int, top2: bool = False, name: str = name, model: Any = model
            ) -> tuple[list[int], dict]:
                nonlocal static
                extra: dict[str, Any] = {}
                if name == "hf-static-compile":
                    if static is None:
                        static = StaticCache(
                            config=model.config, max_cache_len=max(lengths) + args.max_tokens + 8
                        )
                    static.reset()
                    extra["past_key_values"] = static
                # no_grad, not inference_mode: the static cache is updated in place
                # outside of generate's own calls (reset) and must not be an inference tensor
                with torch.no_grad():
                    out = model.generate(
                        ids.to("cuda"),
                        max_new_tokens=new,
                        do_sample=False,
                        output_scores=top2,
                        return_dict_in_generate=True,
                        **extra,
                    )
                stats = {}
                if top2:
                    pairs = [s.float().topk(2, dim=-1).values[0] for s in out.scores]
                    stats["top2"] = _top2_margins(pairs)
                return out.sequences[0, ids.shape[1] :].tolist(), stats

            rows += _versus_rows(
                torch, name, "plain", run, prompts, args, base, reference, reference_top2,
                shape, copy_rate,
            )  # fmt: skip
            _write(out_file, document(rows))
        del model, static, run  # run holds the model: JetSpec's base must not count it
        gc.collect()
        torch.cuda.empty_cache()
    for name in (c for c in configs if c not in HF_CONFIGS):
        backend, extra = PLAIN_CONFIGS[name]
        head = None
        if args.spec:
            _, head = build_models(args.models_dir, args.model, args.tree_depth)
        options = _options(args, backend, head or "none", **extra)
        options |= {"dtype": MODELS[args.model].get("dtype", args.dtype), "lean": str(args.lean)}
        provider = JetSpecProvider.open(target, **options)
        try:
            base = asyncio.run(provider.run_on_engine(lambda loaded: torch.cuda.memory_allocated()))
            for speculative in (False, True) if args.spec else (False,):

                def run(
                    ids: Any,
                    new: int,
                    top2: bool = False,
                    speculative: bool = speculative,
                    provider: Any = provider,
                ) -> tuple[list[int], dict]:
                    def job(loaded: Any) -> tuple[list[int], dict]:
                        from arcmemo.models.jetspec import hooks

                        sampling = loaded.sampling_params(
                            GenerateParams(max_tokens=new, temperature=0.0)
                        )
                        record: list[Any] | None = [] if top2 else None
                        hooks.record_top2(record)
                        try:
                            result, _ = loaded.decode(ids, sampling, speculative)
                        finally:
                            hooks.record_top2(None)
                        rounds = int(result.get("rounds", 0))
                        accepted = result.get("accept_lengths") or []
                        stats = {"mean_accept_length": sum(accepted) / rounds} if rounds else {}
                        if record is not None:
                            stats["top2"] = _top2_margins(record)
                        pools = [c.pool_bytes() for c in _live_caches(loaded)]
                        if pools:
                            stats["kv_pool_gib"] = max(pools) / GIB
                        return [int(t) for t in result["token_ids"]], stats

                    return asyncio.run(provider.run_on_engine(job))

                mode = "spec" if speculative else "plain"
                label = name if args.lean else f"{name}/upstream"
                label += f"/ring {args.round_ring}" if args.round_ring else ""
                rows += _versus_rows(
                    torch, label, mode, run, prompts, args, base, reference, reference_top2,
                    shape, copy_rate,
                )  # fmt: skip
                _write(out_file, document(rows))
        finally:
            asyncio.run(provider.aclose())
    return 1 if any("error" in r for r in rows) else 0


# -- profile: where a plain decode's time goes as the context grows ---------------------------


def profile(args: argparse.Namespace) -> int:
    """JetSpec plain decoding per configuration x prompt length, timed, then once under
    cProfile (host: Python functions by own time, waits on the GPU included) and once under
    torch.profiler (device: kernels by total time): where a step's time goes as the context
    grows."""
    import cProfile
    import io
    import pstats

    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    from arcmemo.models.base import GenerateParams
    from arcmemo.models.jetspec import JetSpecProvider

    target = build_target(args.models_dir, args.model)
    lengths = [int(x) for x in args.lengths.split(",")]
    generator = torch.Generator().manual_seed(0)
    vocab = int(MODELS[args.model]["vocab"])
    prompts = {n: torch.randint(len(SPECIALS), vocab, (1, n), generator=generator) for n in lengths}
    report: list[str] = []
    for name in args.configs.split(","):
        backend, extra = PLAIN_CONFIGS[name]
        options = _options(args, backend, "none", **extra)
        options |= {"dtype": MODELS[args.model].get("dtype", args.dtype), "lean": str(args.lean)}
        provider = JetSpecProvider.open(target, **options)
        try:
            for length, ids in prompts.items():

                def job(
                    loaded: Any,
                    ids: Any = ids,
                    new: int = args.max_tokens,
                    label: str = f"{name} {length}",
                    host: Any = None,
                ) -> float:
                    sampling = loaded.sampling_params(
                        GenerateParams(max_tokens=new, temperature=0.0)
                    )
                    if host is not None:
                        host.enable()
                    _, seconds = loaded.decode(ids, sampling, False)
                    if host is not None:
                        host.disable()
                        text = io.StringIO()
                        pstats.Stats(host, stream=text).sort_stats("tottime").print_stats(14)
                        report.append(f"== {label}, {new} tokens: cProfile\n{text.getvalue()}")
                    return seconds

                for _ in range(2):  # compile, capture, warm
                    asyncio.run(provider.run_on_engine(job))
                seconds = asyncio.run(provider.run_on_engine(job))
                line = f"{name} {length}: {args.max_tokens} tokens in {seconds:.3f} s"
                print(line, flush=True)
                report.append(line)
                for new in (1, args.max_tokens):  # the first token, the whole decode
                    profiled = functools.partial(job, new=new, host=cProfile.Profile())
                    asyncio.run(provider.run_on_engine(profiled))
                with torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
                    asyncio.run(provider.run_on_engine(job))
                table = p.key_averages().table(sort_by="device_time_total", row_limit=18)
                report.append(f"== {name} {length}: torch.profiler\n{table}")
                print(table[-3000:], flush=True)
        finally:
            asyncio.run(provider.aclose())
        _write_text(args.out / f"profile-{args.model}.txt", "\n".join(report))
    return 0


def _write_text(path: Path, text: str) -> None:
    from arcmemo.core.files import atomic_write_text

    atomic_write_text(path, text + "\n")


# -- real weights: a small Qwen3 trained here on ARC/AIME prompt text --------------------------

# Character-level: ARC prompts of 4,000-16,000 characters are then that many tokens.
TRAINED_SHAPE: dict[str, Any] = {
    "layers": 8,
    "hidden": 512,
    "heads": 8,
    "kv_heads": 4,
    "head_dim": 64,
    "intermediate": 1536,
    "max_positions": 32768,
}
CHAR_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# Synthetic ARC tasks: one grid transformation each, and the program that solves it.
TRANSFORMS: dict[str, tuple[Any, str]] = {
    "flip_horizontal": (lambda g: [row[::-1] for row in g], "[row[::-1] for row in grid]"),
    "flip_vertical": (lambda g: g[::-1], "grid[::-1]"),
    "transpose": (
        lambda g: [list(r) for r in zip(*g, strict=True)],
        "[list(r) for r in zip(*grid)]",
    ),
    "rotate_180": (lambda g: [row[::-1] for row in g[::-1]], "[row[::-1] for row in grid[::-1]]"),
    "identity": (lambda g: [list(r) for r in g], "[list(row) for row in grid]"),
}
AIME_PROMPTS = (  # written for this recipe, in the shape of AIME problems
    "Find the remainder when $7^{2024}$ is divided by $1000$.",
    "Let $N$ be the number of ordered pairs of positive integers $(a,b)$ with $a+b=100$ and "
    "$\\gcd(a,b)=1$. Find $N$.",
    "A sequence satisfies $a_1=3$ and $a_{n+1}=2a_n-1$ for $n\\ge 1$. Find the remainder when "
    "$a_{20}$ is divided by $1000$.",
    "How many positive divisors of $2^{6}\\cdot 3^{4}\\cdot 5^{2}$ are perfect squares?",
)


def _arc_messages(task: Any, concepts: str = "") -> list[Any]:
    """The first solve prompt of ``task`` as a run sends it (the benchmark's own ``prompt``,
    which the runner calls), so a template change reaches this recipe; ``concepts`` is the
    memory text a run with memory puts in it."""
    from arcmemo.benchmarks.arc.benchmark import ArcBenchmark

    return ArcBenchmark().prompt(task, concepts=concepts, previous=None)


@functools.lru_cache(maxsize=64)
def _memory_text(budget_tokens: int) -> str:
    """The shipped ARC seed memory as the solve prompt shows it, every concept selected,
    cut to ``budget_tokens`` (arcmemo's estimate): the memory part of a long ARC prompt."""
    from arcmemo.memory.render import render_solve
    from arcmemo.memory.seeds import load_seed

    memory = load_seed("arc")
    names = [concept.name for concept in memory.concepts]
    return render_solve(memory, names, budget_tokens=budget_tokens)


# Prompt lengths (characters = tokens of the trained model) of the long ARC prompts: one
# fixture task with as much of the seed memory as brings its prompt nearest to each.
LONG_ARC_TOKENS = (4000, 8000, 16000)


def _long_arc_prompts(task: Any) -> list[tuple[str, list[Any]]]:
    def length(budget: int) -> int:
        return len(_render(_arc_messages(task, _memory_text(budget))))

    prompts = []
    for target in LONG_ARC_TOKENS:
        low, high = 50, 6000  # the prompt grows with the budget: bisect for the target
        while high - low > 25:
            middle = (low + high) // 2
            low, high = (middle, high) if length(middle) < target else (low, middle)
        budget = min((low, high), key=lambda b: abs(length(b) - target))
        prompts.append((f"arc+memory:{target // 1000}k", _arc_messages(task, _memory_text(budget))))
    return prompts


def _aime_messages(problem: str) -> list[Any]:
    from arcmemo.benchmarks.aime.benchmark import AimeBenchmark
    from arcmemo.benchmarks.aime.data import AimeProblem

    task = AimeProblem(id="recipe", problem=problem, answer=0, source="jetspec_gpu.py")
    return AimeBenchmark().prompt(task, concepts="", previous=None)


# Memory budgets (arcmemo's token estimate) of the training documents that carry memory.
MEMORY_BUDGETS = (250, 500, 1000, 2000, 3000, 4000)


def _synthetic_documents(count: int, seed: int) -> list[tuple[list[Any], str]]:
    """(messages, answer) pairs: ARC tasks of one transformation, AIME-like residues."""
    from arcmemo.benchmarks.arc.data import parse_task

    rng = random.Random(seed)
    documents = []
    for index in range(count):
        if index % 4 == 3:
            a, b, m = rng.randint(2, 99), rng.randint(10, 3000), rng.choice((7, 100, 1000))
            problem = f"Find the remainder when ${a}^{{{b}}}$ is divided by ${m}$."
            answer = (
                f"We reduce ${a}$ modulo ${m}$ and use repeated squaring. "
                f"$${a}^{{{b}}} \\equiv {pow(a, b, m)} \\pmod{{{m}}}$$\n"
                f"The answer is $\\boxed{{{pow(a, b, m)}}}$."
            )
            documents.append((_aime_messages(problem), answer))
            continue
        name = rng.choice(sorted(TRANSFORMS))
        function, expression = TRANSFORMS[name]
        height, width = rng.randint(3, 12), rng.randint(3, 12)
        colors = rng.sample(range(10), rng.randint(2, 4))

        def grid(height: int = height, width: int = width, colors: list[int] = colors) -> list:
            return [[rng.choice(colors) for _ in range(width)] for _ in range(height)]

        pairs = [{"input": g, "output": function(g)} for g in (grid() for _ in range(4))]
        raw = {"train": pairs[:3], "test": pairs[3:]}
        task = parse_task(f"synthetic-{index}", raw, "synthetic")
        # half of them carry memory, as a run with memory sends them (long prompts)
        concepts = _memory_text(rng.choice(MEMORY_BUDGETS)) if rng.random() < 0.5 else ""
        answer = (
            f"The output is the input with a {name.replace('_', ' ')}.\n\n```python\n"
            f"def transform(grid):\n    return {expression}\n```"
        )
        documents.append((_arc_messages(task, concepts), answer))
    return documents


def _eval_prompts() -> list[tuple[str, list[Any]]]:
    """Real ARC tasks (the repository's fixtures and puzzle samples), the first of them with
    the seed memory at about 4k, 8k and 16k tokens, and AIME-like problems."""
    from arcmemo.benchmarks.arc.data import load_path

    here = Path(__file__).resolve().parents[1]
    tasks = [
        *load_path(here / "tests" / "fixtures" / "arc" / "eval"),
        *load_path(here / "puzzles" / "samples"),
    ]
    prompts = [(f"arc:{t.id}", _arc_messages(t)) for t in tasks[:8]]
    prompts += _long_arc_prompts(tasks[0])
    prompts += [(f"aime:{i}", _aime_messages(p)) for i, p in enumerate(AIME_PROMPTS)]
    return prompts


def _render(messages: list[Any]) -> str:
    """The training text of ``messages``: :data:`CHAR_TEMPLATE`, which the trained model's
    tokenizer also carries as its chat template (``real`` renders through that)."""
    from jinja2 import Template

    return Template(CHAR_TEMPLATE).render(
        messages=[{"role": m.role, "content": m.content} for m in messages],
        add_generation_prompt=True,
    )


def training_texts(count: int = 3000, seed: int = 0) -> list[str]:
    """The training corpus: synthetic ARC and AIME-like documents, prompt and answer."""
    return [_render(m) + answer + "<|im_end|>\n" for m, answer in _synthetic_documents(count, seed)]


def char_tokenizer(texts: list[str]) -> Any:
    """A character-level tokenizer over the characters of ``texts``, the evaluation prompts
    and printable ASCII, with :data:`CHAR_TEMPLATE` as its chat template."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    eval_texts = [_render(m) for _, m in _eval_prompts()]
    chars = sorted({c for text in texts + eval_texts for c in text} | set(map(chr, range(32, 127))))
    specials = ["<|im_start|>", "<|im_end|>", "<unk>"]
    vocab = {token: i for i, token in enumerate(specials + [c for c in chars if c not in specials])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="<unk>",
        eos_token="<|im_end|>",
        additional_special_tokens=["<|im_start|>"],
    )
    fast.chat_template = CHAR_TEMPLATE
    return fast


def real_prompts(tokenizer: Any) -> list[tuple[str, Any]]:
    """(name, ids) of the evaluation prompts, longest first, rendered by the provider's own
    chat-template step (:func:`arcmemo.models.jetspec.engine.chat_text`)."""
    from arcmemo.models.jetspec.engine import chat_text

    prompts = [
        (
            name,
            tokenizer(
                chat_text(tokenizer, m, thinking=False),
                add_special_tokens=False,
                return_tensors="pt",
            ).input_ids,
        )
        for name, m in _eval_prompts()
    ]
    # longest first: a session sized by the first prompt holds every later one
    prompts.sort(key=lambda pair: -int(pair[1].shape[1]))
    return prompts


def train(args: argparse.Namespace) -> int:
    """Train a small character-level Qwen3 on synthetic ARC/AIME documents for --train-s
    seconds; save it (with its tokenizer and chat template) as ``--model``."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    directory = args.models_dir / args.model
    texts = training_texts()
    fast = char_tokenizer(texts)
    vocab = fast.get_vocab()
    directory.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(directory)
    stream = []
    for text in texts:
        stream += fast(text, add_special_tokens=False).input_ids
    data = torch.tensor(stream, dtype=torch.long, device="cuda")
    lengths = [int(ids.shape[1]) for _, ids in real_prompts(fast)]
    print(
        f"corpus {len(stream):,} tokens ({len(texts)} documents), vocab {len(vocab)}; "
        f"eval prompts {min(lengths)}-{max(lengths)} tokens",
        flush=True,
    )
    shape = TRAINED_SHAPE
    config = Qwen3Config(
        vocab_size=len(vocab),
        hidden_size=shape["hidden"],
        intermediate_size=shape["intermediate"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"],
        num_key_value_heads=shape["kv_heads"],
        head_dim=shape["head_dim"],
        max_position_embeddings=shape["max_positions"],
        rope_theta=1000000.0,
        tie_word_embeddings=False,
        eos_token_id=vocab["<|im_end|>"],
        bos_token_id=None,
        pad_token_id=None,
    )
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(config).to("cuda")
    model.config._attn_implementation = "sdpa"
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, betas=(0.9, 0.95))
    batch, length = 4, 16384  # windows as long as the longest prompt
    started, step, losses = time.perf_counter(), 0, []
    while time.perf_counter() - started < args.train_s:
        warm = min(1.0, (step + 1) / 100)
        for group in optimizer.param_groups:
            group["lr"] = 1e-3 * warm
        starts = torch.randint(0, data.numel() - length - 1, (batch,), device="cuda")
        index = starts[:, None] + torch.arange(length + 1, device="cuda")[None, :]
        chunk = data[index]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=chunk[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(
            logits.float().reshape(-1, logits.shape[-1]), chunk[:, 1:].reshape(-1)
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        if step % 100 == 0:
            losses.append(float(loss))
            print(f"step {step}: loss {losses[-1]:.3f} ({time.perf_counter() - started:.0f} s)")
    model.to(torch.bfloat16).save_pretrained(directory)
    _write(
        args.out / "train.json",
        {"steps": step, "losses": losses, "tokens_per_step": batch * length, "shape": shape},
    )
    print(f"trained {step} steps of {batch}x{length} tokens; saved to {directory}", flush=True)
    return 0


def real(args: argparse.Namespace) -> int:
    """On the trained model: per backend, plain and prompt-lookup speculative decoding of real
    ARC and AIME prompts, greedy tokens against HF generate; mean accepted length, speedup."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from arcmemo.models.base import GenerateParams
    from arcmemo.models.jetspec import JetSpecProvider

    target = str(args.models_dir / args.model)
    prompts = real_prompts(AutoTokenizer.from_pretrained(target))
    model = AutoModelForCausalLM.from_pretrained(
        target, dtype=torch.bfloat16, attn_implementation="sdpa"
    ).to("cuda")
    reference = {}
    with torch.no_grad():
        for name, ids in prompts:
            out = model.generate(ids.to("cuda"), max_new_tokens=args.max_tokens, do_sample=False)
            reference[name] = out[0, ids.shape[1] :].tolist()
    del model
    gc.collect()
    torch.cuda.empty_cache()
    rows: list[dict[str, Any]] = []
    for config in args.configs.split(","):
        backend, extra = PLAIN_CONFIGS[config]
        options = _options(args, backend, "lookup", **extra)
        options |= {"dtype": "bfloat16", "drafter": "eager", "lean": str(args.lean)}
        provider = JetSpecProvider.open(target, **options)
        try:
            for speculative in (False, True):

                def job(loaded: Any, ids: Any, speculative: bool = speculative) -> tuple:
                    sampling = loaded.sampling_params(
                        GenerateParams(max_tokens=args.max_tokens, temperature=0.0)
                    )
                    return loaded.decode(ids, sampling, speculative)

                for _, ids in prompts[:2]:  # warm: compilation, capture (longest first)
                    asyncio.run(provider.run_on_engine(lambda e, ids=ids: job(e, ids)))
                for name, ids in prompts:
                    result, seconds = asyncio.run(
                        provider.run_on_engine(lambda e, ids=ids: job(e, ids))
                    )
                    tokens = [int(t) for t in result["token_ids"]]
                    rounds = int(result.get("rounds", 0))
                    accepted = result.get("accept_lengths") or []
                    row = {
                        "config": config,
                        "mode": "spec" if speculative else "plain",
                        "prompt": name,
                        "prompt_tokens": int(ids.shape[1]),
                        "generated": len(tokens),
                        "seconds": seconds,
                        "tokens_per_s": len(tokens) / seconds,
                        "mean_accept_length": sum(accepted) / rounds if rounds else None,
                        "first_difference": _first_difference(tokens, reference[name]),
                    }
                    if speculative and rounds:
                        row |= _round_split(provider, job, ids, rounds)
                    rows.append(row)
                    _write(args.out / "real.json", {"args": _args(args), "rows": rows})
        finally:
            asyncio.run(provider.aclose())
    print(_real_table(rows))
    return 0


def _round_split(provider: Any, job: Any, ids: Any, rounds: int) -> dict[str, float]:
    """One more speculative decode of ``ids`` with the drafter's ``propose_logits`` timed
    between two device synchronisations: seconds per round, and the share the draft takes
    (the rest is the tree, the verify forward and the acceptance)."""
    import torch

    from arcmemo.models.jetspec.lookup import PromptLookupDrafter

    spent = [0.0]
    original = PromptLookupDrafter.propose_logits

    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        torch.cuda.synchronize()
        started = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            torch.cuda.synchronize()
            spent[0] += time.perf_counter() - started

    PromptLookupDrafter.propose_logits = timed  # type: ignore[method-assign]
    try:
        result, seconds = asyncio.run(provider.run_on_engine(lambda e: job(e, ids)))
    finally:
        PromptLookupDrafter.propose_logits = original  # type: ignore[method-assign]
    count = int(result.get("rounds", 0)) or rounds
    return {"round_s": seconds / count, "draft_s": spent[0] / count}


def _prompt_set(name: str) -> str:
    """The table's group of a prompt: ``arc``, ``arc+memory:4k``, ..., ``aime``."""
    return name if name.startswith("arc+memory") else name.split(":")[0]


def _real_table(rows: list[dict[str, Any]]) -> str:
    """Per backend and prompt set (ARC, ARC with memory at each length, AIME): tok/s plain
    and speculative, speedup, mean accepted length, greedy equality with HF, and where a
    round's time goes: a plain step, a speculative round, its draft, and the accepted
    length a round must reach to pay (break-even: round time over step time)."""
    lines = [
        f"{'config':18} {'prompts':14} {'n':>3} {'tokens':>11} {'plain tok/s':>11} "
        f"{'spec tok/s':>10} {'speedup':>7} {'accept':>6} {'= HF':>7} "
        f"{'step ms':>7} {'round ms':>8} {'draft ms':>8} {'break-even':>10}"
    ]
    kinds = list(dict.fromkeys(_prompt_set(r["prompt"]) for r in rows))
    for config in dict.fromkeys(r["config"] for r in rows):
        for kind in kinds:
            cells = {
                mode: [
                    r
                    for r in rows
                    if r["config"] == config
                    and r["mode"] == mode
                    and _prompt_set(r["prompt"]) == kind
                ]
                for mode in ("plain", "spec")
            }
            if not cells["plain"] or not cells["spec"]:
                continue
            rate = {
                m: sum(r["generated"] for r in c) / sum(r["seconds"] for r in c)
                for m, c in cells.items()
            }
            accepts = [r["mean_accept_length"] for r in cells["spec"] if r["mean_accept_length"]]
            both = cells["plain"] + cells["spec"]
            equal = sum(r["first_difference"] is None for r in both)
            tokens = [r["prompt_tokens"] for r in cells["plain"]]
            span = f"{min(tokens)}-{max(tokens)}"
            # a round pays when it commits more tokens than the plain steps it costs
            split = [r for r in cells["spec"] if "round_s" in r]
            step_ms = 1000 / rate["plain"]
            round_ms = 1000 * statistics.mean(r["round_s"] for r in split) if split else None
            draft_ms = 1000 * statistics.mean(r["draft_s"] for r in split) if split else None
            profile = (
                f" {step_ms:7.2f} {round_ms:8.2f} {draft_ms:8.2f} {round_ms / step_ms:10.2f}"
                if round_ms is not None and draft_ms is not None
                else ""
            )
            lines.append(
                f"{config:18} {kind:14} {len(cells['plain']):3} {span:>11} "
                f"{rate['plain']:11.1f} {rate['spec']:10.1f} "
                f"{rate['spec'] / rate['plain']:6.2f}x "
                f"{(sum(accepts) / len(accepts)) if accepts else 0:6.2f} "
                f"{equal:>3}/{len(both):<3}{profile}"
            )
    return "\n".join(lines)


# -- summary ------------------------------------------------------------------------------------


def summary(args: argparse.Namespace) -> int:
    """Print every table found under ``--out`` (the end of the GPU recipe's output)."""
    print("\n==================== SUMMARY ====================")
    for path in sorted(args.out.glob("compare-*.json")):
        print(f"\n-- equality and tokens/s ({path.name}; fp32 greedy, random weights)")
        print(
            f"{'config':18} {'identical':>10} {'plain tok/s':>12} {'spec tok/s':>11} "
            f"{'tok/round':>9} {'peak GiB':>9} {'wall s':>7}"
        )
        for r in json.loads(path.read_text())["results"]:
            if "error" in r:
                print(f"{r['config']:18} FAILED: {r['error'][:150]}")
                continue
            b = r["bench"]
            count = b["plain"]["prompts"]
            same = f"{count - len(b['mismatches'])}/{count}"
            print(
                f"{r['config']:18} {same:>10} {b['plain']['tokens_per_s']:12.1f} "
                f"{b['speculative']['tokens_per_s']:11.1f} "
                f"{b['speculative']['tokens_per_round'] or 0:9.2f} {r['peak_gib']:9.2f} "
                f"{r['wall_s']:7.1f}"
            )
    overhead_file = args.out / "overhead.json"
    if overhead_file.is_file():
        document = json.loads(overhead_file.read_text())
        print(
            f"\n-- hook overhead ({document['options']['attn_backend']}, "
            f"{document['args']['model']})"
        )
        for row in document["rows"]:
            print(_overhead_line(row))
    memory_file = args.out / "memory.json"
    if memory_file.is_file():
        document = json.loads(memory_file.read_text())
        rows, settings = document["rows"], document["args"]
        print(
            f"\n-- peak GPU memory above the weights, GiB ({settings['model']}, "
            f"{settings['dtype']}, {settings['max_tokens']} new tokens)"
        )
        keys = sorted({(r["config"], r["speculative"]) for r in rows})
        lengths = sorted({r["prompt_tokens"] for r in rows})
        header = ("config", "mode", "prompt", "peak: upstream", "shared", "ratio")
        header += ("KV pool: upstream", "shared", "KiB/token")
        print("{:16} {:11} {:>6} {:>14} {:>7} {:>6} {:>17} {:>7} {:>9}".format(*header))
        for config, speculative in keys:
            for length in lengths:
                cells = {
                    r["kv_pool"]: r
                    for r in rows
                    if (r["config"], r["speculative"], r["prompt_tokens"])
                    == (config, speculative, length)
                }
                if set(cells) != {"upstream", "shared"}:
                    continue
                up, sh = cells["upstream"], cells["shared"]
                peak_up, peak_sh = up["peak_above_weights_gib"], sh["peak_above_weights_gib"]
                kv_up, kv_sh = up["kv_pool_gib"], sh["kv_pool_gib"]
                tokens = length + settings["max_tokens"]  # what the pool must hold at the end
                mode = "speculative" if speculative else "plain"
                print(
                    f"{config:16} {mode:11} {length:6} {peak_up:14.3f} {peak_sh:7.3f} "
                    f"{peak_up / peak_sh:6.1f} {kv_up:17.3f} {kv_sh:7.3f} "
                    f"{kv_sh * 2**20 / tokens:9.1f}"
                )
        print("(GiB; peak: all memory above the weights, logits and activations included;")
        print(" KV pool: the cache's pool tensors at the end; KiB/token: shared pool / tokens)")
    real_file = args.out / "real.json"
    if real_file.is_file():
        document = json.loads(real_file.read_text())
        print(
            f"\n-- real weights: a small Qwen3 trained here, greedy, "
            f"{document['args']['max_tokens']} new tokens, draft=lookup "
            "(speedup: spec/plain tok/s over all prompts; accept: mean accepted length;"
            " = HF: greedy tokens equal to HF generate, plain and spec rows)"
        )
        print(_real_table(document["rows"]))
    for path in sorted(args.out.glob("versus-*.json")):
        document = json.loads(path.read_text())
        settings = document["args"]
        copy_rate = document.get("copy_bytes_per_s")
        ceiling = f"; copy {copy_rate / 1e12:.2f} TB/s" if copy_rate else ""
        print(
            f"\n-- {settings['model']} (random weights, "
            f"{MODELS.get(settings['model'], {}).get('dtype', 'float32')}, batch 1, greedy, "
            f"{settings['max_tokens']} new tokens; {document.get('card', '?')}{ceiling}; "
            f"{path.name})"
        )
        print(
            f"{'config':18} {'mode':5} {'prompt':>6} {'tok/s':>8} {'decode':>8} "
            f"{'TTFT ms':>8} {'first s':>7} {'accept':>6} {'peak GiB':>7} {'bw':>5} "
            f"{'= HF':>9} margin HF/ours"
        )
        for row in document["rows"]:
            print(_versus_line(row))
    print("(tok/s: new tokens / wall time of the call; decode: after the first token; TTFT:")
    print(" a warm call for one new token; first s: the first full call at that length,")
    print(" compilation and capture included; accept: mean accepted length per verify round;")
    print(" peak: above the weights; bw: bytes a plain step reads (weights + KV at the mean")
    print(" context) x decode tok/s over the copy bandwidth measured in the same run; = HF:")
    print(" greedy tokens equal to HF's dynamic-cache generate, or the index where they part;")
    print(" margin: top-1 minus top-2 logit there, HF's and JetSpec's)")
    return 0


def _args(args: argparse.Namespace) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k != "run"}


def build_parser() -> argparse.ArgumentParser:
    """The command line (experiments/jetspec_gpu.sh's calls are checked against it in CI)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "command",
        choices=("compare", "overhead", "memory", "versus", "profile", "train", "real", "summary"),
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for the JSON results")
    parser.add_argument("--models-dir", type=Path, default=Path("/tmp/jetspec_models"))
    parser.add_argument("--model", default="small", choices=[*sorted(MODELS), "trained"])
    parser.add_argument("--train-s", type=float, default=150.0, help="train: seconds")
    parser.add_argument(
        "--configs", default="eager-head", help=",".join([*CONFIGS, *HF_CONFIGS, *PLAIN_CONFIGS])
    )
    parser.add_argument("--prompts", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--reps", type=int, default=30, help="overhead: paired repetitions")
    parser.add_argument("--lengths", default="1000,4000,7000", help="memory: prompt words")
    parser.add_argument("--dtype", default="fp32")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tree-depth", type=int, default=7)
    parser.add_argument("--budget", type=int, default=32)
    parser.add_argument("--width", type=int, default=3)
    parser.add_argument("--spec", action="store_true", help="versus: also speculative rows")
    parser.add_argument(
        "--upstream", dest="lean", action="store_false", help="versus: JetSpec's own paths"
    )
    parser.add_argument("--tag", default="", help="versus: suffix of the JSON file")
    parser.add_argument(
        "--round-ring",
        type=int,
        default=0,
        help="nogather: compact the verify rounds' blocks, keeping a ring of this many "
        "rounds (the provider's round_ring option; 0: off, as by default)",
    )
    return parser


def known_configs(names: str) -> list[str]:
    """The ``--configs`` names no command knows (empty when all are known)."""
    known = {*CONFIGS, *HF_CONFIGS, *PLAIN_CONFIGS}
    return [name for name in names.split(",") if name not in known]


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    unknown = known_configs(args.configs)
    if unknown:
        print(f"unknown --configs {','.join(unknown)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    if args.command != "summary":
        import torch
        import transformers

        print(
            f"torch {torch.__version__}, transformers {transformers.__version__}, "
            f"{torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no CUDA'}",
            flush=True,
        )
    commands = {
        "compare": compare,
        "overhead": overhead,
        "memory": memory,
        "versus": versus,
        "profile": profile,
        "train": train,
        "real": real,
        "summary": summary,
    }
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
