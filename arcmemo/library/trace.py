"""Tracing: run a verified program in the sandbox and record its helpers' real calls."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.library.harness import trace_harness
from arcmemo.memory.schema import RecordedCall
from arcmemo.sandbox import Program, Sandbox, SandboxLimits

Grid = list[list[int]]
Pair = tuple[Grid, Grid]
"""An example: its input grid and the output grid the program must produce."""

MAX_CALLS_PER_INPUT = 4
"""Calls recorded per helper on one input (the first ones, outermost only)."""
MAX_CALL_CHARS = 20_000
"""Longest recorded call (arguments and result as JSON); longer calls are not recorded."""
TRACE_LIMITS = SandboxLimits(timeout_s=10.0)
"""Tracing encodes every recorded value: a program gets more time than a plain run."""


class Trace(BaseModel):
    """What one program's helpers did on a task's examples."""

    task_id: str
    calls: dict[str, list[RecordedCall]] = Field(
        default_factory=dict, description="Recorded calls by helper name, in call order."
    )
    skipped: dict[str, int] = Field(
        default_factory=dict,
        description="Calls not recorded by helper: an argument or result without an "
        "encoding, or a record over the size limit.",
    )
    examples: int = Field(default=0, description="Examples run.")
    matched: int = Field(default=0, description="Examples whose output was the expected one.")
    errors: list[str] = Field(
        default_factory=list, description="Why an example's calls were not recorded."
    )


def trace_program(
    sandbox: Sandbox,
    task_id: str,
    source: str,
    pairs: Sequence[Pair],
    helpers: Sequence[str],
    *,
    entry: str = "transform",
    bindings: Mapping[str, str] | None = None,
    max_calls: int = MAX_CALLS_PER_INPUT,
    max_chars: int = MAX_CALL_CHARS,
) -> Trace:
    """Run ``source`` on each example's input with ``helpers`` traced. Only the calls of
    examples whose output is the expected one are kept (every test is a real call of a
    program that worked)."""
    trace = Trace(task_id=task_id, examples=len(pairs))
    if not pairs or not helpers:
        return trace
    program = Program(
        source=source,
        entry="_arcmemo_traced",
        harness=trace_harness(list(helpers), entry=entry, max_calls=max_calls, max_chars=max_chars),
        bindings=dict(bindings if bindings is not None else {"np": "numpy"}),
    )
    results = sandbox.run(program, [[grid] for grid, _ in pairs], limits=TRACE_LIMITS)
    for index, (result, (_, expected)) in enumerate(zip(results, pairs, strict=True)):
        if not result.ok or not isinstance(result.value, dict):
            trace.errors.append(f"example {index}: {result.error_kind}: {result.error}")
            continue
        value: dict[str, Any] = result.value
        if value.get("output") != expected:
            trace.errors.append(f"example {index}: the output is not the expected grid")
            continue
        try:
            calls, skipped = _parsed(value, task_id)
        except (ValueError, TypeError, KeyError) as error:
            # The harness shares the program's globals: what comes back is untrusted.
            trace.errors.append(f"example {index}: unreadable trace: {str(error)[:200]}")
            continue
        trace.matched += 1
        for name, recorded in calls.items():
            trace.calls.setdefault(name, []).extend(recorded)
        for name, count in skipped.items():
            trace.skipped[name] = trace.skipped.get(name, 0) + count
    return trace


def _parsed(
    value: dict[str, Any], task_id: str
) -> tuple[dict[str, list[RecordedCall]], dict[str, int]]:
    """The calls and skipped counts of one example's trace; raises ValueError (pydantic's
    ValidationError is one), TypeError or KeyError for anything else."""
    raw_calls = json.loads(value["calls"])
    raw_skipped = json.loads(value["skipped"])
    if not isinstance(raw_calls, dict) or not isinstance(raw_skipped, dict):
        raise TypeError("the trace is not two objects")
    calls = {
        str(name): [RecordedCall.model_validate({**call, "task_id": task_id}) for call in items]
        for name, items in raw_calls.items()
    }
    return calls, {str(name): int(count) for name, count in raw_skipped.items()}
