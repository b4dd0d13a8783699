"""Prompt variants per task (``--variants``): each variant its own selection and attempts,
records that name their variant, a replay that pays nothing twice, and ARC scores that count
attempt j of every variant together as run j."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from arcmemo.analysis.report import load_run, render_report
from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.benchmarks.arc.scoring import run_scores
from arcmemo.core.records import Attempt, Selection, Step, TaskResult
from arcmemo.memory.seeds import load_seed
from arcmemo.models.accounting import UsageSummary
from arcmemo.models.cache import ResponseCache
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import dry_run, run_benchmark
from arcmemo.run.summary import build_summary
from tests.support.report_pages import task_section
from tests.support.scripted_models import loop_model

TASK = "66e6c45b"
REFLECT = "```yaml\n- name: reflect grid\n  reason: the corners mirror each other\n```"
TILE = "```yaml\n- name: tile grid\n  reason: the grid repeats\n```"


def _config(tmp_path: Path, out: str, **changes: Any) -> RunConfig:
    memory_path = tmp_path / "memory.json"
    if not memory_path.exists():
        load_seed("arc").save(memory_path)
    fields: dict[str, Any] = {
        "benchmark": "arc-agi-1",
        "split": "evaluation",
        "tasks": [TASK],
        "model": "scripted:solver",
        "attempts": 2,
        "variants": 2,
        "feedback_rounds": 1,
        "schedule": "passes",
        "out": tmp_path / out,
        "memory": memory_path,
        "selector": "llm",
    }
    return RunConfig.model_validate(fields | changes)


class Crash(BaseException):
    """A simulated kill: nothing in the program catches it."""


def _run(
    config: RunConfig, cache: Path, crash_at: int | None = None
) -> tuple[Any, list[TaskResult]]:
    """Run ``config`` with a scripted model (killed at its ``crash_at``-th call); the model
    and the results written."""
    lm = loop_model()
    # The selector answers differently on each call: only a variant's own selector call
    # (not a copy of the first variant's) gets the second answer.
    model = lm.LoopModel(
        answers={
            ("select", TASK): [REFLECT, TILE],
            ("solve", None): lm.program_answer(lm.IDENTITY),
        },
        arc_ids=[TASK],
    )

    def script(messages: list[Any]) -> str:
        if crash_at is not None and len(model.calls) + 1 >= crash_at:
            raise Crash(f"killed at model call {crash_at}")
        return str(model(messages))

    solver = ModelClient(
        ScriptedProvider.from_script(script, model="solver"), cache=ResponseCache(cache)
    )
    asyncio.run(run_benchmark(config, models={"solver": solver}))
    lines = (config.out / "results.jsonl").read_text().splitlines()
    return model, [TaskResult.model_validate_json(line) for line in lines]


def _steps(result: TaskResult) -> list[list[dict[str, Any]]]:
    return [
        [s.model_dump(exclude={"started_at", "finished_at"}) for s in a.steps]
        for a in result.attempts
    ]


def test_each_variant_selects_on_its_own_and_a_replay_pays_nothing_twice(tmp_path: Path) -> None:
    model, (result,) = _run(_config(tmp_path, "run"), tmp_path / "cache")
    selections = [s.selected for s in result.selections]
    assert sorted(selections) == [["reflect grid"], ["tile grid"]]
    assert len(model.of("select", TASK)) == 2
    # Two attempts per variant, numbered on across variants, each showing its variant's pick.
    assert [(a.index, a.variant) for a in result.attempts] == [(0, 0), (1, 0), (2, 1), (3, 1)]
    for attempt in result.attempts:
        assert len(attempt.steps) == 2  # the identity fails its train pairs: one retry
        assert {tuple(s.concepts) for s in attempt.steps} == {tuple(selections[attempt.variant])}
    # Each prompt, first try or retry, shows its variant's concept in full and not the other.
    memory = load_seed("arc")
    shown = {name: memory.find(name).description for name in ("reflect grid", "tile grid")}  # type: ignore[union-attr]
    solves = [c.prompt for c in model.of("solve", TASK)]
    assert len(solves) == 8  # 2 variants x 2 attempts x (first try + one retry)
    counts = {name: sum(text in p for p in solves) for name, text in shown.items()}
    assert counts == {"reflect grid": 4, "tile grid": 4}
    assert not any(all(text in p for text in shown.values()) for p in solves)
    assert result.tokens.prompt_tokens == sum(
        s.usage.prompt_tokens for a in result.attempts for s in a.steps
    ) + sum(s.usage.prompt_tokens for s in result.selections)

    # The same run again, in a new directory on the same response cache: every call is
    # answered from the cache, each variant its own answer, and the records are the same.
    again, (replayed,) = _run(_config(tmp_path, "again"), tmp_path / "cache")
    assert again.calls == []
    assert [s.selected for s in replayed.selections] == selections
    assert _steps(replayed) == _steps(result)

    # Killed at its first retry (after pass 0 committed), then resumed: the retries run from
    # each variant's recorded memory section, and only the calls never answered are made.
    with pytest.raises(Crash):
        _run(_config(tmp_path, "killed"), tmp_path / "fresh-cache", crash_at=7)
    resumed, (finished,) = _run(_config(tmp_path, "killed"), tmp_path / "fresh-cache")
    assert [c.stage for c in resumed.calls] == ["solve"] * 4  # the four retries
    assert [s.selected for s in finished.selections] == selections
    assert _steps(finished) == _steps(result)

    # Rerunning the finished run calls nothing.
    rerun, _ = _run(_config(tmp_path, "run"), tmp_path / "cache")
    assert rerun.calls == []
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_attempts"] == 2  # runs: attempts per variant


def test_the_dry_run_prices_every_variant(tmp_path: Path) -> None:
    def selection_calls(variants: int) -> tuple[float, float]:
        config = _config(tmp_path, f"dry{variants}", variants=variants)
        estimate = asyncio.run(dry_run(config)).estimate
        return estimate.stages["select"].calls.low, estimate.stages["solve"].calls.low

    one_select, one_solve = selection_calls(1)
    assert selection_calls(3) == (3 * one_select, 3 * one_solve)


def _attempt(index: int, variant: int, *tests: bool) -> Attempt:
    step = Step(round=0, completion="", correct=list(tests), verified=all(tests))
    return Attempt(index=index, variant=variant, steps=[step], correct=list(tests))


def _task(task_id: str, *rows: tuple[bool, ...]) -> TaskResult:
    """A task whose attempt i (variant i // 2) is right on the test inputs of ``rows[i]``."""
    attempts = [_attempt(i, i // 2, *row) for i, row in enumerate(rows)]
    return TaskResult(task_id=task_id, score=0.0, attempts=attempts)


def test_arc_scores_count_attempt_j_of_every_variant_as_run_j() -> None:
    # Two variants of two attempts (variant 0's first) on two-test tasks.
    split = _task("split", (True, False), (False, False), (False, True), (False, False))
    whole = _task("whole", (False, False), (False, False), (True, True), (False, False))
    scores = run_scores([split, whole], attempts=2)
    assert scores["n_attempts"] == 2  # runs, not the four attempts
    # By hand. Run 0 is attempts 0 and 2, run 1 attempts 1 and 3.
    # split: run 0 gets test 1 (attempt 0) and test 2 (attempt 2): credit 1; run 1 nothing.
    # whole: run 0 gets both tests (attempt 2): credit 1; run 1 nothing.
    # oracle@1 = mean over the runs = (1 + 0) / 2 per task; oracle@2 = 1 per task.
    assert scores["oracle@1"] == pytest.approx(0.5)
    assert scores["score"] == pytest.approx(1.0)
    # Strict: one attempt must be right on both tests. split has none (its run 0 is right
    # only as two attempts together): 0. whole: run 0 strict-right: oracle@2 = 1.
    # Mean over the two tasks: 0.5.
    assert scores["strict_score"] == pytest.approx(0.5)
    # Pooled as four separate attempts, oracle@2 would have been 0.5 (split) and 0.5
    # (whole): each test right in 1 of 4 attempts, 1 - C(3,2)/C(4,2) = 0.5.
    pooled = [
        r.model_copy(update={"attempts": [a.model_copy(update={"variant": 0}) for a in r.attempts]})
        for r in (split, whole)
    ]
    assert run_scores(pooled, attempts=2)["score"] == pytest.approx(0.5)


def test_records_from_before_variants_load_as_variant_zero() -> None:
    old = {"task_id": "t", "attempts": [{"index": 0, "steps": []}], "selection": None}
    result = TaskResult.model_validate(old)
    assert result.attempts[0].variant == 0 and result.variant_selections == []
    assert result.selections == []


def test_variants_without_a_model_selector_are_warned(tmp_path: Path) -> None:
    from arcmemo.run.warnings import run_warnings

    def warned(**changes: Any) -> bool:
        return any("--variants" in w for w in run_warnings(_config(tmp_path, "w", **changes)))

    assert not warned()  # llm selection: each variant its own
    assert warned(selector="all")  # every variant the same memory
    assert not warned(selector="all", variants=1)


def test_a_selection_warning_counts_and_names_every_variant(tmp_path: Path) -> None:
    """A variant's selection that chose nothing is warned like variant 0's, named with its
    variant: one that only variant 1 got is not hidden by variant 0's good one."""
    nothing = "the llm selection chose nothing: no name resolved ({'name': 'scale grid'})"
    chose = Selection(selector="llm", selected=["tile grid"])
    empty = Selection(selector="llm", warning=nothing)
    results = [
        TaskResult(task_id="a", selection=chose, variant_selections=[empty, chose]),
        TaskResult(task_id="b", selection=empty, variant_selections=[empty, chose]),
        TaskResult(task_id="c", selection=chose, variant_selections=[chose, chose]),
        TaskResult(task_id="d", variant_selections=[None, None]),  # failed before selecting
    ]
    config = _config(tmp_path, "w", variants=3)
    summary = build_summary(config, ArcBenchmark(), results, UsageSummary(), wall_seconds=0.5)
    assert summary.warnings == [
        "3 of 12 selections (2 of 4 tasks; each prompt variant selects on its own) got no "
        f"memory entry from the selector (first, a variant 1: {nothing})"
    ]
    quiet = build_summary(config, ArcBenchmark(), results[2:], UsageSummary(), wall_seconds=0.5)
    assert quiet.warnings == []


def test_the_report_shows_and_counts_every_variants_selection(tmp_path: Path) -> None:
    """Each variant's selection in the task's details, each attempt named with its variant,
    and every selection counted in the memory's usage table (with its definition)."""
    _, (result,) = _run(_config(tmp_path, "run", feedback_rounds=0), tmp_path / "cache")
    chosen = {v: s.selected for v, s in result.variant_selection_pairs}
    assert sorted(chosen.values()) == [["reflect grid"], ["tile grid"]]
    page = render_report(load_run(tmp_path / "run"))
    section = task_section(page, TASK)
    shown = re.findall(r"prompt variant (\d): concepts selected \(llm\): (.*)", section)
    assert [int(v) for v, _ in shown] == [0, 1]
    for variant, names in shown:
        (name,) = chosen[int(variant)]
        assert f">{name}</a>" in names and len(re.findall("</a>", names)) == 1
    attempts = re.findall(r"attempt (\d) \(prompt variant (\d)\)", section)
    assert attempts == [("1", "0"), ("2", "0"), ("3", "1"), ("4", "1")]
    usage = page[page.index("<h3>Usage in this run</h3>") :]
    assert "Each of a task's 2 prompt variants selects on its own" in usage
    rows = re.findall(
        r'>([a-z ]+)</a></td><td class="num">(\d+)</td><td class="num">(\d+)</td>'
        r'<td class="num">(\d+)</td>',
        usage[: usage.index("</table>")],
    )
    solved = int(result.solved)
    assert sorted(rows) == [
        ("reflect grid", "1", str(solved), "1"),
        ("tile grid", "1", str(solved), "1"),
    ]
