"""Benchmarks registered by name (``arcmemo run NAME``); each is one module of one shape."""

from arcmemo.benchmarks import aime, arc  # noqa: F401  (registers the built-in benchmarks)
from arcmemo.benchmarks.base import Benchmark, benchmark_names, create_benchmark

__all__ = ["Benchmark", "benchmark_names", "create_benchmark"]
