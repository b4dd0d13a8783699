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
    seed: int = 0,
) -> str:
    """Save a random Qwen3 causal LM and a word-level tokenizer with a chat template."""
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
        head_dim=hidden // heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=False,
        eos_token_id=token_ids["<|im_end|>"],
        bos_token_id=None,
        pad_token_id=None,
    )
    Qwen3ForCausalLM(config).save_pretrained(directory)
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


MODELS: dict[str, dict[str, int]] = {
    # the shapes measured in ../shared/reference/jetspec-api.md
    "small": {"layers": 4, "hidden": 256, "vocab": 512, "heads": 4, "kv_heads": 2},
    "qwen3-0.6b-shape": {
        "layers": 28,
        "hidden": 1024,
        "vocab": 32000,
        "heads": 16,
        "kv_heads": 8,
        "intermediate": 3072,
        "max_positions": 16384,
    },
}
GIB = 2**30


def build_models(models_dir: Path, name: str, tree_depth: int) -> tuple[str, str]:
    """The target ``name`` and a random draft head for it (built once per folder)."""
    target = models_dir / name
    if not (target / "config.json").is_file():
        write_tiny_qwen3(target, **MODELS[name])
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
    return options | extra


def _write(path: Path, document: Any) -> None:
    from arcmemo.files import atomic_write_text

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
    return 0


def _args(args: argparse.Namespace) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k != "run"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("compare", "overhead", "memory", "summary"))
    parser.add_argument("--out", type=Path, required=True, help="folder for the JSON results")
    parser.add_argument("--models-dir", type=Path, default=Path("/tmp/jetspec_models"))
    parser.add_argument("--model", default="small", choices=sorted(MODELS))
    parser.add_argument("--configs", default="eager-head", help=",".join(CONFIGS))
    parser.add_argument("--prompts", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--reps", type=int, default=30, help="overhead: paired repetitions")
    parser.add_argument("--lengths", default="1000,4000,7000", help="memory: prompt words")
    parser.add_argument("--dtype", default="fp32")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tree-depth", type=int, default=7)
    parser.add_argument("--budget", type=int, default=32)
    parser.add_argument("--width", type=int, default=3)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.command != "summary":
        import torch
        import transformers

        print(
            f"torch {torch.__version__}, transformers {transformers.__version__}, "
            f"{torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no CUDA'}",
            flush=True,
        )
    commands = {"compare": compare, "overhead": overhead, "memory": memory, "summary": summary}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
