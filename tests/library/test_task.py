"""Which memory functions a task may import (arcmemo.library.task), and how its solve prompt
shows them."""

from __future__ import annotations

import asyncio

import pytest

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark, ArcOptions
from arcmemo.benchmarks.arc.data import ArcPair, ArcTask
from arcmemo.library.task import task_library
from arcmemo.memory.schema import Concept, LibraryFunction, Memory
from arcmemo.run.solve_prompt import prepare_prompt
from arcmemo.selection.simple import AllSelector


def _function(name: str, *sources: str, body: str = "return grid") -> LibraryFunction:
    return LibraryFunction(
        name=name,
        source=f'def {name}(grid):\n    """{name} doc."""\n    {body}\n',
        signature="(grid: Grid) -> Grid",
        docstring=f"{name} doc.",
        sources=list(sources),
    )


def _memory() -> Memory:
    return Memory(
        domain="arc",
        concepts=[
            Concept(
                name="crop to object",
                kind="routine",
                functions=[_function("crop_a", "a"), _function("crop_b", "b")],
            ),
            Concept(name="flip", kind="routine", functions=[_function("flip", "c")]),
            Concept(
                name="old", kind="routine", retired="never helped", functions=[_function("old")]
            ),
        ],
    )


def _names(functions: tuple[LibraryFunction, ...]) -> list[str]:
    return [f.name for f in functions]


def test_a_task_never_gets_a_function_from_its_own_solution() -> None:
    library = task_library(_memory(), "a", ["crop to object", "flip"], "selected")
    assert _names(library.shown) == ["crop_b", "flip"]
    assert "def crop_a" not in library.source and "def crop_b" in library.source


def test_the_scope_decides_what_is_importable_and_retired_concepts_give_nothing() -> None:
    memory = _memory()
    selected = task_library(memory, "x", ["flip"], "selected")
    assert _names(selected.shown) == _names(selected.importable) == ["flip"]
    everything = task_library(memory, "x", ["flip"], "all")
    assert _names(everything.shown) == ["flip"]
    assert _names(everything.importable) == ["crop_a", "crop_b", "flip"]
    assert task_library(memory, "x", ["old"], "selected").source == ""
    assert task_library(memory, "x", ["flip"], "off").importable == ()


def test_a_function_comes_with_what_it_calls_unless_that_leaks() -> None:
    memory = _memory()
    helper = LibraryFunction(name="helper", source="def helper(g):\n    return g\n", sources=["h"])
    memory.concepts[1].functions.append(
        LibraryFunction(name="uses_helper", source="def uses_helper(g):\n    return helper(g)\n")
    )
    memory.concepts[0].functions.append(helper)
    library = task_library(memory, "x", ["flip"], "selected")
    assert _names(library.shown) == ["flip", "uses_helper"]
    assert _names(library.importable) == ["flip", "uses_helper", "helper"]
    assert "def helper(g)" in library.source
    # Task h may not have its own helper, nor a function that calls it.
    own = task_library(memory, "h", ["flip"], "selected")
    assert _names(own.importable) == ["flip"]


TASK = ArcTask(
    id="t1",
    train=[ArcPair(input=[[0, 5], [0, 0]], output=[[5]])],
    test_inputs=[[[0, 0], [7, 0]]],
    test_outputs=[[[7]]],
)
CROP = LibraryFunction(
    name="crop_nonzero",
    source="import numpy as np\n\n\ndef crop_nonzero(grid):\n"
    "    rows, cols = np.nonzero(grid)\n"
    "    return grid[rows.min():rows.max() + 1, cols.min():cols.max() + 1]\n",
    signature="(grid: Grid) -> Grid",
    docstring="The smallest box holding every non-zero cell.",
    sources=["other"],
)
ANSWER = """```python
from arcmemo_library import crop_nonzero

def transform(grid):
    return crop_nonzero(grid)
```"""


@pytest.mark.parametrize("layout", ["paper", "arcmemo"])
def test_the_solve_prompt_shows_the_functions_and_the_check_imports_them(layout: str) -> None:
    memory = Memory(
        domain="arc", concepts=[Concept(name="crop to content", kind="routine", functions=[CROP])]
    )
    benchmark = ArcBenchmark(ArcOptions(layout=layout))
    prepared = asyncio.run(
        prepare_prompt(benchmark, TASK, memory=memory, selector=AllSelector(), clients={})
    )
    text = prepared.messages[-1].content
    assert "from arcmemo_library import crop_nonzero" in text
    assert "`crop_nonzero(grid: Grid) -> Grid`: The smallest box holding" in text
    try:
        assert benchmark.check(TASK, ANSWER, prepared.library).verified
        assert not benchmark.check(TASK, ANSWER).verified  # without the library
    finally:
        benchmark.close()


def test_without_functions_the_solve_prompt_is_unchanged() -> None:
    memory = Memory(domain="arc", concepts=[Concept(name="crop to content", kind="routine")])
    benchmark = ArcBenchmark()
    prepared = asyncio.run(
        prepare_prompt(benchmark, TASK, memory=memory, selector=AllSelector(), clients={})
    )
    plain = benchmark.prompt(TASK, concepts=prepared.concepts, previous=None)
    assert prepared.messages == plain
    assert "arcmemo_library" not in plain[-1].content
    assert "\n\n\nWrite `transform(grid)`" not in plain[-1].content
