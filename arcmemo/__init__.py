"""ArcMemo: test-time learning through a typed, parameterized concept memory.

The public API: the memory (:class:`Memory`, :class:`Concept`, :class:`Lesson` and friends)
and the pieces of an agent loop, imported on first use so that ``import arcmemo`` stays
light (it never imports a model SDK, torch or jetspec):

* ``BENCHMARKS``, ``SELECTORS``, ``ABSTRACTORS``, ``WRITE_SIGNALS``, ``SANDBOXES`` — the
  registries; ``open_model`` — a model client from a ``provider:model`` spec;
* ``prepare_prompt`` — select concepts for a problem and render its solve prompt;
* ``Step``, ``CheckResult``, ``SolvedItem`` — what a check and an abstraction exchange;
* ``RunConfig`` and ``run_benchmark`` — whole runs, as ``arcmemo run`` does them;
* ``open_memory`` — the memory as one object for an agent loop of your own (docs/agents.md);
* ``collector_pauses`` — a context manager that lets loads and renders of big memories
  and runs pause Python's cyclic garbage collector, as the ``arcmemo`` command does
  (about twice as fast at 30,000 concepts); without it arcmemo never touches the
  collector, nor any other process-wide state.
"""

from __future__ import annotations

import importlib
from typing import Any

from arcmemo.memory import Concept, Lesson, Memory, MemoryFileError, Parameter, TypeDef

_LAZY = {
    "ABSTRACTORS": "arcmemo.abstraction.base",
    "BENCHMARKS": "arcmemo.benchmarks.base",
    "CheckResult": "arcmemo.core.records",
    "RunConfig": "arcmemo.run.config",
    "SANDBOXES": "arcmemo.sandbox",
    "SELECTORS": "arcmemo.selection.base",
    "SolvedItem": "arcmemo.abstraction.base",
    "Step": "arcmemo.core.records",
    "WRITE_SIGNALS": "arcmemo.signals.base",
    "collector_pauses": "arcmemo.core.bulk",
    "open_memory": "arcmemo.agent.memory",
    "open_model": "arcmemo.models.client",
    "prepare_prompt": "arcmemo.run.solve_prompt",
    "run_benchmark": "arcmemo.run.pipeline",
}

__all__ = ["Concept", "Lesson", "Memory", "MemoryFileError", "Parameter", "TypeDef", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'arcmemo' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
