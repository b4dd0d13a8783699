"""Running library functions on recorded arguments in the sandbox, and their tests."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.library.harness import call_harness
from arcmemo.library.modules import LibraryConflictError, function_module, memory_functions
from arcmemo.library.values import canonical
from arcmemo.memory.schema import Memory, RecordedCall
from arcmemo.sandbox import Program, Sandbox, SandboxLimits

CALL_LIMITS = SandboxLimits(timeout_s=5.0)


class CallCache:
    """Outcomes of standalone calls kept by (module text, function, arguments), for builds
    that run the same calls again (a leave-one-out over many folds: a call's outcome does
    not depend on which other programs are in the build). Only calls not yet kept go to
    the sandbox. It assumes that a call's outcome does not depend on the calls run before
    it in the same program, which holds for functions that keep no state of their own.
    Safe to share between threads."""

    def __init__(self) -> None:
        self._outcomes: dict[str, str | None] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(module: str, name: str, call: RecordedCall) -> str:
        text = json.dumps([module, name, canonical([call.args, call.kwargs])])
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> tuple[bool, str | None]:
        with self._lock:
            if key in self._outcomes:
                self.hits += 1
                return True, self._outcomes[key]
            self.misses += 1
            return False, None

    def put(self, key: str, outcome: str | None) -> None:
        with self._lock:
            self._outcomes[key] = outcome


def run_calls(
    sandbox: Sandbox,
    module: str,
    name: str,
    calls: Sequence[RecordedCall],
    *,
    cache: CallCache | None = None,
) -> list[str | None]:
    """Call ``name`` of the module text on each recorded call's arguments: per call, the
    outcome as canonical JSON text, ``raised:<Error>`` for an exception, or None when the
    call could not be made (a crash, a timeout, a module that does not run). With a
    ``cache``, the outcomes it holds are taken from it and the others kept in it."""
    if not calls:
        return []
    if cache is None:
        return _run(sandbox, module, name, calls)
    keys = [CallCache.key(module, name, call) for call in calls]
    outcomes: list[str | None] = []
    missing: dict[str, RecordedCall] = {}
    for key, call in zip(keys, calls, strict=True):
        found, outcome = cache.get(key)
        outcomes.append(outcome)
        if not found:
            missing.setdefault(key, call)
    if not missing:
        return outcomes
    fresh = dict(zip(missing, _run(sandbox, module, name, list(missing.values())), strict=True))
    for key, outcome in fresh.items():
        cache.put(key, outcome)
    return [fresh.get(key, old) for key, old in zip(keys, outcomes, strict=True)]


def _run(
    sandbox: Sandbox, module: str, name: str, calls: Sequence[RecordedCall]
) -> list[str | None]:
    program = Program(source=module, entry="_arcmemo_call", harness=call_harness())
    inputs = [[name, call.args, call.kwargs] for call in calls]
    outcomes: list[str | None] = []
    for result in sandbox.run(program, inputs, limits=CALL_LIMITS):
        value: Any = result.value
        if not result.ok or not isinstance(value, dict):
            outcomes.append(None)
        elif "result" in value:
            outcomes.append(str(value["result"]))
        elif "raised" in value:
            outcomes.append(f"raised:{value['raised']}")
        else:
            outcomes.append(None)
    return outcomes


def passes(outcomes: Sequence[str | None], calls: Sequence[RecordedCall]) -> list[bool]:
    """Per call, whether the outcome is the recorded result."""
    return [
        outcome is not None and outcome == canonical(call.result)
        for outcome, call in zip(outcomes, calls, strict=True)
    ]


class FunctionTestResult(BaseModel):
    """One library function's recorded tests, re-run standalone."""

    name: str
    tests: int
    passed: int
    failures: list[str] = Field(
        default_factory=list, description="Why a test failed (its index, task and reason)."
    )

    @property
    def ok(self) -> bool:
        return self.passed == self.tests and not self.failures


def check_function(
    sandbox: Sandbox, memory: Memory, name: str, *, cache: CallCache | None = None
) -> FunctionTestResult:
    """Re-run function ``name``'s recorded tests in a module of it and what it calls."""
    functions = memory_functions(memory)
    function = functions[name]
    calls = list(function.tests)
    try:
        module = function_module(functions, name)
    except (KeyError, LibraryConflictError, SyntaxError) as error:
        reason = f"its module cannot be built: {type(error).__name__}: {error}"
        return FunctionTestResult(name=name, tests=len(calls), passed=0, failures=[reason])
    outcomes = run_calls(sandbox, module, name, calls, cache=cache)
    result = FunctionTestResult(name=name, tests=len(calls), passed=0)
    for index, (ok, outcome, call) in enumerate(
        zip(passes(outcomes, calls), outcomes, calls, strict=True)
    ):
        if ok:
            result.passed += 1
        else:
            got = "no result" if outcome is None else outcome[:80]
            result.failures.append(f"test {index} (task {call.task_id}): got {got}")
    return result


def run_recorded_tests(
    memory: Memory,
    sandbox: Sandbox,
    *,
    names: Sequence[str] | None = None,
    workers: int = 2,
    cache: CallCache | None = None,
) -> list[FunctionTestResult]:
    """Re-run every library function's recorded tests (or those of ``names``) standalone in
    the sandbox, one function per sandbox program, ``workers`` at a time (with a ``cache``,
    only the calls it does not hold)."""
    chosen = list(names) if names is not None else list(memory_functions(memory))
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(
            pool.map(lambda name: check_function(sandbox, memory, name, cache=cache), chosen)
        )
