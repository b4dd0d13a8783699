"""Trusted harness appended to a model-written generator module and run in the sandbox.

This file is never imported by arcmemo: :mod:`arcmemo.benchmarks.arc.puzzles.verify` reads
it as text, appends it to the model's module and calls :func:`_arcmemo_build_puzzle` through
``Sandbox.call``. Every name starts with ``_arcmemo_`` so that it cannot clash with the
module's own names, and modules are imported under private aliases for the same reason.

One call builds one puzzle from one seed and returns, per example, everything the parent
needs to decide the checks (the parent re-validates every grid itself):

* inputs come from ``generate_input(random.Random(seed))``, drawn until the wanted number
  of *distinct* inputs is reached or the draw budget runs out;
* ``transform`` gets ``np.array(input)`` (as in an ARC run); it runs once more on a fresh
  copy to detect non-determinism within the process;
* ``concept_routine`` is replaced, through the module's globals, by a tracing wrapper
  (``transform`` finds it by its global name at call time) and, for the ablation, by a
  neutral substitute (see :func:`_arcmemo_neutral`).

When the neutral substitute makes ``transform`` raise, the crash alone proves nothing
(indexing an empty substitute raises whether or not the value matters), so the example is
run again with the routine answering the real values of *other* examples' calls (see
:func:`_arcmemo_swaps`): the concept is load-bearing only if some such run changes the output.

The concept's property tests (``request["properties"]``, the functions of
``_properties.py``, appended after this file) run on every real call of the routine whose
grid argument and result are grids (at most ``_ARCMEMO_MAX_TESTED_CALLS`` per example).

Errors in ``generate_input`` or in the real ``transform`` run propagate, so the sandbox
reports them with the program's traceback; errors in the ablated run are expected and
recorded as text.
"""

import copy as _arcmemo_copy
import inspect as _arcmemo_inspect
import random as _arcmemo_random
from typing import Any as _ArcmemoAny

import numpy as _arcmemo_np

_ARCMEMO_MAX_SIDE = 30
_ARCMEMO_MAX_TESTED_CALLS = 20
_ARCMEMO_MAX_SWAPS = 4


def _arcmemo_grid_problem(value: _ArcmemoAny) -> str | None:
    """Why ``value`` is not an ARC grid (rectangular, ints 0-9, 1x1..30x30); None if it is."""
    if isinstance(value, _arcmemo_np.ndarray):
        if value.ndim != 2:
            return f"a {value.ndim}-D array, not a 2-D grid"
        if value.dtype.kind not in "iu":
            return f"an array of dtype {value.dtype}, not of ints"
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not value:
        return f"a {type(value).__name__}, not a non-empty list of rows"
    width = None
    for r, row in enumerate(value):
        if isinstance(row, _arcmemo_np.ndarray):
            row = row.tolist()
        if not isinstance(row, (list, tuple)) or not row:
            return f"row {r} is a {type(row).__name__}, not a non-empty list of cells"
        if width is None:
            width = len(row)
        elif len(row) != width:
            return f"row {r} has {len(row)} cells, row 0 has {width} (not rectangular)"
        for c, cell in enumerate(row):
            if isinstance(cell, (bool, _arcmemo_np.bool_)) or not isinstance(
                cell, (int, _arcmemo_np.integer)
            ):
                return f"cell ({r}, {c}) is {cell!r} ({type(cell).__name__}), not an int 0-9"
            if not 0 <= cell <= 9:
                return f"cell ({r}, {c}) is {cell}, not a color 0-9"
    if len(value) > _ARCMEMO_MAX_SIDE or (width or 0) > _ARCMEMO_MAX_SIDE:
        return f"{len(value)}x{width}, larger than 30x30"
    return None


def _arcmemo_plain(value: _ArcmemoAny) -> _ArcmemoAny:
    """A grid as ``list[list[int]]`` (callers check validity first)."""
    if isinstance(value, _arcmemo_np.ndarray):
        return value.tolist()
    return [[int(cell) for cell in row] for row in value]


def _arcmemo_summary(value: _ArcmemoAny) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _arcmemo_blank(real: _ArcmemoAny) -> _ArcmemoAny:
    """A constant of the type of ``real`` that carries no information about the input."""
    if real is None or isinstance(real, bool):
        return None if real is None else False
    if isinstance(real, _arcmemo_np.ndarray):
        return _arcmemo_np.zeros_like(real)
    if isinstance(real, (int, float, complex, str, bytes, list, tuple, dict, set, frozenset)):
        return type(real)()
    try:
        return type(real)()
    except Exception:
        return None


def _arcmemo_copy_grid(grid: _ArcmemoAny) -> _ArcmemoAny:
    if isinstance(grid, _arcmemo_np.ndarray):
        return grid.copy()
    return [list(row) for row in grid]


def _arcmemo_grid_slot(
    real_routine: _ArcmemoAny, args: tuple, kwargs: dict, grid_params: list[str]
) -> _ArcmemoAny:
    """Where the call's grid argument is: ``(position, None)`` or ``(None, keyword)``; the
    argument bound to a parameter the ontology types as ``grid``, else the first argument
    (positional, then keyword) that is a valid grid; None if none."""
    try:
        signature = _arcmemo_inspect.signature(real_routine)
        bound = signature.bind(*args, **kwargs).arguments
        positions = {name: i for i, name in enumerate(signature.parameters)}
    except (TypeError, ValueError):
        bound, positions = {}, {}
    for name in grid_params:
        if name in bound and _arcmemo_grid_problem(bound[name]) is None:
            if name in kwargs:
                return (None, name)
            if positions.get(name, len(args)) < len(args):
                return (positions[name], None)
    for index, value in enumerate(args):
        if _arcmemo_grid_problem(value) is None:
            return (index, None)
    for name, value in kwargs.items():
        if _arcmemo_grid_problem(value) is None:
            return (None, name)
    return None


def _arcmemo_grid_argument(
    real_routine: _ArcmemoAny, args: tuple, kwargs: dict, grid_params: list[str]
) -> _ArcmemoAny:
    """The call's grid argument (see :func:`_arcmemo_grid_slot`); None if none."""
    slot = _arcmemo_grid_slot(real_routine, args, kwargs, grid_params)
    if slot is None:
        return None
    position, keyword = slot
    return args[position] if keyword is None else kwargs[keyword]


def _arcmemo_deepcopy(value: _ArcmemoAny) -> _ArcmemoAny:
    try:
        return _arcmemo_copy.deepcopy(value)
    except Exception:
        return value


def _arcmemo_neutral(real_routine, real_returns, hints):
    """The neutral substitute for ``concept_routine`` in the ablated run.

    Its k-th call answers like the k-th real call of the same example (the last one when
    the ablated run makes more calls). When the routine returns a grid (the ontology's
    ``output_type`` says so; without one, when the real value is a valid grid): the
    identity on the call's grid argument (a copy), or a blank grid of the real shape when
    the call has no grid argument. Otherwise a constant of the real value's type
    (0, "", [], None, zeros for arrays...).
    """
    state = {"calls": 0}
    grid_params = list(hints.get("grid_params", []))
    returns_grid = hints.get("returns_grid")

    def substitute(*args, **kwargs):
        index = min(state["calls"], len(real_returns) - 1)
        state["calls"] += 1
        real = real_returns[index] if real_returns else None
        real_is_grid = real is not None and _arcmemo_grid_problem(real) is None
        if returns_grid or (returns_grid is None and real_is_grid):
            grid = _arcmemo_grid_argument(real_routine, args, kwargs, grid_params)
            if grid is not None:
                return _arcmemo_copy_grid(grid)
            if isinstance(real, _arcmemo_np.ndarray):
                return _arcmemo_np.zeros_like(real)
            if real_is_grid and real is not None:
                return [[0 for _ in row] for row in real]
        return _arcmemo_blank(real)

    return substitute


def _arcmemo_traced(real_routine, log, calls=None):
    """The routine, logging each return value (and, when ``calls`` is given, a copy of
    each call's arguments taken before the call, for the property tests)."""

    def traced(*args, **kwargs):
        if calls is not None and len(calls) < _ARCMEMO_MAX_TESTED_CALLS:
            calls.append((_arcmemo_deepcopy(args), _arcmemo_deepcopy(kwargs), len(log)))
        value = real_routine(*args, **kwargs)
        log.append(value)
        return value

    return traced


def _arcmemo_replay(values):
    """A substitute answering ``values`` in call order (the last one when called more)."""
    state = {"calls": 0}

    def substitute(*args, **kwargs):
        index = min(state["calls"], len(values) - 1)
        state["calls"] += 1
        return _arcmemo_deepcopy(values[index]) if values else None

    return substitute


def _arcmemo_property_violations(real_routine, calls, log, hints, properties) -> dict:
    """Run each property test on each recorded call that has a grid argument and a grid
    result; ``{"tested": n, "violations": [...]}`` (at most 3 distinct lines)."""
    grid_params = list(hints.get("grid_params", []))
    tested = 0
    violations: list[str] = []
    for args, kwargs, index in calls:
        result = log[index] if index < len(log) else None
        slot = _arcmemo_grid_slot(real_routine, args, kwargs, grid_params)
        if slot is None or result is None or _arcmemo_grid_problem(result) is not None:
            continue
        position, keyword = slot
        grid = _arcmemo_np.asarray(args[position] if keyword is None else kwargs[keyword])
        tested += 1

        def again(new_grid, args=args, kwargs=kwargs, position=position, keyword=keyword):
            call_args, call_kwargs = list(_arcmemo_deepcopy(args)), dict(_arcmemo_deepcopy(kwargs))
            if keyword is None:
                call_args[position] = new_grid
            else:
                call_kwargs[keyword] = new_grid
            value = real_routine(*call_args, **call_kwargs)
            return None if _arcmemo_grid_problem(value) is not None else value

        for name in properties:
            # Defined by _properties.py, appended after this file.
            test = globals().get("_ARCMEMO_PROPERTIES", {}).get(name)
            if test is None:
                message = f"no property test named {name!r}"
            else:
                try:
                    message = test(grid.copy(), _arcmemo_np.asarray(result).copy(), again)
                except Exception as error:
                    message = f"testing it raised {type(error).__name__}: {error}"[:200]
            if message is not None:
                line = f"{name}: {message}"
                if line not in violations and len(violations) < 3:
                    violations.append(line)
    return {"tested": tested, "violations": violations}


def _arcmemo_run_transform(grid: list, routine: _ArcmemoAny) -> _ArcmemoAny:
    namespace = globals()
    namespace["concept_routine"] = routine
    try:
        return namespace["transform"](_arcmemo_np.array(grid))
    finally:
        namespace["concept_routine"] = _ARCMEMO_REAL["routine"]


_ARCMEMO_REAL: dict = {}


def _arcmemo_build_puzzle(request: dict) -> dict:
    """Build one puzzle; see the module docstring. ``request`` keys: seed, examples,
    max_draws, repeats, hints ({grid_params, returns_grid}), properties (test names)."""
    namespace = globals()
    for name in ("concept_routine", "generate_input", "transform"):
        if not callable(namespace.get(name)):
            raise NameError(f"the module defines no function {name}()")
    real_routine = namespace["concept_routine"]
    _ARCMEMO_REAL["routine"] = real_routine
    hints = dict(request.get("hints") or {})
    rng = _arcmemo_random.Random(request["seed"])
    examples: list[dict] = []
    seen: set[str] = set()
    draws = 0
    properties = list(request.get("properties") or [])
    logs: list = []
    while len(examples) < request["examples"] and draws < request["max_draws"]:
        draws += 1
        raw = namespace["generate_input"](rng)
        problem = _arcmemo_grid_problem(raw)
        if problem is not None:
            return {
                "examples": examples,
                "draws": draws,
                "input_error": f"generate_input returned {problem}: {_arcmemo_summary(raw)}",
            }
        grid = _arcmemo_plain(raw)
        key = repr(grid)
        if key in seen:
            continue
        seen.add(key)
        log: list = []
        examples.append(
            _arcmemo_example(grid, real_routine, hints, request["repeats"], log, properties)
        )
        logs.append(log)
    _arcmemo_swaps(examples, logs)
    return {"examples": examples, "draws": draws, "input_error": None}


def _arcmemo_swaps(examples: list, logs: list) -> None:
    """For each example whose ablated run raised: rerun it with the routine answering another
    example's real values; ``swap_changed`` says whether some such run changed the output."""
    for index, record in enumerate(examples):
        if record.get("ablated_error") is None or record.get("output") is None:
            continue
        others = [i for i in range(len(examples)) if i != index and logs[i]]
        record["swaps_run"], record["swap_changed"] = 0, False
        for other in others[:_ARCMEMO_MAX_SWAPS]:
            try:
                swapped = _arcmemo_run_transform(record["input"], _arcmemo_replay(logs[other]))
            except BaseException:
                continue
            if _arcmemo_grid_problem(swapped) is not None:
                continue
            record["swaps_run"] += 1
            if _arcmemo_plain(swapped) != record["output"]:
                record["swap_changed"] = True
                break


def _arcmemo_example(
    grid: list, real_routine, hints: dict, repeats: int, log: list, properties: list
) -> dict:
    calls: list = []
    output = _arcmemo_run_transform(grid, _arcmemo_traced(real_routine, log, calls))
    record: dict = {"input": grid, "calls": len(log), "output": None, "output_error": None}
    problem = _arcmemo_grid_problem(output)
    if problem is not None:
        record["output_error"] = f"transform returned {problem}: {_arcmemo_summary(output)}"
        return record
    record["output"] = _arcmemo_plain(output)
    if properties:
        record["properties"] = _arcmemo_property_violations(
            real_routine, calls, log, hints, properties
        )
    record["repeat_mismatch"] = False
    for _ in range(repeats):
        again = _arcmemo_run_transform(grid, _arcmemo_traced(real_routine, []))
        if _arcmemo_grid_problem(again) is not None or _arcmemo_plain(again) != record["output"]:
            record["repeat_mismatch"] = True
    record["ablated_output"] = None
    record["ablated_error"] = None
    try:
        ablated = _arcmemo_run_transform(grid, _arcmemo_neutral(real_routine, log, hints))
    except BaseException as error:  # any failure of the ablated run counts
        record["ablated_error"] = f"{type(error).__name__}: {error}"[:300]
        return record
    problem = _arcmemo_grid_problem(ablated)
    if problem is not None:
        record["ablated_error"] = f"transform returned {problem}"
    else:
        record["ablated_output"] = _arcmemo_plain(ablated)
    return record
