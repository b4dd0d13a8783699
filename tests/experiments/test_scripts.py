"""Every script under ``experiments/`` has a CPU part that CI runs, so none rots unseen.

A script is covered by a test module that runs it on tiny inputs (named in ``COVERED``) or,
where the whole script needs what CI lacks (a second checkout, a paid API, a GPU), at least
by its argument parsing here. A new script fails ``test_every_script_is_covered`` until it
is given one of the two.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = REPO / "experiments"

# script (relative to experiments/) -> the test module that runs its CPU part on tiny inputs
COVERED = {
    "all.sh": "tests/experiments/test_all.py",
    "common.sh": "tests/experiments/test_all.py",  # sourced by all.sh and every row script
    "estimate_total.py": "tests/experiments/test_all.py",  # all.sh prints its table
    "arc/baseline.sh": "tests/experiments/test_all.py",
    "arc/cheatsheet.sh": "tests/experiments/test_arc_scripts.py",
    "arc/continual.sh": "tests/experiments/test_all.py",
    "arc/oe.sh": "tests/experiments/test_arc_scripts.py",
    "arc/ps.sh": "tests/experiments/test_arc_scripts.py",
    "arc/ps-no-selection.sh": "tests/experiments/test_all.py",
    "arc/ps-paper-memory.sh": "tests/experiments/test_all.py",
    "arc/ps-paper-route.sh": "tests/experiments/test_arc_scripts.py",
    "aime/baseline.sh": "tests/experiments/test_all.py",
    "aime/oe.sh": "tests/experiments/test_all.py",
    "aime/ps.sh": "tests/experiments/test_all.py",
    "paper_examples.py": "tests/experiments/test_arc_scripts.py",  # the paper route runs it
    "bench_memory.py": "tests/experiments/test_bench_memory.py",
    "library_build.py": "tests/experiments/test_library_build.py",
    "library_loo.py": "tests/library/test_library_loo.py",
    "load_floor.py": "tests/experiments/test_load_floor.py",
    "jetspec_gpu.py": "tests/experiments/test_jetspec_gpu.py",
    "jetspec_gpu.sh": "tests/experiments/test_jetspec_gpu.py",  # each call's arguments
    "bench_concurrency.py": "tests/experiments/test_scripts.py",
    "behaviour_cost.py": "tests/experiments/test_scripts.py",
    "learning_from_failure.py": "tests/experiments/test_scripts.py",
    "scale/submit.sh": "tests/experiments/test_scale_slurm.py",
    "training/chain_model.py": "tests/train/test_training.py",  # the scripted model it trains
    "training/citations_vs_judge.py": "tests/experiments/test_citations_vs_judge.py",
    "game24/baseline.sh": "tests/experiments/test_game24_scripts.py",
    "game24/cheatsheet.sh": "tests/experiments/test_game24_scripts.py",
    "game24/concepts.sh": "tests/experiments/test_game24_scripts.py",
    "game24/common.sh": "tests/experiments/test_game24_scripts.py",  # sourced by each
}
# imported only: its one run is a minute of `arcmemo train` (tests/train runs that training
# through the CLI in-process; the script's own subprocess call is not run in CI)
IMPORTED_ONLY = ("training/learning_curve.py",)
# run by another script that the named test module runs (all.sh, the paper route)
RUN_BY_OTHERS = (
    "common.sh",
    "estimate_total.py",
    "paper_examples.py",
    "arc/ps-paper-memory.sh",
    "game24/common.sh",
)
# Scripts whose every run needs another checkout, BARC's seed programs (fetched by the
# user), a tokenizer package CI does not install or a long scripted run: CI parses their
# arguments (which imports all they import).
ARGUMENTS_ONLY = (
    "bench_learning.py",
    "hindsight_barc.py",
    "refactor_barc.py",
    "compare_outputs.py",
    "parsers_bench.py",
    "bench_report.py",
    "bench_run.py",
    "bench_rundir.py",
    "bench_sandbox.py",
    "grid_tokens.py",
    "smollm2_prompt_tokens.py",
)


def _scripts() -> list[str]:
    found = [*EXPERIMENTS.glob("*.py"), *EXPERIMENTS.glob("*.sh"), *EXPERIMENTS.glob("*/*.sh")]
    found += EXPERIMENTS.glob("*/*.py")
    return sorted(str(path.relative_to(EXPERIMENTS)) for path in found)


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=REPO, timeout=timeout
    )


def test_every_script_is_covered() -> None:
    scripts = _scripts()
    named = [*COVERED, *ARGUMENTS_ONLY, *IMPORTED_ONLY]
    missing = [s for s in scripts if s not in named]
    assert not missing, f"give these a CPU test on tiny inputs: {missing}"
    assert sorted(named) == scripts  # no stale names
    for script, module in COVERED.items():
        if script not in RUN_BY_OTHERS:
            assert Path(script).stem in (REPO / module).read_text(), (script, module)


@pytest.mark.slow
@pytest.mark.parametrize("script", [*ARGUMENTS_ONLY, "jetspec_gpu.py"])
def test_arguments_parse(script: str) -> None:
    done = _run(str(EXPERIMENTS / script), "--help")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


def test_estimate_total_adds_up_runs(tmp_path: Path) -> None:
    for name, calls in (("arc/ps", 10), ("aime/oe", 5)):
        folder = tmp_path / name
        folder.mkdir(parents=True)
        span = {"low": calls, "high": 2 * calls}
        total = {"calls": span, "input_tokens": span, "output_tokens": span, "cost_usd": None}
        (folder / "estimate.json").write_text(json.dumps({"total": total}))
    done = _run(str(EXPERIMENTS / "estimate_total.py"), str(tmp_path))
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.strip().startswith("total"))
    assert "15 - 30" in row and "unknown (no price)" in row
    assert _run(str(EXPERIMENTS / "estimate_total.py"), str(tmp_path / "none")).returncode == 1


@pytest.mark.slow
def test_bench_concurrency_on_a_few_calls() -> None:
    done = _run(
        str(EXPERIMENTS / "bench_concurrency.py"),
        *("--calls", "4", "--concurrency", "2", "--latency", "0.01", "--repeats", "1"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "openai:bench-model" in done.stdout and "peak in flight 2" in done.stdout
    assert "cache hit overhead" in done.stdout


@pytest.mark.slow
def test_behaviour_cost_on_a_small_library(tmp_path: Path) -> None:
    out = tmp_path / "cost.json"
    done = _run(
        str(EXPERIMENTS / "behaviour_cost.py"),
        *("--sizes", "8", "--sandbox", "process", "--workers", "1", "--chunk", "4"),
        *("--json", str(out)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "functions" in done.stdout and out.is_file()


@pytest.mark.slow
def test_learning_from_failure_runs_both_arms() -> None:
    done = _run(str(EXPERIMENTS / "learning_from_failure.py"))
    assert done.returncode == 0, done.stderr[-2000:]
    arms = json.loads(done.stdout)["contrast"]
    assert [arm["contrast"] for arm in arms] == [False, True]
    assert all({"solved", "model_calls", "pitfalls"} <= set(arm) for arm in arms)


@pytest.mark.parametrize("script", IMPORTED_ONLY)
def test_imports(script: str) -> None:
    path = EXPERIMENTS / script
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # a __main__ guard keeps it from running
    assert callable(module.main)
