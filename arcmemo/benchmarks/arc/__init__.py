"""ARC-AGI-1: the model writes ``transform(grid)``, run in the sandbox on the train pairs.

Modules: :mod:`~arcmemo.benchmarks.arc.data` (tasks), :mod:`~arcmemo.benchmarks.arc.grids`
(what a grid may be: at most 30x30, colours 0-9), :mod:`~arcmemo.benchmarks.arc.prompt`
(grids as text, feedback, program extraction), :mod:`~arcmemo.benchmarks.arc.scoring`
(oracle@k per retry depth, plain and strict, as the paper defines them),
:mod:`~arcmemo.benchmarks.arc.layout` (the paper's Tables 4 and 5, the report's curves),
:mod:`~arcmemo.benchmarks.arc.report` (grids in the report),
:mod:`~arcmemo.benchmarks.arc.export` (ARC Prize submissions) and
:mod:`~arcmemo.benchmarks.arc.benchmark` (the registered benchmark). ARC-only tools:
:mod:`~arcmemo.benchmarks.arc.puzzles` (helper puzzles per concept) and
:mod:`~arcmemo.benchmarks.arc.barc` (BARC's seed solutions as ``transform`` programs).
"""

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.benchmarks.arc.data import (
    ArcPair,
    ArcTask,
    ArcTaskError,
    load_path,
    load_split,
    named_splits,
    parse_task,
)
from arcmemo.benchmarks.arc.prompt import describe_task, extract_program, format_grid

__all__ = [
    "ArcBenchmark",
    "ArcPair",
    "ArcTask",
    "ArcTaskError",
    "describe_task",
    "extract_program",
    "format_grid",
    "load_path",
    "load_split",
    "named_splits",
    "parse_task",
]
