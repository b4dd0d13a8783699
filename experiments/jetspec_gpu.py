"""JetSpec hook on a GPU: losslessness, plain vs speculative tokens/s, and hook overhead.

Builds randomly initialised Qwen3 targets (and a random DFlash draft head) in a folder,
then, through arcmemo's ``jetspec:`` provider:

1. decodes the same prompts plainly and speculatively (``arcmemo.models.jetspec.bench``'s
   comparison) and checks greedy outputs are identical (fp32 by default);
2. times the engine called directly (``engine.generate`` / ``engine.generate_tree`` on the
   worker thread, CUDA-synchronised) against the same request through the provider
   (``await provider.generate_mode``: templating, tokenising, queue, thread hop, stats),
   interleaved prompt by prompt, and reports the ratio.

Random weights give no real speed-up (JetSpec's 4.6x-9.6x needs Qwen3-8B and its trained
head); the echo drafter shows the acceptance machinery, the random head the head path.

Exact recipe on an H200 (transformers 4.57.6 etc. as wheels in .whl, JetSpec's ``jetspec/``
folder from its source at .external/JetSpec): see experiments/jetspec_gpu.sh.

The helpers ``write_tiny_qwen3`` and ``write_random_draft_head`` are also used by
tests/models/test_jetspec.py (CPU opt-in and GPU tests).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
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
        max_position_embeddings=4096,
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
    },
}


async def _overhead(provider: Any, prompts: list[str], max_tokens: int, speculative: bool) -> dict:
    """Direct engine time vs the same request through the provider, prompt by prompt."""
    from arcmemo.models.base import GenerateParams, Message

    params = GenerateParams(max_tokens=max_tokens, temperature=0.0)
    direct_s = hook_s = 0.0
    same = True
    for prompt in prompts:
        messages = [Message(role="user", content=prompt)]

        def direct(loaded: Any, messages: list[Message] = messages) -> tuple[list[int], float]:
            ids = loaded.encode(loaded.render_prompt(messages))
            result, seconds = loaded.decode(ids, loaded.sampling_params(params), speculative)
            return result["token_ids"], seconds

        token_ids, seconds = await provider.run_on_engine(direct)
        direct_s += seconds
        start = time.perf_counter()
        [completion] = await provider.generate_mode(messages, params, speculative=speculative)
        hook_s += time.perf_counter() - start
        same = same and completion.usage.completion_tokens == len(token_ids)
    return {
        "mode": "speculative" if speculative else "plain",
        "direct_s": direct_s,
        "hook_s": hook_s,
        "hook_over_direct": hook_s / direct_s if direct_s else None,
        "same_token_counts": same,
    }


async def measure(
    model_dir: str, options: dict[str, str], prompts: list[str], max_tokens: int
) -> dict:
    """Plain vs speculative through the hook, then hook vs direct for both modes."""
    from arcmemo.models.jetspec import JetSpecProvider
    from arcmemo.models.jetspec.bench import compare_decoding, format_result, run_generation_bench

    bench = await run_generation_bench(model_dir, options, prompts, max_tokens=max_tokens)
    print(format_result(bench), flush=True)
    provider = JetSpecProvider.open(model_dir, **options)
    try:
        await compare_decoding(provider, prompts[:1], max_tokens=max_tokens)  # warm both modes
        overhead = [
            await _overhead(provider, prompts, max_tokens, speculative)
            for speculative in (False, True)
        ]
    finally:
        await provider.aclose()
    for item in overhead:
        print(
            f"hook overhead ({item['mode']}): direct {item['direct_s']:.3f}s, "
            f"through hook {item['hook_s']:.3f}s, ratio {item['hook_over_direct']:.3f}",
            flush=True,
        )
    return {"bench": bench.model_dump(), "overhead": overhead}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for results.json")
    parser.add_argument("--models-dir", type=Path, default=Path("/tmp/jetspec_models"))
    parser.add_argument("--models", default="small,qwen3-0.6b-shape")
    parser.add_argument("--backends", default="triton_paged_tree,sdpa")
    parser.add_argument("--drafts", default="echo,head")
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--dtype", default="fp32")
    parser.add_argument("--tree-depth", type=int, default=7)
    parser.add_argument("--budget", type=int, default=32)
    parser.add_argument("--width", type=int, default=3)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--session", action="store_true", help="reuse JetSpec's tree session")
    args = parser.parse_args(argv)

    import torch
    import transformers

    from arcmemo.files import atomic_write_text
    from arcmemo.models.jetspec.bench import DEFAULT_PROMPTS, repeat_prompts

    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, "
        f"cuda {torch.cuda.is_available()} "
        f"{torch.cuda.get_device_name(0) if torch.cuda.is_available() else ''}",
        flush=True,
    )
    prompts = repeat_prompts(DEFAULT_PROMPTS, args.prompts)
    results: list[dict[str, Any]] = []
    out_file = args.out / "results.json"
    for name in args.models.split(","):
        model_dir = write_tiny_qwen3(args.models_dir / name, **MODELS[name])
        head_dir = write_random_draft_head(
            args.models_dir / f"{name}-head", model_dir, block_size=args.tree_depth + 1
        )
        for backend in args.backends.split(","):
            # the 28-layer shape is slow on sdpa; measure it on the triton backend only
            if name != "small" and backend == "sdpa":
                continue
            for draft in args.drafts.split(","):
                options = {
                    "draft": head_dir if draft == "head" else draft,
                    "dtype": args.dtype,
                    "device": args.device,
                    "attn_backend": backend,
                    "tree_depth": str(args.tree_depth),
                    "budget": str(args.budget),
                    "width": str(args.width),
                    "session": str(args.session),
                }
                print(f"\n== model={name} backend={backend} draft={draft} dtype={args.dtype}")
                started = time.perf_counter()
                try:
                    record = asyncio.run(measure(model_dir, options, prompts, args.max_tokens))
                except Exception as error:  # keep measuring the other configurations
                    record = {"error": f"{type(error).__name__}: {error}"}
                    print("FAILED:", record["error"], flush=True)
                record |= {"model": name, "backend": backend, "draft": draft}
                record["wall_s"] = time.perf_counter() - started
                results.append(record)
                settings = vars(args) | {"out": str(args.out), "models_dir": str(args.models_dir)}
                document = {"args": settings, "results": results}
                atomic_write_text(out_file, json.dumps(document, indent=2) + "\n")
    failed = [r for r in results if "error" in r or not r["bench"]["identical"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
