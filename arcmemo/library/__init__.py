"""The executable concept library: tested functions extracted from verified programs.

A routine concept may carry library functions (``Concept.functions``, memory schema 3):
Python functions that programs import from ``arcmemo_library``, each with the calls
recorded while verified programs ran on real inputs as its tests. The API:

* :func:`build_library` ``(programs, tasks, memory, sandbox) -> BuildReport``: programs
  (task id -> verified source) are traced in the sandbox on their tasks' examples (task id
  -> ``[(input, output), ...]``), their helpers become candidates, deduplicated by
  normalised AST and by behaviour, and only functions whose recorded tests pass standalone
  are written into ``memory`` (changed in place), each on the routine concept its name
  names or on a proposed one. ``report.names`` maps each task's helpers to the library
  function with their behaviour.
* :func:`run_recorded_tests` ``(memory, sandbox) -> list[FunctionTestResult]``: re-runs
  every function's recorded calls standalone (the function and the library functions it
  calls) in the sandbox.
* :func:`library_source` ``(memory, exclude_tasks) -> str``: the text of the
  ``arcmemo_library`` module a task may import; the leakage guard leaves out every function
  whose ``sources`` include an excluded task, and every function calling one
  (:func:`available_functions` gives the names). :func:`function_module` is one function
  with what it calls.
* :mod:`arcmemo.library.values`: :func:`encode` / :func:`decode` of argument and result
  values as JSON (what cannot be recorded is listed there); a recorded ``result`` is the
  returned value, or an ``effect`` (returned value and arguments after the call) when the
  call changed its arguments: :func:`returned` gives the returned part.
* :func:`refactor_programs` rewrites programs to import the library functions with their
  helpers' behaviour and re-verifies them; :func:`library_stats` counts.
"""

from arcmemo.library.build import BuildReport, build_from_traces, build_library, trace_programs
from arcmemo.library.calls import CallCache, FunctionTestResult, run_calls, run_recorded_tests
from arcmemo.library.modules import (
    MODULE_NAME,
    available_functions,
    function_module,
    library_source,
    memory_functions,
)
from arcmemo.library.refactor import RefactorReport, refactor_programs
from arcmemo.library.stats import LibraryStats, library_stats
from arcmemo.library.trace import Trace
from arcmemo.library.values import Unrecordable, decode, encode, returned

__all__ = [
    "MODULE_NAME",
    "BuildReport",
    "CallCache",
    "FunctionTestResult",
    "LibraryStats",
    "RefactorReport",
    "Trace",
    "Unrecordable",
    "available_functions",
    "build_from_traces",
    "build_library",
    "decode",
    "encode",
    "function_module",
    "library_source",
    "library_stats",
    "memory_functions",
    "refactor_programs",
    "returned",
    "run_calls",
    "run_recorded_tests",
    "trace_programs",
]
