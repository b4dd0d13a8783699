"""ARC-AGI-1: the model writes ``transform(grid)``, run in the sandbox on the train pairs.

Modules: :mod:`~arcmemo.benchmarks.arc.data` (tasks), :mod:`~arcmemo.benchmarks.arc.prompt`
(grids as text, feedback, program extraction), :mod:`~arcmemo.benchmarks.arc.scoring`
(oracle@k per retry depth, plain and strict, as the paper defines them) and
:mod:`~arcmemo.benchmarks.arc.benchmark` (the registered benchmark).
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
