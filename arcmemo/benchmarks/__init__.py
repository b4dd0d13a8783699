"""Benchmarks registered by name in :data:`BENCHMARKS` (``arcmemo run NAME``)."""

from arcmemo.benchmarks.base import BENCHMARKS, Benchmark, BenchmarkDataError

__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkDataError"]
