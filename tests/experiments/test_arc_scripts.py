"""The ARC experiment scripts with a fake ``arcmemo`` on PATH (tests/experiments/test_all.py's):
the cheatsheet bootstrap's token cap, oe.sh's Table 1 row, and the paper's whole PS route
(its starting memory and few-shot examples from an arc_memo checkout, written here as small
fixtures in its formats)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from arcmemo.abstraction import ABSTRACTORS
from arcmemo.abstraction.examples import load_examples
from arcmemo.core.inlined_library import LIBRARY_BEGIN, LIBRARY_END
from tests.support.abstraction import (
    ITEM,
    PSEUDOCODE,
    Recorder,
    abstract,
    fenced,
    small_memory,
)
from tests.support.experiment_scripts import FAKE_ARCMEMO, run_all

REPO = Path(__file__).resolve().parents[2]
ARC = REPO / "experiments" / "arc"


def run_script(
    tmp: Path, name: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run experiments/arc/NAME with the fake arcmemo; the arcmemo calls it made."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "arcmemo"
    fake.write_text(FAKE_ARCMEMO)
    fake.chmod(0o755)
    log = tmp / "calls.log"
    environment = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": str(tmp),
        "FAKE_LOG": str(log),
        "RUNS": str(tmp / "runs"),
        "BOOTSTRAP": "training",
        "PYTHONPATH": str(REPO),
        **env,
    }
    done = subprocess.run(
        ["bash", str(ARC / name)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    return done, log.read_text().splitlines() if log.exists() else []


def cap_of(call: str) -> str:
    return call.split("--max-tokens ")[1].split()[0]


def test_the_cheatsheet_bootstrap_may_write_4096_tokens(tmp_path: Path) -> None:
    done, calls = run_script(tmp_path, "cheatsheet.sh")
    assert done.returncode == 0, done.stderr
    (bootstrap,) = [c for c in calls if c.startswith("abstract ")]
    assert "--memory-format cheatsheet" in bootstrap and cap_of(bootstrap) == "4096"
    # The other bootstraps keep the aux model's 1,024.
    done, calls = run_script(tmp_path, "ps.sh")
    assert done.returncode == 0, done.stderr
    (bootstrap,) = [c for c in calls if c.startswith("abstract ") and "format ps" in c]
    assert cap_of(bootstrap) == "1024"


def test_the_oe_row_keeps_its_first_selection_and_continual_reselects(tmp_path: Path) -> None:
    done, calls = run_script(tmp_path, "continual.sh")
    assert done.returncode == 0, done.stderr
    runs = {
        c.split("--out ")[1].split()[0].rsplit("/", 1)[1]: c for c in calls if c.startswith("run ")
    }
    assert "--no-reselect" in runs["arc-oe"].split()
    assert "--reselect" not in runs["arc-oe"].split()
    assert "--reselect" in runs["arc-continual"].split()


# Two annotated puzzles in op3a.yaml's format, and prelim2.yaml's; only the first has a seed
# program (with a library section, which the examples leave out).
OP3A: dict[str, dict[str, Any]] = {
    "aaaa0001": {
        "pseudocode": "for each object: recolor it blue\n",
        "summary": "recolor every object blue",
        "concepts": [
            {"concept": "recolor object", "kind": "routine", "routine_subtype": "grid manipulation"}
        ],
    },
    "bbbb0002": {
        "pseudocode": "mirror the grid left to right\n",
        "summary": "reflect the grid horizontally",
        "concepts": [{"concept": "reflect grid", "kind": "routine"}],
    },
}
PRELIM = {"concepts": [{"concept": "extract objects", "kind": "routine"}]}
SEED = (
    f"{LIBRARY_BEGIN} common.py\ndef helper(grid):\n    return grid\n{LIBRARY_END}\n"
    "def transform(grid):\n    return [[1 if v else 0 for v in row] for row in grid]\n"
)


def paper_checkout(tmp: Path) -> Path:
    checkout = tmp / "arc_memo"
    annotations = checkout / "data" / "abstract_anno" / "op3"
    annotations.mkdir(parents=True)
    (annotations / "op3a.yaml").write_text(yaml.safe_dump(OP3A, sort_keys=False))
    (annotations / "prelim2.yaml").write_text(yaml.safe_dump(PRELIM, sort_keys=False))
    return checkout


def seed_programs(tmp: Path) -> Path:
    """What `arcmemo seeds import-barc` leaves in $RUNS/barc-seeds (made here: the fake
    arcmemo converts nothing)."""
    seeds = tmp / "runs" / "barc-seeds"
    seeds.mkdir(parents=True)
    (seeds / "import-report.json").write_text("{}")
    (seeds / "aaaa0001.py").write_text(SEED)
    return seeds


def test_the_paper_route_builds_its_memory_and_examples_then_runs_val100(tmp_path: Path) -> None:
    checkout, seeds = paper_checkout(tmp_path), seed_programs(tmp_path)
    runs = tmp_path / "runs"
    done, calls = run_script(
        tmp_path, "ps-paper-route.sh", ARC_MEMO_DIR=str(checkout), BARC_DIR=str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    examples = runs / "paper-route-examples.yaml"
    memory = runs / "memory-paper-route.json"
    assert [c.split()[0] for c in calls] == ["memory", "abstract", "run"]
    assert calls[0].startswith(
        f"memory import arc-memo {checkout} --part annotations --out {memory}"
    )
    assert calls[1].startswith(
        f"abstract --from-programs {seeds} --memory {memory} --memory-format ps"
    )
    assert f"--memory-format-arg examples={examples}" in calls[1]
    assert " --split val100 " in calls[2] and " --select llm " in calls[2]
    assert f"--memory {memory}" in calls[2]
    # The examples: op3a's annotations, with the seed program where there is one (its
    # library section left out) and the pseudocode where there is none.
    shown = {e.task: e for e in load_examples(examples, "arc")}
    assert list(shown) == ["aaaa0001", "bbbb0002"]
    assert "def transform(grid)" in shown["aaaa0001"].program
    assert "def helper" not in shown["aaaa0001"].program
    assert shown["bbbb0002"].program == OP3A["bbbb0002"]["pseudocode"].strip()
    assert shown["aaaa0001"].concepts == OP3A["aaaa0001"]["concepts"]
    assert "pseudocode in place of a program for bbbb0002" in done.stdout
    # Abstracting the seed aaaa0001 with these examples never shows its own annotation.
    recorder = Recorder(PSEUDOCODE, fenced("- name: recolor object\n"))
    spec = ABSTRACTORS.spec("ps", {"examples": str(examples)})
    abstract(
        small_memory(), recorder, item=ITEM.model_copy(update={"task_id": "aaaa0001"}), spec=spec
    )
    prompts = recorder.prompt(0) + recorder.prompt(1)
    assert OP3A["aaaa0001"]["summary"] not in prompts
    assert OP3A["bbbb0002"]["summary"] in prompts


def test_the_paper_route_needs_the_checkout_and_barc(tmp_path: Path) -> None:
    done, calls = run_script(tmp_path, "ps-paper-route.sh", BARC_DIR=str(tmp_path))
    assert done.returncode != 0 and "ARC_MEMO_DIR" in done.stderr and not calls
    checkout = paper_checkout(tmp_path)
    done, calls = run_script(tmp_path, "ps-paper-route.sh", ARC_MEMO_DIR=str(checkout))
    assert done.returncode == 2 and "set BARC_DIR" in done.stderr and not calls
    # all.sh skips it, with the reason, when either is not set.
    listed = run_all(tmp_path, answer="n\n", ARC_MEMO_DIR=str(checkout))
    assert "skipped arc/ps-paper-route.sh: set BARC_DIR" in listed.stderr
