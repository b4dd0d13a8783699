"""``arcmemo.analysis.tables``: rows per setting and retry depth, cells a run lacks, the three
formats, AIME's layout, refusing runs that do not belong together, and the paired test."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from arcmemo.analysis import tables
from arcmemo.benchmarks.aime.benchmark import AimeBenchmark
from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.core.records import Attempt, Step, TaskResult
from arcmemo.models.accounting import UsageSummary
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.summary import build_summary
from tests.support.task_results import aime_result

T, F = True, False


def arc_result(task_id: str, *attempts: list[list[bool]]) -> TaskResult:
    """A task whose attempt ``a`` has one step per round with these per-test results."""
    built = [
        Attempt(
            index=a,
            steps=[Step(round=r, completion="", correct=c) for r, c in enumerate(rounds)],
            correct=rounds[-1],
        )
        for a, rounds in enumerate(attempts)
    ]
    return TaskResult(task_id=task_id, attempts=built)


def table_run(
    label: str, results: list[TaskResult], *, attempts: int, feedback_rounds: int
) -> tables.TableRun:
    return tables.TableRun(
        label=label,
        path=Path(label),
        benchmark="arc-agi-1",
        attempts=attempts,
        feedback_rounds=feedback_rounds,
        summary=ArcBenchmark().summarize(results, attempts),
        task_ids=frozenset(r.task_id for r in results),
    )


def aime_run(label: str, results: list[TaskResult]) -> tables.TableRun:
    attempts = len(results[0].metrics["answers"])
    return tables.TableRun(
        label=label,
        path=Path(label),
        benchmark="aime",
        attempts=attempts,
        feedback_rounds=0,
        summary=AimeBenchmark().summarize(results, attempts),
        task_ids=frozenset(r.task_id for r in results),
    )


# Three attempts; task "a" is fixed by a retry in attempt 0, task "b" has two test inputs.
THREE = [
    arc_result("a", [[F], [T]], [[F]], [[T]]),
    arc_result("b", [[T, F]], [[F, T]], [[F, F]]),
]
# Two attempts, no retry needed or made.
TWO = [arc_result("a", [[T]], [[F]]), arc_result("b", [[T, T]], [[F, F]])]


def test_rows_by_depth_then_setting_with_missing_cells() -> None:
    runs = [
        table_run("three", THREE, attempts=3, feedback_rounds=2),
        table_run("two", TWO, attempts=2, feedback_rounds=1),
    ]
    table = tables.build_table(runs)
    assert [c.name for c in table.columns] == [
        *("attempt 1", "attempt 2", "attempt 3", "oracle@1", "oracle@2", "oracle@3"),
    ]
    assert [keys for keys, _ in table.rows] == [
        ["0", "three"],
        ["0", "two"],
        ["1", "three"],
        ["1", "two"],
        ["2", "three"],  # "two" allows one retry only
    ]
    text = tables.render(table, "md")
    # depth 0 of "three": a = [F, F, T], b = [[T, F], [F, T], [F, F]]
    assert "| 0 | three | 25.00 | 25.00 | 50.00 | 33.33 (14.43) | 66.67 (14.43) | 100.00 |" in text
    # depth 2 equals depth 1 (no attempt went further): a = [T, F, T]
    assert "| 2 | three | 75.00 | 25.00 | 50.00 | 50.00 (25.00) | 83.33 (14.43) | 100.00 |" in text
    # "two" has no third attempt; its depth 1 repeats depth 0 (nothing was retried)
    assert "| 1 | two | 100.00 | 0.00 | – | 50.00 (70.71) | 100.00 | – |" in text


def test_strict_rows() -> None:
    text = tables.render(
        tables.build_table([table_run("three", THREE, attempts=3, feedback_rounds=0)], strict=True),
        "md",
    )
    # strict at depth 0: a = [F, F, T]; b has no attempt right on both test inputs
    assert "| 0 | three | 0.00 | 0.00 | 50.00 | 16.67 (28.87) | 33.33 (28.87) | 50.00 |" in text
    assert "strict (one program right on every test input)" in text


def test_csv_has_a_std_column_per_oracle_and_empty_missing_cells() -> None:
    runs = [
        table_run("three", THREE, attempts=3, feedback_rounds=0),
        table_run("two", TWO, attempts=2, feedback_rounds=0),
    ]
    table = tables.build_table(runs)
    text = tables.render(table, "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 1 + len(table.rows)  # data only: the notes are footnotes
    assert tables.footnotes(table, "csv") == table.notes != []
    assert rows[0] == [
        *(
            "feedback rounds",
            "setting",
            "attempt 1",
            "attempt 2",
            "attempt 3",
            "oracle@1",
            "oracle@1_std",
        ),
        *("oracle@2", "oracle@2_std", "oracle@3", "oracle@3_std"),
    ]
    assert rows[2] == [
        "0",
        "two",
        "100.0000",
        "0.0000",
        "",
        "50.0000",
        "70.7107",
        "100.0000",
        "",
        "",
        "",
    ]
    assert tables.footnotes(table, "csv")[0].startswith("ARC scores in percent over 2 tasks")


def test_labels_are_escaped_for_markdown_and_latex() -> None:
    run = table_run("PS_v2 | 50% & more", TWO, attempts=2, feedback_rounds=0)
    table = tables.build_table([run])
    assert "| 0 | PS_v2 \\| 50% & more |" in tables.render(table, "md")
    latex = tables.render(table, "latex")
    assert "0 & PS\\_v2 | 50\\% \\& more & 100.00" in latex
    assert latex.startswith("\\begin{tabular}{rlrrrr}\n\\toprule\n")
    assert tables.latex_escape("a~b^c\\d{e}$#") == (
        "a\\textasciitilde{}b\\textasciicircum{}c\\textbackslash{}d\\{e\\}\\$\\#"
    )


def test_no_std_note_above_the_subset_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from arcmemo.benchmarks.arc import scoring

    monkeypatch.setattr(scoring, "MAX_SUBSETS", 2)
    text = tables.render(
        tables.build_table([table_run("three", THREE, attempts=3, feedback_rounds=0)]), "md"
    )
    assert "| 0 | three | – | – | – | 33.33 | 66.67 | 100.00 |" in text
    assert "No std where an oracle@k has more than 2,000 subsets" in text


def test_runs_of_different_benchmarks_or_task_sets_are_refused() -> None:
    arc = table_run("arc-run", TWO, attempts=2, feedback_rounds=0)
    other_tasks = table_run("fewer", TWO[:1], attempts=2, feedback_rounds=0)
    with pytest.raises(tables.TableError, match=r"different task sets: arc-run .* and fewer"):
        tables.build_table([arc, other_tasks])
    aime = aime_run("aime-run", [aime_result("a", 1, [1, 2]), aime_result("b", 2, [2, 2])])
    with pytest.raises(
        tables.TableError,
        match=r"^runs of different benchmarks: arc-run \(arc-agi-1\) and aime-run \(aime\)$",
    ):
        tables.build_table([arc, aime])
    unknown = tables.TableRun("old", Path("old"), "arc-agi-1", 2, 0, {"score": 0.5}, arc.task_ids)
    with pytest.raises(tables.TableError, match=r"no table layout .*: old"):
        tables.build_table([arc, unknown])


def test_aime_table() -> None:
    results = [
        aime_result("p1", 5, [5, 5, 1]),
        aime_result("p2", 7, [1, 7, 2]),
        aime_result("p3", 9, [None, 2, 2]),
    ]
    run = aime_run("aime", results)
    text = tables.render(tables.build_table([run]), "md")
    assert text.startswith(
        "| setting | pass@1 | pass@2 | pass@3 | maj@3 |\n|:---|---:|---:|---:|---:|\n"
    )
    # pass@1: 2/3, 1/3, 0; pass@2: 1, 2/3, 0; pass@3: 1, 1, 0; maj@3: 1, 0, 0
    assert "| aime | 33.33 (33.33) | 55.56 (50.92) | 66.67 (57.74) | 33.33 (57.74) |" in text
    with pytest.raises(tables.TableError, match="--strict is for ARC runs"):
        tables.build_table([run], strict=True)


def write_run(
    path: Path,
    results: list[TaskResult],
    *,
    attempts: int,
    complete: bool = True,
    order: list[str] | None = None,
    with_summary: bool = True,
    **config: object,
) -> Path:
    writer = RunWriter(path)
    writer.start(
        RunConfig(
            **{
                "benchmark": "arc-agi-1",
                "data": "tasks",
                "model": "scripted:x",
                "attempts": attempts,
                "feedback_rounds": 0,
                "out": path,
                **config,
            }
        )
    )
    writer.write_task_order(order or [r.task_id for r in results])
    for result in results:
        writer.append_result(result)
    if with_summary:
        summary = build_summary(
            writer.require_config(), ArcBenchmark(), results, UsageSummary(), 0.0
        )
        writer.write_summary(summary.model_copy(update={"complete": complete}))
    return path


def test_paired_comparison_of_two_run_directories(tmp_path: Path) -> None:
    better = [arc_result(f"t{i}", [[T]], [[i % 2 == 0]]) for i in range(6)]
    worse = [arc_result(f"t{i}", [[i < 2]], [[F]]) for i in range(6)]
    a = tables.load_run(write_run(tmp_path / "better", better, attempts=2))
    b = tables.load_run(write_run(tmp_path / "worse", worse, attempts=2, complete=False))
    result = tables.paired(a, b)
    assert result.stats.n_tasks == 6
    assert (result.stats.wins, result.stats.losses, result.stats.ties) == (4, 0, 2)
    assert result.stats.mean_difference == pytest.approx(4 / 6)
    assert result.stats.sign_p == pytest.approx(2 / 16)
    assert (result.stats.only_first, result.stats.only_second) == (4, 0)
    assert result.differences == [("t2", 1.0), ("t3", 1.0), ("t4", 1.0), ("t5", 1.0)]
    text = tables.render(tables.build_table([a, b]), "md", comparison=result)
    assert "Paired comparison better − worse on 6 tasks" in text
    assert "- sign test: 4 wins, 0 losses, 2 ties; exact two-sided p = 0.125" in text
    assert (
        "- McNemar ('solved' = every test input right in one of the 2 attempts): solved by "
        "better only 4, by worse only 0 (both 2, neither 0)"
    ) in text
    assert "- tasks that differ: t2 +100.00, t3 +100.00, t4 +100.00, t5 +100.00" in text
    assert "- worse: summary.json marks the run incomplete" in text
    same = tables.paired(a, a)
    assert same.stats.mean_difference == 0 and same.stats.sign_p == 1.0 and not same.differences


def test_one_setting_over_task_orders_mean_std_and_each_order(tmp_path: Path) -> None:
    # Three orders of the same two tasks: oracle@1 is 1/2, 1/4 and 0 (attempt 1 never right).
    per_order = [
        [arc_result("a", [[T]], [[F]]), arc_result("b", [[T]], [[F]])],
        [arc_result("a", [[T]], [[F]]), arc_result("b", [[F]], [[F]])],
        [arc_result("a", [[F]], [[F]]), arc_result("b", [[F]], [[F]])],
    ]
    runs = [
        tables.load_run(write_run(tmp_path / f"o{seed}", results, attempts=2, order_seed=seed))
        for seed, results in enumerate(per_order)
    ]
    table = tables.orders_table(runs)
    assert [c.name for c in table.columns] == ["mean", "order 0", "order 1", "order 2"]
    rows = {tuple(keys): cells for keys, cells in table.rows}
    oracle_1 = rows[("0", "oracle@1")]
    assert [c.value for c in oracle_1[1:]] == [0.5, 0.25, 0.0]
    assert oracle_1[0].value == pytest.approx(0.25)
    assert oracle_1[0].std == pytest.approx(0.25)  # sample std of 0.5, 0.25, 0
    assert [c.value for c in rows[("0", "oracle@2")][1:]] == [1.0, 0.5, 0.0]
    text = tables.render(table, "md")
    assert "| 0 | oracle@1 | 25.00 (25.00) | 50.00 | 25.00 | 0.00 |" in text
    assert "one setting over 3 task orders" in text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model": "scripted:y"}, "differ in roles.solver.model ('scripted:x' vs 'scripted:y')"),
        ({"attempts": 3}, "differ in attempts (2 vs 3)"),
        ({"order_seed": 0}, "o0 and o1 are the same task order (order 0)"),
    ],
)
def test_runs_over_orders_differ_only_in_order_seed_and_replicate(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    results = [arc_result("a", [[T]], [[F]])]
    fields: dict[str, object] = {"attempts": 2, "order_seed": 1} | change
    first = tables.load_run(write_run(tmp_path / "o0", results, attempts=2, order_seed=0))
    second = tables.load_run(write_run(tmp_path / "o1", results, **fields))
    with pytest.raises(tables.TableError, match=re.escape(message)):
        tables.orders_table([first, second])
    replicate = tables.load_run(
        write_run(tmp_path / "r1", results, attempts=2, order_seed=0, replicate=1)
    )
    assert [c.name for c in tables.orders_table([first, replicate]).columns][1:] == [
        "order 0",
        "order 0 rep 1",
    ]


def test_notes_name_the_tasks_each_runs_figures_come_from(tmp_path: Path) -> None:
    ids = [f"t{i}" for i in range(10)]
    results = [arc_result(t, [[T]], [[F]]) for t in ids]
    done = tables.load_run(write_run(tmp_path / "done", results, attempts=2))
    # Stopped after 2 of its 10 tasks: no summary.json, figures from results.jsonl.
    unfinished = tables.load_run(
        write_run(tmp_path / "unfinished", results[:2], attempts=2, order=ids, with_summary=False)
    )
    # A merge of the shards that finished: a summary of 6 of the 10 tasks.
    merged = tables.load_run(
        write_run(tmp_path / "merged", results[:6], attempts=2, order=ids, complete=False)
    )
    text = tables.render(tables.build_table([done, unfinished, merged]), "md")
    assert (
        "- ARC scores in percent over each run's finished tasks only, of 10 (done: 10, "
        "unfinished: 2, merged: 6)."
    ) in text
    assert "over 10 tasks" not in text
    alone = tables.render(tables.build_table([done]), "md")
    assert "- ARC scores in percent over 10 tasks." in alone
    orders = tables.render(
        tables.orders_table(
            [
                done,
                tables.load_run(
                    write_run(tmp_path / "o1", results[:2], attempts=2, order=ids, order_seed=1)
                ),
            ]
        ),
        "md",
    )
    assert "over each run's finished tasks only, of 10 (done: 10, o1: 2)" in orders


def test_aime_notes_name_the_problems_each_runs_figures_come_from() -> None:
    results = [aime_result("p1", 5, [5, 5, 1]), aime_result("p2", 7, [1, 7, 2])]
    run = aime_run("aime", results)
    run.task_ids = frozenset({"p1", "p2", "p3", "p4"})
    text = tables.render(tables.build_table([run]), "md")
    assert "AIME scores in percent over each run's finished problems only, of 4 (aime: 2)" in (text)


@pytest.mark.parametrize(
    ("summary", "count"),
    [
        ({"n_scored": 6, "n_tasks": 8}, 6),
        ({"n_tasks": 6}, 6),  # a summary written before n_scored
        ({"n_tasks": 6, "n_unlabelled": 1}, 5),
        ({}, 3),  # nothing counted: the task set
    ],
)
def test_the_count_of_tasks_behind_a_runs_figures(summary: dict[str, int], count: int) -> None:
    from arcmemo.benchmarks.outputs import figures_tasks

    run = tables.TableRun(
        label="r",
        path=Path("r"),
        benchmark="arc-agi-1",
        attempts=2,
        feedback_rounds=0,
        summary=dict(summary),
        task_ids=frozenset({"a", "b", "c"}),
    )
    assert figures_tasks(run) == count


def test_paired_runs_must_have_the_same_attempts(tmp_path: Path) -> None:
    two = [arc_result(f"t{i}", [[T]], [[F]]) for i in range(3)]
    three = [arc_result(f"t{i}", [[F]], [[F]], [[T]]) for i in range(3)]
    a = tables.load_run(write_run(tmp_path / "two", two, attempts=2))
    b = tables.load_run(write_run(tmp_path / "three", three, attempts=3))
    message = (
        "two has 2 attempts and three 3: a paired comparison needs runs with the same number "
        "of attempts (a task's score and 'solved' count all of a run's attempts)"
    )
    with pytest.raises(tables.TableError, match=re.escape(message)):
        tables.paired(a, b)
    with pytest.raises(tables.TableError, match=re.escape(message)):
        tables.paired(a, b, strict=True)


def test_mcnemars_solved_is_stated_for_strict_arc_and_aime(tmp_path: Path) -> None:
    results = [arc_result(f"t{i}", [[T]], [[F]]) for i in range(3)]
    a = tables.load_run(write_run(tmp_path / "a", results, attempts=2))
    strict = tables.paired_lines(tables.paired(a, a, strict=True))
    assert strict[3].startswith(
        "McNemar ('solved' = one of the 2 attempts right on every test input): solved by a only 0"
    )
    assert AimeBenchmark().paired_solved(attempts=3, strict=False) == "one of the 3 samples right"
