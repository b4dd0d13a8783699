"""Your own problems (``arcmemo run jsonl --data FILE``): :mod:`~.data` reads the file,
:mod:`~.checkers` decides what is right, :mod:`~.metrics` scores pass@k and maj@n and
:mod:`~.benchmark` is the registered benchmark (and the text benchmark others build on)."""

from arcmemo.benchmarks.jsonl.benchmark import JsonlBenchmark, JsonlOptions, TextBenchmark
from arcmemo.benchmarks.jsonl.data import JsonlDataError, TextProblem, load_text_problems

__all__ = [
    "JsonlBenchmark",
    "JsonlDataError",
    "JsonlOptions",
    "TextBenchmark",
    "TextProblem",
    "load_text_problems",
]
