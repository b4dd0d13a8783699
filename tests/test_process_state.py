"""Library calls leave the host process as they found it: in a fresh interpreter, importing
arcmemo and loading, rendering, selecting from and saving a memory through the public API
changes no YAML dumper's representers and never calls ``gc.disable``, ``gc.freeze`` or
``gc.unfreeze``. Inside :func:`arcmemo.collector_pauses` (what the ``arcmemo`` command
enters) the same calls do pause the collector."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ROOT = Path(__file__).resolve().parent.parent

# Run in a fresh interpreter: the recorders are installed and the dumpers snapshot before
# arcmemo (or anything importing it) is imported.
PROGRAM = r"""
import asyncio, contextlib, gc, json, sys
from pathlib import Path

import yaml

DUMPERS = [yaml.SafeDumper, yaml.Dumper]
for name in ("CSafeDumper", "CDumper"):  # when libyaml is built in
    if hasattr(yaml, name):
        DUMPERS.append(getattr(yaml, name))


def tables():
    return {
        d.__name__: [sorted(map(repr, t.items())) for t in
                     (d.yaml_representers, d.yaml_multi_representers)]
        for d in DUMPERS
    }


before = tables()
calls = []
for name in ("disable", "freeze", "unfreeze"):
    real = getattr(gc, name)

    def recording(*args, _name=name, _real=real):
        calls.append(_name)
        return _real(*args)

    setattr(gc, name, recording)

memory_path, task_dir, out_dir, allowed = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4]
import arcmemo

scope = arcmemo.collector_pauses() if allowed == "1" else contextlib.nullcontext()
with scope:
    memory = arcmemo.Memory.load(memory_path)
    for view in ("full", "compressed", "selection", "solve"):
        memory.render(view)
    benchmark = arcmemo.BENCHMARKS.create("arc-agi-1")
    (task,) = benchmark.load(split=None, data=task_dir, task_ids=["66e6c45b"], limit=None)
    selector = arcmemo.SELECTORS.create("all")
    prepared = asyncio.run(
        arcmemo.prepare_prompt(benchmark, task, memory=memory, selector=selector)
    )
    memory.concepts[0].cues.append("seen in a test")
    memory.save(out_dir / "saved.json")
    again = arcmemo.Memory.load(out_dir / "saved.json")
    benchmark.close()
print(json.dumps({
    "calls": calls,
    "same": tables() == before,
    "selected": prepared.selection.selected if prepared.selection else None,
    "concepts": len(again.concepts),
}))
"""


def _run(tmp_path: Path, *, allowed: bool) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    memory, tasks = FIXTURES / "memory" / "valid_small.json", FIXTURES / "arc" / "eval"
    flag = "1" if allowed else "0"
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(memory), str(tasks), str(tmp_path), flag],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return report


def test_the_public_api_leaves_the_collector_and_the_yaml_dumpers_alone(tmp_path: Path) -> None:
    report = _run(tmp_path, allowed=False)
    # the dumpers' tables unchanged (True), no call of the collector's switches ([])
    assert (report["same"], report["calls"]) == (True, [])
    # the calls did their work (a selection of the whole memory, a save that loads again)
    loaded = json.loads((FIXTURES / "memory" / "valid_small.json").read_text())
    assert report["concepts"] == len(loaded["concepts"])
    assert report["selected"]


def test_collector_pauses_lets_the_same_calls_pause_the_collector(tmp_path: Path) -> None:
    report = _run(tmp_path, allowed=True)
    assert report["same"]
    assert "disable" in report["calls"] and "freeze" not in report["calls"]
