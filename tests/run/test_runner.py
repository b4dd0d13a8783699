"""The generic run loop: attempts, retries, model failures, task order, leakage guard, summary."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arcmemo.benchmarks.aime import AimeBenchmark, load_problems
from arcmemo.benchmarks.arc import ArcBenchmark, ArcTask, load_path
from arcmemo.core.records import TaskResult
from arcmemo.memory.schema import Memory
from arcmemo.models.accounting import UsageSummary
from arcmemo.models.base import Message
from arcmemo.models.cache import ResponseCache
from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.writer import RunWriter
from arcmemo.run.runner import Runner, order_tasks
from arcmemo.run.solve_prompt import hide_own_concepts
from arcmemo.run.summary import build_summary
from arcmemo.selection.base import SELECTORS
from tests.support.paths import FIXTURES

ARC_DIR = FIXTURES / "arc" / "eval"
IDENTITY = "```python\ndef transform(grid):\n    return grid\n```"
RETRY = "### Your Previous Response and Its Outcome"  # the default (paper) layout
AIME_RETRY = "Your previous response"


@pytest.fixture(scope="module")
def tasks() -> dict[str, ArcTask]:
    return {t.id: t for t in load_path(ARC_DIR)}


@pytest.fixture
def arc() -> Iterator[ArcBenchmark]:
    bench = ArcBenchmark()
    yield bench
    bench.close()


class Recorder:
    """A scripted model answering with ``answer(text)``, recording the prompts."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def __call__(self, messages: list[Message]) -> str:
        text = "\n\n".join(m.content for m in messages)
        self.prompts.append(text)
        return self.answer(text)


def make_runner(
    out: Path, benchmark: Any, script: Any, cache: ResponseCache | None = None, **changes: Any
) -> Runner:
    fields: dict[str, Any] = {
        "benchmark": benchmark.name,
        "data": "fixtures",
        "model": "scripted:test",
        "attempts": 2,
        "feedback_rounds": 2,
        "out": out,
    }
    config = RunConfig.model_validate(fields | changes)
    client = ModelClient(
        ScriptedProvider.from_script(script),
        config=ModelConfig(),
        cache=cache,
        call_log_path=out / "calls.jsonl",
    )
    return Runner(
        config,
        benchmark,
        {"solver": client},
        rundir=RunWriter(out),
        selector=SELECTORS.create("none"),
    )


def run(runner: Runner, tasks: list[Any]) -> list[TaskResult]:
    runner.rundir.path.mkdir(parents=True, exist_ok=True)
    return asyncio.run(runner.run(tasks))


def test_no_retries_when_retries_is_zero(
    arc: ArcBenchmark, tasks: dict[str, ArcTask], tmp_path: Path
) -> None:
    script = Recorder(lambda text: IDENTITY)
    (result,) = run(make_runner(tmp_path, arc, script, feedback_rounds=0), [tasks["00576224"]])
    assert len(script.prompts) == 2 and not any(RETRY in p for p in script.prompts)
    assert [len(a.steps) for a in result.attempts] == [1, 1]
    assert not result.solved


def test_retries_are_bounded_and_stop_when_train_passes(
    arc: ArcBenchmark, tasks: dict[str, ArcTask], tmp_path: Path
) -> None:
    script = Recorder(lambda text: IDENTITY)
    (result,) = run(
        make_runner(tmp_path, arc, script, feedback_rounds=3, attempts=1), [tasks["00576224"]]
    )
    assert [s.round for s in result.attempts[0].steps] == [0, 1, 2, 3]
    assert len(script.prompts) == 4
    # A task where identity is right on every example: the first try passes, no retry.
    source = tasks["66e6c45b"]
    same = [pair.model_copy(update={"output": pair.input}) for pair in source.train]
    easy = source.model_copy(update={"id": "identity", "train": same})
    script = Recorder(lambda text: IDENTITY)
    (result,) = run(make_runner(tmp_path / "b", arc, script, feedback_rounds=3, attempts=1), [easy])
    assert len(result.attempts[0].steps) == 1 and result.attempts[0].steps[0].verified
    assert len(script.prompts) == 1


def test_a_failed_first_call_is_a_task_error_and_the_run_goes_on(
    arc: ArcBenchmark, tasks: dict[str, ArcTask], tmp_path: Path
) -> None:
    solution = (
        "```python\ndef transform(grid):\n    out = np.zeros_like(grid)\n"
        "    out[0, 0], out[0, -1] = grid[1, 1], grid[1, 2]\n"
        "    out[-1, 0], out[-1, -1] = grid[2, 1], grid[2, 2]\n    return out\n```"
    )
    crash_key = "Example 1\nInput:\n[[8, 6],\n [6, 4]]"  # 00576224

    def answer(text: str) -> str:
        if crash_key in text:
            raise ValueError("the model server fell over")
        return solution

    runner = make_runner(tmp_path, arc, Recorder(answer))
    results = {r.task_id: r for r in run(runner, [tasks["00576224"], tasks["66e6c45b"]])}
    broken = results["00576224"]
    assert broken.error and "fell over" in broken.error and not broken.solved
    assert all(a.steps == [] for a in broken.attempts)
    assert results["66e6c45b"].solved and results["66e6c45b"].error is None
    summary = build_summary(
        runner.config, arc, list(results.values()), UsageSummary(), wall_seconds=1.0
    )
    assert summary.n_errors == 1 and summary.n_solved == 1


def test_a_failed_retry_call_ends_the_attempt_with_a_recorded_error(
    arc: ArcBenchmark, tasks: dict[str, ArcTask], tmp_path: Path
) -> None:
    def answer(text: str) -> str:
        if RETRY in text:
            raise ValueError("quota exceeded")
        return IDENTITY

    (result,) = run(make_runner(tmp_path, arc, Recorder(answer)), [tasks["00576224"]])
    for attempt in result.attempts:
        first, failed = attempt.steps
        assert first.verified is False
        assert failed.round == 1 and failed.error and "quota exceeded" in failed.error
        assert attempt.correct == [False]
    assert result.error and "quota exceeded" in result.error  # so that a resume redoes it


def test_tasks_with_a_model_error_are_redone_on_resume(
    arc: ArcBenchmark, tasks: dict[str, ArcTask], tmp_path: Path
) -> None:
    broken_key = "Example 1\nInput:\n[[8, 6],\n [6, 4]]"  # 00576224

    def flaky(text: str) -> str:
        if broken_key in text:
            raise ValueError("connection reset")
        return IDENTITY

    picked = [tasks["00576224"], tasks["66e6c45b"]]
    first = run(make_runner(tmp_path, arc, Recorder(flaky), feedback_rounds=0), picked)
    assert [r.error is not None for r in first] == [True, False]
    again = Recorder(lambda text: IDENTITY)
    second = run(make_runner(tmp_path, arc, again, feedback_rounds=0), picked)
    assert len(again.prompts) == 2 and all(broken_key in p for p in again.prompts)
    assert [r.error for r in second] == [None, None]


def test_aime_gets_no_retries(tmp_path: Path) -> None:
    problems = load_problems(FIXTURES / "aime" / "problems.jsonl")[:1]
    script = Recorder(lambda text: "\\boxed{4}")
    (result,) = run(make_runner(tmp_path, AimeBenchmark(), script, feedback_rounds=2), problems)
    assert len(script.prompts) == 2
    assert [len(a.steps) for a in result.attempts] == [1, 1]
    assert result.attempts[0].steps[0].verified is None and not result.solved


def test_aime_retries_an_unusable_answer_saying_what_it_was_and_never_the_answer(
    tmp_path: Path,
) -> None:
    (problem,) = load_problems(FIXTURES / "aime" / "problems.jsonl")[1:2]  # answer 16

    def answer(text: str) -> str:
        if AIME_RETRY not in text:
            return "So the count is \\boxed{1234}."  # out of range: not accepted
        if "1234" in text:
            return "I could not finish."  # no final answer at all
        return "\\boxed{16}"

    script = Recorder(answer)
    (result,) = run(
        make_runner(tmp_path, AimeBenchmark(), script, feedback_rounds=2, attempts=1), [problem]
    )
    first, second, third = script.prompts
    assert AIME_RETRY not in first
    # Each retry names what the response gave and that it was not accepted, nothing else:
    # the true answer (16) is never told, nor whether a readable answer was right.
    assert "gave the final answer 1234, which was not accepted" in second
    assert "no final answer could be found" in third and "1234" not in third
    assert not any("16" in p.replace(problem.problem, "") for p in script.prompts)
    assert [s.prediction for s in result.attempts[0].steps] == [None, None, 16]
    assert result.solved


def test_each_finished_task_is_reported_and_written(
    arc: ArcBenchmark, tasks: dict[str, ArcTask], tmp_path: Path
) -> None:
    done: list[str] = []
    runner = make_runner(tmp_path, arc, Recorder(lambda text: IDENTITY), feedback_rounds=0)
    runner.on_task_done = lambda result: done.append(result.task_id)
    picked = [tasks["66e6c45b"], tasks["00576224"], tasks["ca8de6ea"]]
    results = run(runner, picked)
    assert sorted(done) == sorted(t.id for t in picked)
    assert [r.task_id for r in results] == [t.id for t in picked]  # processing order
    assert sorted(runner.rundir.finished()) == sorted(done)


def test_order_tasks_is_stable_without_seed_and_reproducible_with_one() -> None:
    items = list(range(20))
    assert order_tasks(items, None) == items
    shuffled = order_tasks(items, 7)
    assert shuffled == order_tasks(items, 7) and shuffled != items
    assert sorted(shuffled) == items
    assert order_tasks(items, 8) != shuffled


def _memory(*sources: list[str]) -> Memory:
    base = {
        "types": [{"name": "grid", "definition": "list[list[int]]"}],
        "concepts": [
            {
                "name": f"concept {i}",
                "kind": "structure",
                "provenance": {"sources": s},
            }
            for i, s in enumerate(sources)
        ],
    }
    return Memory.model_validate(base)


def test_hide_own_concepts_removes_entries_only_that_task_produced() -> None:
    memory = _memory(["t1"], ["t1", "t2"], [], ["t2"])
    hidden = hide_own_concepts(memory, "t1")
    assert [c.name for c in hidden.concepts] == ["concept 1", "concept 2", "concept 3"]
    assert [c.name for c in memory.concepts] == [f"concept {i}" for i in range(4)]
    assert hide_own_concepts(memory, "t9") is memory


def test_build_summary_marks_label_leaks(arc: ArcBenchmark, tmp_path: Path) -> None:
    config = RunConfig(
        benchmark="arc-agi-1",
        model="scripted:x",
        out=tmp_path,
        memory=tmp_path / "m.json",
        selector="all",
        update="online",
        write_signal="oracle",
    )
    summary = build_summary(config, arc, [], UsageSummary(), wall_seconds=0.5)
    assert summary.leaks_test_labels is True
    assert summary.select == "all" and summary.memory == str(tmp_path / "m.json")
    assert summary.n_tasks == 0 and summary.metrics.score == 0.0
    plain = build_summary(config.model_copy(update={"memory": None}), arc, [], UsageSummary(), 0)
    assert plain.select == "none" and plain.memory is None


def test_seed_reaches_the_providers_sampling_parameters(tmp_path: Path) -> None:
    import asyncio

    from arcmemo.models.base import Completion, GenerateParams, Provider
    from arcmemo.models.client import ModelClient
    from arcmemo.models.config import ModelConfig
    from arcmemo.run.config import RunConfig
    from arcmemo.run.pipeline import run_benchmark

    seen: list[GenerateParams] = []

    class Recording(Provider):
        name = "recording"

        async def generate(
            self, messages: list[Message], params: GenerateParams
        ) -> list[Completion]:
            seen.append(params)
            return [Completion(text="no program")] * params.n

    fixtures = FIXTURES / "arc" / "eval"
    config = RunConfig(
        benchmark="arc-agi-1",
        data=str(fixtures),
        tasks=["00576224"],
        model="recording:x",
        attempts=1,
        feedback_rounds=0,
        sampling_seed=7,
        out=tmp_path / "run",
    )
    client = ModelClient(Recording("x"), config=ModelConfig(cache=False, cache_write=False))
    asyncio.run(run_benchmark(config, models={"solver": client}))
    assert [p.seed for p in seen] == [7]


def test_identical_retry_prompts_of_two_attempts_get_independent_answers(
    arc: ArcBenchmark, tasks: dict[str, ArcTask], tmp_path: Path
) -> None:
    from itertools import count

    numbers = count()

    def answer(text: str) -> str:
        if RETRY not in text:
            return IDENTITY  # both attempts fail the same way: identical retry prompts
        return f"```python\n# retry {next(numbers)}\ndef transform(grid):\n    return grid\n```"

    def retries_of(out: Path) -> list[str]:
        cache = ResponseCache(tmp_path / "cache")
        runner = make_runner(out, arc, Recorder(answer), cache, feedback_rounds=1)
        (result,) = run(runner, [tasks["00576224"]])
        return sorted(a.steps[1].completion for a in result.attempts)

    first = retries_of(tmp_path / "first")
    assert first[0] != first[1]
    # Replayed from the cache, each attempt's retry is still its own answer.
    assert retries_of(tmp_path / "again") == first


def test_a_selection_records_lessons_by_their_number_in_the_real_memory() -> None:
    from arcmemo.core.records import Selection
    from arcmemo.memory.schema import Lesson, Provenance
    from arcmemo.run.solve_prompt import prepare_prompt
    from arcmemo.selection.base import Selector

    def lesson(text: str, source: str) -> Lesson:
        return Lesson(situation=text, suggestion=text, provenance=Provenance(sources=[source]))

    # Lesson 1 came from the task itself and is hidden: the task sees lessons 2 and 3 as 1, 2.
    memory = Memory(domain="aime", lessons=[lesson("own", "t"), lesson("b", "x"), lesson("c", "y")])

    class SecondShown(Selector):
        name = "second-shown"

        async def select(self, memory: Memory, problem: str, **_: Any) -> Selection:
            assert [les.situation for les in memory.lessons] == ["b", "c"]
            return Selection(selector=self.name, selected=["lesson 2"])

    class Task:
        id = "t"

    class Bench:
        def task_id(self, task: Any) -> str:
            return "t"

        def describe(self, task: Any) -> str:
            return "p"

        def prompt(
            self, task: Any, *, concepts: str, previous: Any, library: Any = None
        ) -> list[Message]:
            return [Message(role="user", content=concepts)]

    prepared = asyncio.run(
        prepare_prompt(Bench(), Task(), memory=memory, selector=SecondShown(), clients={})  # type: ignore[arg-type]
    )
    assert prepared.selection is not None
    assert prepared.selection.selected == ["lesson 3"]  # "c" is lesson 3 of the memory
    assert "c" in prepared.concepts  # while the prompt showed it under its visible number


def test_selections_that_chose_nothing_are_a_warning_of_the_run(
    arc: ArcBenchmark, tmp_path: Path
) -> None:
    from arcmemo.core.records import Selection

    config = RunConfig(benchmark="arc-agi-1", model="scripted:x", out=tmp_path)
    nothing = "the llm selection chose nothing: no name resolved ({'name': 'scale grid'})"
    results = [
        TaskResult(task_id="a", selection=Selection(selector="llm", selected=["tile grid"])),
        TaskResult(task_id="b", selection=Selection(selector="llm", warning=nothing)),
        TaskResult(task_id="c", selection=Selection(selector="llm", warning=nothing)),
        TaskResult(task_id="d"),
    ]
    summary = build_summary(config, arc, results, UsageSummary(), wall_seconds=0.5)
    assert summary.warnings == [
        f"2 of 4 tasks got no memory entry from the selector (first, b: {nothing})"
    ]
    quiet = build_summary(config, arc, results[:1], UsageSummary(), wall_seconds=0.5)
    assert quiet.warnings == []
