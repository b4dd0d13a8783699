"""Counting a library."""

from __future__ import annotations

from arcmemo.library import BuildReport
from arcmemo.library.stats import library_stats
from arcmemo.memory.schema import Memory


def test_stats_count_functions_tests_reuse_and_sharing(
    built: tuple[Memory, BuildReport],
) -> None:
    memory, report = built
    stats = library_stats(memory)
    assert stats.functions == report.functions == 6
    assert stats.functions_tested == 6 and stats.tests == report.tests
    assert stats.reused == 0  # no function came from three programs
    assert stats.top_reused["crop"] == 2
    assert stats.concepts == 4 and stats.proposed_concepts == 3
    assert stats.tokens_in_programs > stats.tokens_library > 0
    assert stats.imported == 0
    memory.concepts[0].functions[0].imported_by.append("x")
    assert library_stats(memory).imports == 1
