"""ARC grid formats: the paper's numpy-list form by default, spaces and digits as options."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from arcmemo.benchmarks import BENCHMARKS
from arcmemo.benchmarks.arc import ArcBenchmark, load_path
from arcmemo.benchmarks.arc.benchmark import ArcOptions
from arcmemo.benchmarks.arc.prompt import GRID_FORMATS, describe_task, format_grid
from arcmemo.core.registry import ComponentSpec, RegistryError
from arcmemo.run.config import RunConfig
from arcmemo.run.resolve import resolve_config

EVAL_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "arc" / "eval"


def _random_grid(rng: random.Random, rows: int, cols: int) -> list[list[int]]:
    return [[rng.randrange(10) for _ in range(cols)] for _ in range(rows)]


def test_numpy_format_is_what_numpy_prints() -> None:
    rng = random.Random(7)
    for _ in range(200):
        rows, cols = rng.randint(1, 30), rng.randint(1, 30)
        grid = _random_grid(rng, rows, cols)
        text = format_grid(grid, "numpy")
        # The published prompts' call; no ARC row (at most 30 cells) wraps at width 120.
        assert text == np.array2string(np.array(grid), separator=", ", max_line_width=120)
        if cols <= 24:  # numpy's default width (75) wraps only longer rows
            assert text == np.array2string(np.array(grid), separator=", ")


def test_the_three_formats() -> None:
    grid = [[0, 1, 2], [3, 4, 5]]
    assert format_grid(grid) == "[[0, 1, 2],\n [3, 4, 5]]"
    assert format_grid(grid, "spaces") == "0 1 2\n3 4 5"
    assert format_grid(grid, "digits") == "012\n345"
    with pytest.raises(ValueError, match="unknown grid format 'hex'"):
        format_grid(grid, "hex")  # type: ignore[arg-type]


def test_grid_format_is_a_recorded_benchmark_option() -> None:
    assert BENCHMARKS.spec("arc-agi-1").options == {
        "grid_format": "numpy",
        "feedback": "program",
        "layout": "paper",
        "stop_after_failure": True,
    }
    assert BENCHMARKS.spec("arc-agi-2", {"grid_format": "digits"}).options == {
        "grid_format": "digits",
        "feedback": "program",
        "layout": "paper",
        "stop_after_failure": True,
    }
    with pytest.raises(RegistryError, match="grid_format"):
        BENCHMARKS.spec("arc-agi-1", {"grid_format": "hex"})
    config = resolve_config(
        RunConfig(
            benchmark={"name": "arc-agi-1", "options": {"grid_format": "spaces"}},
            split="evaluation",
            model="scripted:x",
            out=Path("unused"),
        )
    )
    assert config.benchmark.options == {
        "grid_format": "spaces",
        "feedback": "program",
        "layout": "paper",
        "stop_after_failure": True,
    }
    assert '"grid_format": "spaces"' in config.model_dump_json(indent=2)


@pytest.mark.parametrize("layout", ["paper", "arcmemo"])
@pytest.mark.parametrize("fmt", GRID_FORMATS)
def test_every_prompt_and_description_uses_the_format(fmt: str, layout: str) -> None:
    (task,) = load_path(EVAL_DIR / "00576224.json")
    options = {"grid_format": fmt, "layout": layout}
    bench = BENCHMARKS.create(ComponentSpec(name="arc-agi-1", options=options))
    assert isinstance(bench, ArcBenchmark) and isinstance(bench.options, ArcOptions)
    paper = layout == "paper"
    try:
        user = bench.prompt(task, concepts="", previous=None)[-1].content
        first = task.train[0]
        grid, test = format_grid(first.input, fmt), format_grid(task.test_inputs[0], fmt)  # type: ignore[arg-type]
        assert (
            f"Example 1\nInput:\n{grid}\n" if paper else f"Example 1 input (2x2):\n{grid}\n"
        ) in user
        assert (f"Input:\n{test}\n" if paper else f"Test 1 input (2x2):\n{test}\n") in user
        assert bench.describe(task) == describe_task(task, fmt)  # type: ignore[arg-type]
        others = [f for f in GRID_FORMATS if f != fmt]
        assert all(format_grid(first.output, other) not in user for other in others)
        step = bench.check(task, "```python\ndef transform(grid):\n    return grid\n```")
        retry = bench.prompt(task, concepts="", previous=step)[-1].content
        if paper:  # what the identity produced: the input itself
            assert f"Example 1:\n{grid}\n" in retry.split("**Output Mismatches**")[1]
        else:
            expected = format_grid(first.output, fmt)  # type: ignore[arg-type]
            assert f"expected (6x6):\n{expected}\n" in retry
    finally:
        bench.close()
