"""``experiments/training/citations_vs_judge.py``: citation verdicts against the judge's,
on a run directory with cited steps and a scripted judge."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arcmemo.core.records import Attempt, Selection, Step, TaskResult
from arcmemo.memory.schema import Concept, Memory, Provenance
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.writer import RunWriter
from arcmemo.signals.base import WRITE_SIGNALS

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "experiments" / "training" / "citations_vs_judge.py"
SHOWN = ["zigzag marker", "flood fill"]
# The judge says every solution used "flood fill" and nothing else.
JUDGE = {"Decide, for each concept": "```yaml\n- flood fill\n```"}


def result(task_id: str, verified: bool, cited: list[str], unshown: list[str]) -> TaskResult:
    program = "def transform(grid):\n    return grid\n"
    step = Step(
        round=0,
        completion=program,
        candidate=program,
        verified=verified,
        concepts=SHOWN,
        cited=cited,
        cited_unshown=unshown,
    )
    return TaskResult(
        task_id=task_id,
        solved=verified,
        selection=Selection(selector="all", selected=SHOWN),
        attempts=[Attempt(index=0, steps=[step])],
    )


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


def test_agreement_and_disagreement_counts(tmp_path: Path) -> None:
    memory = tmp_path / "memory.json"
    concepts = [
        Concept(name=n, kind="routine", description=n, provenance=Provenance(sources=["s"]))
        for n in SHOWN
    ]
    Memory(concepts=concepts).save(memory)
    out = tmp_path / "run"
    config = RunConfig(
        benchmark="arc-agi-1",
        split="evaluation",
        model="scripted:solver",
        memory=memory,
        selector="all",
        write_signal=WRITE_SIGNALS.spec("train"),
        cite=True,
        out=out,
    )
    writer = RunWriter(out)
    writer.start(config)
    writer.append_results(
        [
            # t1 confirmed, cites zigzag: citations zigzag helpful / fill unused; the
            # judge the reverse. t2 unconfirmed, cites fill: harmful for both sources.
            result("t1", True, ["zigzag marker"], ["ghost idea"]),
            result("t2", False, ["flood fill"], []),
        ]
    )
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(JUDGE))
    record_path = tmp_path / "record.json"
    command = [sys.executable, str(SCRIPT), str(out), "--judge-model", f"scripted:{judge}"]
    done = subprocess.run(
        [*command, "--json", str(record_path)], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(record_path.read_text())
    assert (record["compared"], record["agree"], record["disagree"]) == (4, 2, 2)
    assert record["pairs"] == {
        "harmful/harmful": 1,
        "helpful/unused": 1,
        "unused/helpful": 1,
        "unused/unused": 1,
    }
    assert record["cited_unshown"] == 1
    assert "4 (task, concept) verdicts compared: 2 agree (50%), 2 disagree" in done.stdout
    assert "t1: zigzag marker: helpful vs unused" in done.stdout
