"""The model refactoring loop over the BARC seeds, with a scripted model.

``library refactor`` with a model (:mod:`arcmemo.library.model_refactor`) over the verified
seed programs (``arcmemo seeds import-barc BARC_DIR --out DIR``), the model played by a
script: for each group of programs it is shown, it proposes the correct refactoring a
careful model could, every top-level function that two or more of the programs define
with the same text (and that needs nothing but numpy, builtins and the other such
functions) as a shared helper, each program rewritten to import them instead; and once, in
the first group where it can, one output-changing refactoring besides: one more program's
rewrite whose ``transform`` turns its result a quarter turn. Execution decides what stays.
The script prints the groups, calls, rewrites kept and rejected (the rejected one with the
input that differs), functions kept, reused and pruned, and the corpus tokens before and
after.

    python experiments/refactor_barc.py SEEDS_DIR [--json FILE]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import builtins
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from arcmemo.benchmarks.arc.data import load_split
from arcmemo.library.model_refactor import refactor_with_model
from arcmemo.memory.schema import Memory
from arcmemo.models import ModelClient, ScriptedProvider
from arcmemo.sandbox import SANDBOXES

_PROGRAM = re.compile(r'<program task="([^"\n<>]{1,200})">\n```python\n(.*?)```\n</program>', re.S)
_KNOWN = set(dir(builtins)) | {"np", "numpy"}
WRONG = (
    "\n\n_refactored = transform\n\n\n"
    "def transform(grid):\n    return np.rot90(_refactored(grid))\n"
)


def _defs(source: str) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}


def _needs(node: ast.FunctionDef) -> set[str]:
    """Names ``node`` reads that it does not bind itself."""
    bound = {a.arg for a in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]}
    bound |= {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    bound |= {
        n.name
        for n in ast.walk(node)
        if isinstance(n, (ast.FunctionDef, ast.Lambda)) and hasattr(n, "name")
    }
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return used - bound - _KNOWN


class Refactorer:
    """The scripted model: the correct refactoring of every group, one wrong one once."""

    def __init__(self) -> None:
        self.wrong_sent: str | None = None

    def __call__(self, messages: list[Any]) -> str:
        shown = messages[0].content.split("### Answer format")[0]
        programs = dict(_PROGRAM.findall(shown))
        texts: dict[str, dict[str, str]] = {}
        for task, source in programs.items():
            tree = _defs(source)
            texts[task] = {n: ast.get_source_segment(source, d) or "" for n, d in tree.items()}
        shared: dict[str, str] = {}
        names = {n for t in texts.values() for n in t if n != "transform"}
        for name in sorted(names):
            versions = [t[name] for t in texts.values() if name in t]
            if len(versions) >= 2 and len(set(versions)) == 1:
                shared[name] = versions[0]
        while True:  # only functions needing numpy, builtins and each other
            drop = {n for n, text in shared.items() if _needs(_defs(text)[n]) - set(shared)}
            if not drop:
                break
            shared = {n: t for n, t in shared.items() if n not in drop}
        if not shared:
            return "No routine is shared."
        answer = ["<helpers>\n```python\nimport numpy as np\n\n"]
        answer += [text + "\n\n" for text in shared.values()]
        answer.append("```\n</helpers>\n")
        users = [t for t in programs if set(shared) & set(texts[t])]
        for task in users:
            answer.append(self._program(task, programs[task], shared, texts[task]))
        if self.wrong_sent is None:
            others = [t for t in programs if t not in users]
            if others and users:
                self.wrong_sent = others[0]
                answer.append(
                    f'<program task="{others[0]}">\n```python\n'
                    f"{programs[others[0]].rstrip()}{WRONG}```\n</program>\n"
                )
        return "".join(answer)

    @staticmethod
    def _program(task: str, source: str, shared: dict[str, str], own: dict[str, str]) -> str:
        lines = source.splitlines(keepends=True)
        drop: set[int] = set()
        for name, node in _defs(source).items():
            if name in shared and own[name] == shared[name]:
                drop |= set(range(node.lineno - 1, node.end_lineno or node.lineno))
        imported = ", ".join(n for n in shared if n in own)
        body = "".join(line for i, line in enumerate(lines) if i not in drop)
        text = f"from arcmemo_library import {imported}\n{body}"
        return f'<program task="{task}">\n```python\n{text.rstrip()}\n```\n</program>\n'


def measure(seeds_dir: Path) -> dict[str, Any]:
    programs = {p.stem: p.read_text(encoding="utf-8") for p in sorted(seeds_dir.glob("*.py"))}
    tasks = load_split("training", wanted=set(programs))
    inputs = {t.id: ([p.input for p in t.train], list(t.test_inputs)) for t in tasks}
    script = Refactorer()
    model = ModelClient(ScriptedProvider.from_script(script, model="refactorer"))
    memory = Memory(domain="arc")
    began = time.perf_counter()
    with SANDBOXES.create("bwrap") as sandbox:
        report, _ = asyncio.run(refactor_with_model(programs, inputs, memory, sandbox, model))
    rejected = {r.task_id: r.rejected for r in report.rewrites if not r.kept}
    return {
        "programs": len(programs),
        "groups": report.groups,
        "groups_by": report.groups_by,
        "model_calls": report.model_calls,
        "proposals": report.proposals,
        "rewrites_kept": report.kept,
        "rewrites_rejected": rejected,
        "wrong_rewrite_sent_for": script.wrong_sent,
        "functions_kept": len(report.functions_kept),
        "functions_rejected": len(report.functions_rejected),
        "functions_reused": len(report.functions_reused),
        "functions_reused_distinct": len(set(report.functions_reused)),
        "functions_pruned": report.functions_pruned,
        "tokens_before": report.tokens_before,
        "tokens_after": report.tokens_after,
        "library_tokens": report.library_tokens,
        "imports": sum(report.imports_per_program.values()),
        "seconds": round(time.perf_counter() - began, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seeds", type=Path, help="Folder of <task id>.py seed programs.")
    parser.add_argument("--json", type=Path, help="Also write the numbers here.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["ARCMEMO_CACHE_DIR"] = cache  # a scripted answer is never a cached one
        result = measure(args.seeds)
    print(f"programs                {result['programs']}")
    print(f"groups                  {result['groups']} ({result['groups_by']})")
    print(f"model calls             {result['model_calls']} ({result['proposals']} usable)")
    print(f"rewrites kept           {result['rewrites_kept']}")
    print(f"rewrites rejected       {len(result['rewrites_rejected'])}")
    for task, why in result["rewrites_rejected"].items():
        print(f"  {task}: {why}")
    print(f"output-changing sent    {result['wrong_rewrite_sent_for']}")
    print(
        f"functions kept          {result['functions_kept']} ({result['functions_rejected']} not)"
    )
    print(
        f"functions reused        {result['functions_reused']} times "
        f"({result['functions_reused_distinct']} functions)"
    )
    print(f"functions pruned        {len(result['functions_pruned'])}")
    print(f"imports                 {result['imports']}")
    print(
        f"tokens                  {result['tokens_before']} -> {result['tokens_after']} "
        f"(+{result['library_tokens']} library, once)"
    )
    print(f"seconds                 {result['seconds']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
