"""``arcmemo table --convention``: the scores as the paper's text defines them (arcmemo) and
as the paper's published code computes them (published), on a designed run."""

from __future__ import annotations

import json
import shutil
from itertools import combinations
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.cli.main import cli
from arcmemo.core.records import Attempt, Step, TaskResult
from arcmemo.models.accounting import UsageSummary
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.summary import build_summary
from tests.support.task_results import aime_result

V1_ARC = Path(__file__).resolve().parents[1] / "fixtures" / "rundir" / "v1" / "arc-online"
T, F = True, False
# One step: (right per test input, right on every train pair).
StepSpec = tuple[list[bool], bool]

# The designed run: three attempts, one retry (depths 0 and 1), four tasks.
# - t1: attempt 0 is right on the test at once but wrong on a train pair, so it is retried,
#   and its retry is wrong: arcmemo counts the retry at depth 1, the published code the
#   first step; under strict scoring at depth 0 arcmemo counts it (test only), the published
#   code does not (train included).
# - t2: every attempt right at once, train too (no retry).
# - t3: attempt 0 fixed by its retry (train too).
# - t4: two test inputs; attempt 0 gets the first at depth 0 and the second at depth 1.
DESIGNED: dict[str, list[list[StepSpec]]] = {
    "t1": [[([T], F), ([F], F)], [([F], F), ([F], F)], [([F], F), ([F], F)]],
    "t2": [[([T], T)], [([T], T)], [([T], T)]],
    "t3": [[([F], F), ([T], T)], [([F], F), ([F], F)], [([F], F), ([F], F)]],
    "t4": [
        [([T, F], F), ([F, T], F)],
        [([F, F], F), ([F, F], F)],
        [([F, F], F), ([F, F], F)],
    ],
}
# oracle@2 by hand. Per credited unit with c of the 3 attempts right, a 2-subset holds one of
# them with probability 1 - C(3 - c, 2) / C(3, 2): c = 0 -> 0, 1 -> 2/3, 2 or 3 -> 1.
EXPECTED_ORACLE2 = {
    # (convention, strict, depth): (t1 + t2 + t3 + t4) / 4 tasks
    ("text", False, 0): (2 / 3 + 1 + 0 + (2 / 3 + 0) / 2) / 4,  # 50.00
    ("code", False, 0): (2 / 3 + 1 + 0 + (2 / 3 + 0) / 2) / 4,  # 50.00
    ("text", False, 1): (0 + 1 + 2 / 3 + (0 + 2 / 3) / 2) / 4,  # 50.00
    ("code", False, 1): (2 / 3 + 1 + 2 / 3 + (2 / 3 + 2 / 3) / 2) / 4,  # 75.00
    ("text", True, 0): (2 / 3 + 1 + 0 + 0) / 4,  # 41.67
    ("code", True, 0): (0 + 1 + 0 + 0) / 4,  # 25.00
    ("text", True, 1): (0 + 1 + 2 / 3 + 0) / 4,  # 41.67
    ("code", True, 1): (0 + 1 + 2 / 3 + 0) / 4,  # 41.67
}


def designed_results(*, train_recorded: bool = True) -> list[TaskResult]:
    results = []
    for task_id, attempts in DESIGNED.items():
        built = []
        for index, steps in enumerate(attempts):
            recorded = [
                Step(
                    round=r,
                    completion="",
                    correct=tests,
                    verified=train if train_recorded else None,
                )
                for r, (tests, train) in enumerate(steps)
            ]
            built.append(Attempt(index=index, steps=recorded, correct=steps[-1][0]))
        results.append(TaskResult(task_id=task_id, attempts=built))
    return results


def write_run(path: Path, results: list[TaskResult], order_seed: int | None = None) -> Path:
    writer = RunWriter(path)
    writer.start(
        RunConfig(
            benchmark="arc-agi-1",
            data="tasks",
            model="scripted:x",
            attempts=3,
            feedback_rounds=1,
            out=path,
            order_seed=order_seed,
        )
    )
    writer.write_task_order([r.task_id for r in results])
    for result in results:
        writer.append_result(result)
    config = writer.require_config()
    writer.write_summary(build_summary(config, ArcBenchmark(), results, UsageSummary(), 0.0))
    return path


def notebook_formula(depth: int, *, strict: bool) -> float:
    """The published code's reading, written from its definition over a flat table of cases
    (task, attempt, step, train?, case, right), one 2-subset of attempts at a time:
    official = per test case, any step up to ``depth`` of the subset right; per task the
    mean over its cases. strict = each attempt's last step up to ``depth`` right on every
    case, train included; per task any attempt of the subset. Mean over tasks, then over
    the 2-subsets."""
    cases = [
        (task, a, s, is_train, case, right)
        for task, attempts in DESIGNED.items()
        for a, steps in enumerate(attempts)
        for s, (tests, train) in enumerate(steps)
        for is_train, values in ((False, tests), (True, [train]))
        for case, right in enumerate(values)
    ]
    scores = []
    for subset in combinations(range(3), 2):
        total = 0.0
        for task in DESIGNED:
            rows = [c for c in cases if c[0] == task and c[1] in subset and c[2] <= depth]
            if strict:
                last = {a: max(c[2] for c in rows if c[1] == a) for a in subset}
                total += any(
                    all(c[5] for c in rows if c[1] == a and c[2] == last[a]) for a in subset
                )
            else:
                tests = {c[4] for c in rows if not c[3]}
                total += sum(
                    any(c[5] for c in rows if not c[3] and c[4] == case) for case in tests
                ) / len(tests)
        scores.append(total / len(DESIGNED))
    return sum(scores) / len(scores)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, ["table", *args], env={"COLUMNS": "300"})


def oracle2_by_depth(output: str) -> dict[int, float]:
    """The oracle@2 column of a Markdown table, per retry depth, as a fraction."""
    rows = [
        line.split("|")
        for line in output.splitlines()
        if line.startswith("| ") and "---" not in line
    ]
    header = [cell.strip() for cell in rows[0]]
    column = header.index("oracle@2")
    return {int(row[1]): float(row[column].split()[0]) / 100 for row in rows[1:]}


@pytest.mark.parametrize("strict", [False, True])
def test_the_hand_numbers_are_the_notebook_formula(strict: bool) -> None:
    for depth in (0, 1):
        assert notebook_formula(depth, strict=strict) == pytest.approx(
            EXPECTED_ORACLE2[("code", strict, depth)]
        )


@pytest.mark.parametrize("convention", ["text", "code"])
@pytest.mark.parametrize("strict", [False, True])
def test_designed_run_under_each_convention(tmp_path: Path, convention: str, strict: bool) -> None:
    run = write_run(tmp_path / "designed", designed_results())
    done = invoke(str(run), "--convention", convention, *(["--strict"] if strict else []))
    assert done.exit_code == 0, done.output
    got = oracle2_by_depth(done.output)
    for depth in (0, 1):
        assert got[depth] == pytest.approx(
            EXPECTED_ORACLE2[(convention, strict, depth)], abs=5e-5
        ), (depth, done.output)
    assert ("Code convention" in done.output) == (convention == "code")


def test_the_two_conventions_differ_where_the_issue_says(tmp_path: Path) -> None:
    # Any step (depth 1: 75.00 against 50.00) and train included (strict depth 0: 25.00
    # against 41.67); the default is arcmemo's.
    run = write_run(tmp_path / "designed", designed_results())
    default = oracle2_by_depth(invoke(str(run)).output)
    published = oracle2_by_depth(invoke(str(run), "--convention", "code").output)
    assert (published[1], default[1]) == (pytest.approx(0.75), pytest.approx(0.5))
    strict = oracle2_by_depth(invoke(str(run), "--strict").output)
    published_strict = oracle2_by_depth(invoke(str(run), "--strict", "--convention", "code").output)
    assert (published_strict[0], strict[0]) == (
        pytest.approx(0.25),
        pytest.approx(5 / 12, abs=5e-5),
    )
    summary = json.loads((run / "summary.json").read_text())
    assert summary["code_score"] == pytest.approx(0.75)
    assert summary["code_strict_score"] == pytest.approx(5 / 12)
    assert summary["score"] == pytest.approx(0.5)


def test_paired_comparison_under_the_published_convention(tmp_path: Path) -> None:
    run = write_run(tmp_path / "designed", designed_results())
    done = invoke(str(run), str(run), "--paired", "--convention", "code")
    assert done.exit_code == 0, done.output
    assert "oracle@2 at the final retry depth, code convention" in done.output


def test_over_orders_under_the_published_convention(tmp_path: Path) -> None:
    runs = [str(write_run(tmp_path / f"o{seed}", designed_results(), seed)) for seed in (0, 1)]
    done = invoke(*runs, "--over-orders", "--convention", "code")
    assert done.exit_code == 0, done.output
    row = next(line for line in done.output.splitlines() if line.startswith("| 1 | oracle@2 |"))
    assert row.split("|")[3].strip() == "75.00 (0.00)"
    assert "code convention, one setting over 2 task orders" in done.output


def test_a_run_without_train_records_says_not_recorded(tmp_path: Path) -> None:
    run = write_run(tmp_path / "old", designed_results(train_recorded=False))
    plain = invoke(str(run), "--convention", "code")
    assert plain.exit_code == 0, plain.output
    assert oracle2_by_depth(plain.output)[1] == pytest.approx(0.75)
    strict = invoke(str(run), "--convention", "code", "--strict")
    assert strict.exit_code == 0, strict.output
    assert "| 0 | old | – | – | – | – | – | – |" in strict.output
    assert "- old: the code convention is not recorded" in strict.output
    paired = invoke(str(run), str(run), "--paired", "--convention", "code", "--strict")
    assert paired.exit_code == 1
    assert "old: task t1: the code convention is not recorded" in paired.output


def test_a_version_1_run_is_recomputed_from_its_results(tmp_path: Path) -> None:
    # Its summary.json predates the published keys: the table reads results.jsonl, whose
    # steps carry their test correctness and train verification.
    run = shutil.copytree(V1_ARC, tmp_path / "arc-online")
    saved = (run / "summary.json").read_text()
    assert "code_by_retry" not in saved
    arcmemo = invoke(str(run))
    # The convention's retired spelling (published: code) still reads, with a warning.
    published = invoke(str(run), "--convention", "published", "--strict")
    assert arcmemo.exit_code == published.exit_code == 0, published.output
    assert "--convention published is deprecated; use --convention code" in published.output
    assert "not recorded" not in published.output
    # ca8de6ea and 00576224 are fixed by their retry; e345f17b has each attempt right on a
    # different test input, so under strict scoring neither counts.
    assert oracle2_by_depth(arcmemo.output) == {
        0: pytest.approx(0.4167, abs=5e-5),
        1: 0.75,
        2: 0.75,
    }
    assert oracle2_by_depth(published.output) == {0: pytest.approx(1 / 6, abs=5e-5), 1: 0.5, 2: 0.5}
    assert (run / "summary.json").read_text() == saved  # read, never rewritten


def test_published_is_refused_for_aime_runs(tmp_path: Path) -> None:
    writer = RunWriter(tmp_path / "aime")
    writer.start(
        RunConfig(benchmark="aime", data="p", model="scripted:x", attempts=1, out=tmp_path / "aime")
    )
    writer.append_result(aime_result("p1", 7, [7]))
    done = invoke(str(tmp_path / "aime"), "--convention", "code")
    assert done.exit_code == 1
    assert "--convention code is for ARC runs" in done.output
