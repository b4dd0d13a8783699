"""Retrieval by behaviour: library functions run on the train inputs, concepts ranked."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.benchmarks.arc.data import ArcPair, ArcTask
from arcmemo.benchmarks.base import SharedSandbox
from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import SELECT
from arcmemo.memory.schema import Concept, LibraryFunction, Memory
from arcmemo.run.solve_prompt import prepare_prompt
from arcmemo.sandbox import Sandbox
from arcmemo.selection.base import SELECTORS
from arcmemo.selection.behaviour import (
    BehaviourOptions,
    BehaviourSelector,
    closeness,
    grid_function,
    prefilter,
    rank_by_behaviour,
)
from arcmemo.selection.llm import LLMSelector
from tests.support.sandboxes import make
from tests.support.selection import Recorder


def routine(name: str, function: str, body: str, *sources: str) -> Concept:
    source = f"import numpy as np\n\n\ndef {function}(grid):\n" + "".join(
        f"    {line}\n" for line in body.splitlines()
    )
    return Concept(
        name=name,
        kind="routine",
        functions=[LibraryFunction(name=function, source=source, sources=list(sources))],
    )


def memory() -> Memory:
    return Memory(
        domain="arc",
        concepts=[
            routine("recolor", "double_colours", "return grid * 2"),
            routine("flip rows", "flip_rows", "return np.flipud(grid)"),
            routine("spin forever", "spin", "while True:\n    pass"),
            routine(
                "crop",
                "crop_nonzero",
                "r, c = np.nonzero(grid)\nreturn grid[r.min():r.max()+1, c.min():c.max()+1]",
            ),
            routine("split objects", "rows_of", "return [grid[i:i+1] for i in range(len(grid))]"),
            Concept(name="no code", kind="structure"),
            Concept(
                name="two grids",
                kind="routine",
                functions=[LibraryFunction(name="both", source="def both(a, b):\n    return a\n")],
            ),
        ],
    )


FLIP_PAIRS = [
    ([[1, 0], [0, 0]], [[0, 0], [1, 0]]),
    ([[0, 3, 3], [4, 0, 0]], [[4, 0, 0], [0, 3, 3]]),
]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = make("bwrap", max_workers=2)
    yield box
    box.close()


def rank(box: Sandbox, pairs: list, task_id: str = "t", **kw: float):
    options = {"budget_s": 20.0, "call_timeout_s": 0.5, "chunk": 3} | kw
    return rank_by_behaviour(memory(), pairs, box, task_id=task_id, **options)  # type: ignore[arg-type]


def test_the_function_that_reproduces_the_outputs_ranks_first(sandbox: Sandbox) -> None:
    ranking = rank(sandbox, FLIP_PAIRS)
    assert ranking.candidates == 5  # not the two-argument function
    assert ranking.run == 5
    assert ranking.scores[0] == ("flip-row", 1.0)
    scores = dict(ranking.scores)
    assert scores["spin-forever"] == 0.0  # timed out, bounded by the call limit
    assert 0 < scores["recolor"] < 1 and 0 < scores["crop"] < scores["recolor"]


def test_a_grid_to_object_function_scores_its_best_object(sandbox: Sandbox) -> None:
    pairs = [([[1, 1], [2, 2]], [[2, 2]]), ([[5], [6]], [[6]])]
    scores = dict(rank(sandbox, pairs).scores)
    assert scores["split-object"] == 1.0


def test_a_task_never_runs_its_own_function(sandbox: Sandbox) -> None:
    own = memory()
    own.concepts[1].functions[0].sources.append("t")
    ranking = rank_by_behaviour(
        own, FLIP_PAIRS, sandbox, task_id="t", budget_s=20, call_timeout_s=0.5, chunk=3
    )
    assert "flip-row" not in dict(ranking.scores)


def test_the_budget_bounds_the_work(sandbox: Sandbox) -> None:
    ranking = rank(sandbox, FLIP_PAIRS, budget_s=0.001)
    assert ranking.candidates == 5 and ranking.run < 5


def test_closeness_rewards_shape_colours_and_cells() -> None:
    assert closeness([[1, 2]], [[1, 2]]) == 1.0
    assert closeness([[1, 1]], [[1, 2]]) == pytest.approx(0.2 + 0.5 * 0.5)
    assert closeness([[2, 1]], [[1, 2]]) == pytest.approx(0.4)
    assert closeness([[1], [2]], [[1, 2]]) == pytest.approx(0.2)
    assert closeness("no grid", [[1]]) == 0.0 and closeness([[True]], [[1]]) == 0.0
    assert grid_function("def f(g, k=1):\n    return g\n", "f")
    assert not grid_function("def f(g, k):\n    return g\n", "f")
    assert not grid_function("def f(*, g):\n    return g\n", "f")


TASK = ArcTask(
    id="task-1",
    train=[ArcPair(input=i, output=o) for i, o in FLIP_PAIRS],
    test_inputs=[[[1, 2], [3, 4]]],
)


def test_select_behaviour_in_a_solve_prompt_and_as_a_prefilter() -> None:
    selector = SELECTORS.create(
        SELECTORS.spec("behaviour", {"top_k": 2, "call_timeout_s": 0.5, "sandbox": "process"})
    )
    assert isinstance(selector, BehaviourSelector)
    prepared = asyncio.run(
        prepare_prompt(ArcBenchmark(), TASK, memory=memory(), selector=selector, clients={})
    )
    assert prepared.selection is not None
    assert prepared.selection.selected[0] == "flip rows"
    assert len(prepared.selection.selected) == 2
    assert "from arcmemo_library import flip_rows" in prepared.messages[-1].content
    ranking = selector.runner.rank(memory(), FLIP_PAIRS, "task-1")
    narrowed = prefilter(memory(), ranking, 1)
    assert [c.name for c in narrowed.concepts] == ["flip rows", "no code"]
    assert BehaviourOptions().top_k == 8


def test_the_llm_selector_reads_only_the_behaviour_prefiltered_memory() -> None:
    recorder = Recorder("```yaml\n- flip rows\n```", "```yaml\n- recolor\n```")
    options = {"behaviour_top_k": 1, "behaviour_budget_s": 20.0}
    filtered = SELECTORS.create(SELECTORS.spec("llm", options))
    assert isinstance(filtered, LLMSelector)
    assert filtered.uses_examples and not SELECTORS.create(SELECTORS.spec("llm")).uses_examples
    picked = asyncio.run(
        filtered.select(
            memory(), "p", task_id="t", clients={SELECT: recorder.client()}, examples=FLIP_PAIRS
        )
    )
    assert picked.selected == ["flip rows"]
    shown = recorder.received[0][-1].content
    assert "flip rows" in shown and "no code" in shown  # no code: nothing to judge it by
    assert "spin forever" not in shown and "split objects" not in shown
    # Without examples (a benchmark with none) the model reads the whole memory.
    asyncio.run(filtered.select(memory(), "p", task_id="t", clients={SELECT: recorder.client()}))
    assert "spin forever" in recorder.received[1][-1].content


class _RunSandbox(SharedSandbox):
    """The run's sandbox (a process one here), counting the selector's uses of it."""

    def __init__(self) -> None:
        super().__init__(ComponentSpec(name="process"))
        self.uses = 0

    def get(self) -> Sandbox:
        self.uses += 1
        return super().get()


def test_behaviour_runs_in_the_run_s_sandbox_unless_its_option_names_one() -> None:
    """--select behaviour (and the llm pre-filter) follow the run's --sandbox: the solve
    prompt hands a code-running selector the benchmark's sandbox with the examples."""
    assert BehaviourOptions().sandbox is None
    run_sandbox = _RunSandbox()
    benchmark = ArcBenchmark(sandbox=run_sandbox)
    named: BehaviourSelector | None = None
    try:
        follows = SELECTORS.create(SELECTORS.spec("behaviour", {"top_k": 1}))
        assert isinstance(follows, BehaviourSelector)
        prepared = asyncio.run(
            prepare_prompt(benchmark, TASK, memory=memory(), selector=follows, clients={})
        )
        assert prepared.selection is not None and prepared.selection.selected == ["flip rows"]
        assert run_sandbox.uses == 1
        assert follows.runner._sandbox is None  # no sandbox of its own
        created = SELECTORS.create(SELECTORS.spec("behaviour", {"top_k": 1, "sandbox": "process"}))
        assert isinstance(created, BehaviourSelector)
        named = created
        asyncio.run(prepare_prompt(benchmark, TASK, memory=memory(), selector=named, clients={}))
        assert run_sandbox.uses == 1
        assert named.runner._sandbox is not None and named.runner._sandbox.isolation == "process"
    finally:
        benchmark.close()
        if named is not None and named.runner._sandbox is not None:
            named.runner._sandbox.close()
