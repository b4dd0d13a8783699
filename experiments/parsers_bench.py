"""Time every parser of model text on adversarial inputs of 10 KB, 100 KB and 1 MB, in this
tree and in another checkout of arcmemo (before a change), side by side.

Each measurement runs in its own process (``--worker``) with the tree's folder first on
``sys.path``, under a time cap: a quadratic parser on 1 MB takes minutes to hours, and is
reported as ``> CAP``. The inputs are built the same way in both trees.

    git worktree add --detach ../arcmemo-before <commit>
    python experiments/parsers_bench.py --before ../arcmemo-before [--cap 30]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZES = {"10 KB": 10_000, "100 KB": 100_000, "1 MB": 1_000_000}


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


# (parser, attack): how to build an input of about ``size`` characters.
ATTACKS: dict[tuple[str, str], Callable[[int], str]] = {
    ("extract_answer", "unclosed \\boxed{"): lambda n: _repeat("\\boxed{", n),
    ("extract_answer", "answer:answer:..."): lambda n: _repeat("answer:", n),
    ("extract_answer", "answer: ....x"): lambda n: "answer: " + "." * n + "x",
    ("extract_answer", "nested \\text{ in a box"): lambda n: (
        "\\boxed{" + _repeat("\\text{", n // 2) + "7" + "}" * (n // 12 + 1)
    ),
    ("tagged", "unclosed <pseudocode>"): lambda n: _repeat("<pseudocode>", n),
    ("fenced_blocks", "``` without a line end"): lambda n: "```" + "a" * n,
    ("fenced_blocks", "backquotes"): lambda n: "`" * n,
    ("fenced_blocks", "openers, mixed line ends"): lambda n: _repeat("```py\r\n\r", n),
    ("find_program", "backquotes"): lambda n: "`" * n,
    ("find_program", "``` then a long word"): lambda n: "```" + "a" * n,
    ("find_program", "blank lines"): lambda n: _repeat(" \n", n),
    ("load_yaml_block", "nested lists"): lambda n: "[" * (n // 2) + "]" * (n // 2),
    # Levels 5, 6, 7 for the three sizes (the document stays tiny; what grows is its walk).
    ("load_yaml_block", "alias bomb, 5/6/7 levels"): lambda n: _laughs(len(str(n)) + 0),
    ("parse_names", "unclosed fences"): lambda n: _repeat("```yaml\n- a\n", n),
}


def _laughs(levels: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "```yaml\n" + "\n".join(lines) + "\n```"


def _parser(name: str) -> Callable[[str], Any]:
    if name == "extract_answer":
        from arcmemo.benchmarks.aime.answers import extract_answer

        return extract_answer
    if name == "tagged":
        from arcmemo.models.structured import tagged

        return lambda text: tagged(text, "pseudocode")
    if name == "fenced_blocks":
        from arcmemo.models.structured import fenced_blocks

        return lambda text: fenced_blocks(text, ("python", "py", ""))
    if name == "find_program":
        from arcmemo.benchmarks.arc.prompt import find_program

        return find_program
    if name == "load_yaml_block":
        import json as json_module

        from arcmemo.models.structured import OutputError, load_yaml_block

        def load_and_walk(text: str) -> Any:
            # What a caller does next with the value (validating or storing it walks it).
            try:
                return len(json_module.dumps(load_yaml_block(text)))
            except (OutputError, RecursionError) as error:
                return type(error).__name__

        return load_and_walk
    if name == "parse_names":
        from arcmemo.models.structured import OutputError
        from arcmemo.selection.llm import parse_names

        def names(text: str) -> Any:
            try:
                return parse_names(text)
            except OutputError:
                return None

        return names
    raise ValueError(name)


def worker(tree: str, parser: str, attack: str, size: int) -> None:
    sys.path.insert(0, tree)
    text = ATTACKS[(parser, attack)](size)
    parse = _parser(parser)
    started = time.perf_counter()
    parse(text)
    print(json.dumps({"seconds": time.perf_counter() - started}))


def measure(tree: Path, parser: str, attack: str, size: int, cap: float) -> str:
    command = [sys.executable, __file__, "--worker", str(tree), parser, attack, str(size)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=cap, cwd=tree, env=_environment()
        )
    except subprocess.TimeoutExpired:
        return f"> {cap:g} s"
    if done.returncode != 0:
        return "error: " + (done.stderr.strip().splitlines() or ["?"])[-1][:40]
    return f"{json.loads(done.stdout)['seconds']:.3f} s"


def _environment() -> dict[str, str]:
    import os

    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="another arcmemo checkout")
    parser.add_argument("--cap", type=float, default=30.0, help="seconds per measurement")
    parser.add_argument("--sizes", default=",".join(SIZES), help="of: " + ", ".join(SIZES))
    parser.add_argument("--only", default=None, help="time this parser only")
    args = parser.parse_args()
    after = Path(__file__).resolve().parents[1]
    sizes = [s.strip() for s in args.sizes.split(",")]
    print(f"| parser | input | size | before ({args.before.name}) | after |")
    print("|---|---|---|---|---|")
    for parser_name, attack in ATTACKS:
        if args.only is not None and parser_name != args.only:
            continue
        for size in sizes:
            chars = SIZES[size]
            before = measure(args.before.resolve(), parser_name, attack, chars, args.cap)
            now = measure(after, parser_name, attack, chars, args.cap)
            print(f"| {parser_name} | {attack} | {size} | {before} | {now} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        main()
