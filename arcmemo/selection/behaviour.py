"""Retrieval by behaviour: run the library's grid functions on the task's train inputs.

Every library function that takes one grid (:func:`grid_function`) runs on each train
input inside the sandbox (the run's ``--sandbox`` unless the ``sandbox`` option names one;
bwrap, kernel-isolated, where there is no run): one sandbox program per chunk
of functions (the chunk's module ``arcmemo_library``, a trusted harness), one call per
function, each call bounded by ``call_timeout_s`` and the whole task by ``budget_s`` (a
function still waiting when the budget is spent is not run). Outputs come back to this
process and are scored here against the train outputs (:func:`closeness`): 1 for an exact
match, else partial credit for the same shape, the same colours and the share of equal
cells; a function that returns a list of grids (grid-to-object) scores its best element. A
concept's score is its best function's mean over the train pairs; the ``top_k`` concepts
are selected. The task's own functions never run for it (the leakage guard of
:func:`arcmemo.library.modules.available_functions`).

``--select behaviour`` selects this way; ``--select llm --select-arg behaviour_top_k=N``
uses it as a pre-filter (:func:`prefilter`). The cost per task at 300, 3,000 and 30,000
functions is measured in ``experiments/README.md`` (``experiments/behaviour_cost.py``).
"""

from __future__ import annotations

import ast
import asyncio
import json
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import ConfigDict, Field

from arcmemo.core.records import Selection
from arcmemo.library.modules import available_functions
from arcmemo.library.task import library_module, with_callees
from arcmemo.memory.edits import TrackedList
from arcmemo.memory.schema import Concept, LibraryFunction, Memory
from arcmemo.models.client import ModelClient
from arcmemo.sandbox import SANDBOXES, Program, Sandbox, SandboxLimits
from arcmemo.selection.base import (
    SELECTORS,
    Examples,
    RunSandbox,
    Selector,
    SolveViewOptions,
)

_ENTRY = "_arcmemo_behaviour"
# Trusted: calls one library function on every train input; what it returns is checked and
# scored outside. ``_INPUTS`` and ``_DEADLINE`` are prepended as literals.
_HARNESS = f"""
import time as _time
import numpy as _np


def {_ENTRY}(name):
    if _time.time() > _DEADLINE:
        return "skipped"
    import arcmemo_library  # built on the first call: a chunk past the deadline skips it

    function = getattr(arcmemo_library, name)
    outputs = []
    for grid in _INPUTS:
        try:
            outputs.append(function(_np.array(grid)))
        except Exception:
            outputs.append(None)
    return outputs
"""
_MAX_SIDE = 30


@lru_cache(maxsize=1 << 16)
def grid_function(source: str, name: str) -> bool:
    """Whether the function ``name`` defined in ``source`` can be called with one grid:
    exactly one positional parameter without a default (the rest defaulted)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if len(defs) != 1:
        return False
    args = defs[0].args
    positional = [*args.posonlyargs, *args.args]
    required = len(positional) - len(args.defaults)
    no_default_kw = any(d is None for d in args.kw_defaults)
    return required == 1 and not no_default_kw


def _grid(value: Any) -> list[list[int]] | None:
    """``value`` as a rectangular grid of ints (at most 30 by 30), else None."""
    if not isinstance(value, list) or not 0 < len(value) <= _MAX_SIDE:
        return None
    if not all(isinstance(row, list) and row for row in value):
        return None
    width = len(value[0])
    if width > _MAX_SIDE or any(len(row) != width for row in value):
        return None
    if not all(isinstance(c, int) and not isinstance(c, bool) for row in value for c in row):
        return None
    return value


def _grid_score(candidate: list[list[int]], expected: list[list[int]]) -> float:
    if candidate == expected:
        return 1.0
    same_shape = len(candidate) == len(expected) and len(candidate[0]) == len(expected[0])
    colours = {c for row in candidate for c in row} == {c for row in expected for c in row}
    overlap = 0.0
    if same_shape:
        cells = len(expected) * len(expected[0])
        equal = sum(
            a == b
            for r1, r2 in zip(candidate, expected, strict=True)
            for a, b in zip(r1, r2, strict=True)
        )
        overlap = equal / cells
    # Below any exact match: at most 0.9 for a grid that differs somewhere.
    return 0.2 * same_shape + 0.2 * colours + 0.5 * overlap


def closeness(output: Any, expected: Any) -> float:
    """How close one function output comes to one train output, in [0, 1]: 1 exact; else
    0.2 for the same shape, 0.2 for the same colours, 0.5 times the share of equal cells
    (same shape only); a list of grids (objects) scores its best element; else 0."""
    target = _grid(expected)
    if target is None:
        return 0.0
    grid = _grid(output)
    if grid is not None:
        return _grid_score(grid, target)
    if isinstance(output, list):
        grids = [g for g in map(_grid, output[: _MAX_SIDE * _MAX_SIDE]) if g is not None]
        return max((_grid_score(g, target) for g in grids), default=0.0)
    return 0.0


@dataclass
class BehaviourRanking:
    """What running the library on one task's train inputs found."""

    # Concept id -> its best function's mean closeness, best first.
    scores: list[tuple[str, float]] = field(default_factory=list)
    # Function name -> its mean closeness (functions that ran).
    function_scores: dict[str, float] = field(default_factory=dict)
    candidates: int = 0  # grid functions the task may run
    run: int = 0  # of those, run before the budget ran out
    seconds: float = 0.0

    def trace(self, top: int) -> str:
        head = (
            f"behaviour: {self.run} of {self.candidates} grid functions run in {self.seconds:.2f} s"
        )
        return "\n".join([head, *(f"{cid}: {score:.3f}" for cid, score in self.scores[:top])])


def _chunks(items: list[LibraryFunction], size: int) -> list[list[LibraryFunction]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def rank_by_behaviour(
    memory: Memory,
    examples: Examples,
    sandbox: Sandbox,
    *,
    task_id: str | None,
    budget_s: float,
    call_timeout_s: float,
    chunk: int,
) -> BehaviourRanking:
    """Run every grid function ``task_id`` may see on ``examples``' inputs; rank concepts.

    Chunks run in parallel on the sandbox's workers; a function whose call fails, times out
    or returns no grid scores 0; one not run before ``budget_s`` has no score.
    """
    started = time.monotonic()
    owner: dict[str, str] = {}
    functions: list[LibraryFunction] = []
    allowed = set(available_functions(memory, [task_id] if task_id else []))
    for concept in memory.concepts:
        if concept.retired is not None:
            continue
        for function in concept.functions:
            name = function.name
            if name in allowed and name not in owner and grid_function(function.source, name):
                owner[name] = concept.id
                functions.append(function)
    ranking = BehaviourRanking(candidates=len(functions))
    pairs = [(i, o) for i, o in examples if _grid(i) is not None]
    if not functions or not pairs:
        ranking.seconds = time.monotonic() - started
        return ranking
    inputs = json.dumps([i for i, _ in pairs])
    deadline = time.time() + budget_s
    prelude = f"_INPUTS = {inputs}\n_DEADLINE = {deadline!r}\n"
    limits = sandbox.options.limits.model_copy(update={"timeout_s": call_timeout_s})
    lock = threading.Lock()

    def run_chunk(part: list[LibraryFunction]) -> None:
        if time.time() > deadline:
            return
        program = Program(
            source=prelude + _HARNESS,
            entry=_ENTRY,
            library=library_module(with_callees(memory, [f.name for f in part])),
        )
        results = sandbox.run(program, [[f.name] for f in part], limits=limits)
        scored = {}
        for function, result in zip(part, results, strict=True):
            if result.ok and result.value == "skipped":
                continue
            outputs = result.value if result.ok and isinstance(result.value, list) else []
            if result.error_kind == "not_run":
                continue
            per_pair = [
                closeness(outputs[k] if k < len(outputs) else None, expected)
                for k, (_, expected) in enumerate(pairs)
            ]
            scored[function.name] = sum(per_pair) / len(per_pair)
        with lock:
            ranking.function_scores.update(scored)

    workers = max(1, sandbox.options.max_workers or 2)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(run_chunk, _chunks(functions, chunk)))
    ranking.run = len(ranking.function_scores)
    best: dict[str, float] = {}
    for name, score in ranking.function_scores.items():
        cid = owner[name]
        best[cid] = max(best.get(cid, 0.0), score)
    ranking.scores = sorted(best.items(), key=lambda item: (-item[1], item[0]))
    ranking.seconds = time.monotonic() - started
    return ranking


class BehaviourOptions(SolveViewOptions):
    """Options of the ``behaviour`` selector (and of the llm selector's pre-filter)."""

    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(default=8, ge=1, description="Concepts kept.")
    budget_s: float = Field(
        default=20.0,
        gt=0,
        description="Wall-clock budget per task for running library functions; functions "
        "not run by then get no score (the cost bound at large libraries).",
    )
    call_timeout_s: float = Field(
        default=1.0, gt=0, description="Limit on one function's calls (all train inputs)."
    )
    chunk: int = Field(
        default=500,
        ge=1,
        description="Functions per sandbox program (chunks run in parallel on the "
        "sandbox's workers; each re-imports only its own functions).",
    )
    sandbox: str | None = Field(
        default=None,
        description="Sandbox the functions run in (bwrap or process); unset: the run's "
        "sandbox (--sandbox), or bwrap where there is no run.",
    )


class BehaviourRunner:
    """Where behaviour ranking runs its functions: the sandbox its options name (created on
    first use and kept), else the run's sandbox, else a bwrap sandbox of its own."""

    def __init__(self, options: BehaviourOptions) -> None:
        self.options = options
        self._sandbox: Sandbox | None = None
        self._lock = threading.Lock()

    def sandbox(self, run: RunSandbox | None = None) -> Sandbox:
        if self.options.sandbox is None and run is not None:
            return run()
        with self._lock:
            if self._sandbox is None:
                limits = SandboxLimits(timeout_s=self.options.call_timeout_s)
                name = self.options.sandbox or "bwrap"
                spec = SANDBOXES.spec(name, {"limits": limits.model_dump()})
                self._sandbox = SANDBOXES.create(spec)
            return self._sandbox

    def rank(
        self,
        memory: Memory,
        examples: Examples,
        task_id: str,
        sandbox: RunSandbox | None = None,
    ) -> BehaviourRanking:
        """``sandbox``: the run's (used unless the options name one)."""
        return rank_by_behaviour(
            memory,
            examples,
            self.sandbox(sandbox),
            task_id=task_id,
            budget_s=self.options.budget_s,
            call_timeout_s=self.options.call_timeout_s,
            chunk=self.options.chunk,
        )


def prefilter(memory: Memory, ranking: BehaviourRanking, top_k: int) -> Memory:
    """``memory`` with, of its concepts that carry functions, only the ``top_k`` best by
    behaviour (concepts without code have no behaviour to judge and stay)."""
    kept_ids = {cid for cid, _ in ranking.scores[:top_k]}
    kept: Sequence[Concept] = [c for c in memory.concepts if not c.functions or c.id in kept_ids]
    return memory.model_copy(update={"concepts": TrackedList(kept)})


@SELECTORS.register("behaviour", options=BehaviourOptions)
class BehaviourSelector(Selector):
    """The ``top_k`` concepts whose library functions come closest to the train outputs."""

    uses_examples = True

    def __init__(self, options: BehaviourOptions | None = None) -> None:
        self.options = options or BehaviourOptions()
        self.solve_budget_tokens = self.options.solve_budget_tokens
        self.view = self.options.view
        self.runner = BehaviourRunner(self.options)

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        clients: Mapping[str, ModelClient],
        previous_attempt: str | None = None,
        examples: Examples = (),
        sandbox: RunSandbox | None = None,
    ) -> Selection:
        ranking = await asyncio.to_thread(self.runner.rank, memory, examples, task_id, sandbox)
        top = [cid for cid, score in ranking.scores[: self.options.top_k] if score > 0]
        names = [c.name for cid in top if (c := memory.find(cid)) is not None]
        trace = ranking.trace(self.options.top_k)
        return Selection(selector=self.name, selected=names, trace=trace)
