"""Counting a memory's library: functions, tests, reuse, and the code sharing saves."""

from __future__ import annotations

from pydantic import BaseModel, Field

from arcmemo.core.tokens import estimate_tokens
from arcmemo.library.modules import memory_functions
from arcmemo.memory.schema import Memory

REUSE_THRESHOLD = 3
"""A function counts as reused when at least this many tasks' programs hold it."""


class LibraryStats(BaseModel):
    """What ``arcmemo library stats`` prints."""

    functions: int = Field(description="Library functions of live concepts.")
    functions_tested: int = Field(description="Functions with at least one recorded test.")
    tests: int = Field(description="Recorded tests, all functions.")
    concepts: int = Field(description="Concepts carrying at least one function.")
    proposed_concepts: int = Field(description="Of those, proposed by the library build.")
    reused: int = Field(
        description=f"Functions extracted from {REUSE_THRESHOLD} or more tasks' programs."
    )
    hindsight: int = Field(
        default=0,
        description="Functions that came only from hindsight programs (failed "
        "programs that ran: right for the task their own outputs define).",
    )
    imported: int = Field(description="Functions some verified program imported.")
    imports: int = Field(description="(function, task) imports recorded.")
    tokens_library: int = Field(description="Tokens of every function's source, once each.")
    tokens_in_programs: int = Field(
        description="Tokens of the same sources counted once per task they came from (what "
        "the programs held before the library)."
    )
    top_reused: dict[str, int] = Field(
        default_factory=dict, description="The most reused functions: name -> source tasks."
    )


def library_stats(memory: Memory, *, top: int = 10) -> LibraryStats:
    """Count the memory's library (see :class:`LibraryStats`)."""
    from arcmemo.library.build import PROPOSED_AUTHOR

    functions = memory_functions(memory)
    carrying = [c for c in memory.concepts if c.retired is None and c.functions]
    reuse = sorted(
        ((len(set(f.sources)), name) for name, f in functions.items()), key=lambda x: (-x[0], x[1])
    )
    return LibraryStats(
        functions=len(functions),
        functions_tested=sum(1 for f in functions.values() if f.tests),
        tests=sum(len(f.tests) for f in functions.values()),
        concepts=len(carrying),
        proposed_concepts=sum(1 for c in carrying if PROPOSED_AUTHOR in c.provenance.authors),
        reused=sum(1 for count, _ in reuse if count >= REUSE_THRESHOLD),
        hindsight=sum(1 for f in functions.values() if f.only_hindsight),
        imported=sum(1 for f in functions.values() if f.imported_by),
        imports=sum(len(set(f.imported_by)) for f in functions.values()),
        tokens_library=sum(estimate_tokens(f.source) for f in functions.values()),
        tokens_in_programs=sum(
            estimate_tokens(f.source) * max(1, len(set(f.sources))) for f in functions.values()
        ),
        top_reused={name: count for count, name in reuse[:top]},
    )
