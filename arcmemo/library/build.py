"""Building the library: verified programs in, tested library functions in the memory out.

1. each program is split into helpers (:mod:`~arcmemo.library.split`) and run in the
   sandbox on its task's examples with the helpers traced (:mod:`~arcmemo.library.trace`);
2. helpers whose closures have the same normalised AST are one candidate (the same code
   inlined into several programs, or written twice with other names);
3. each candidate runs standalone (its closure taken from its program) on its own
   recorded calls, and on those of candidates that take arguments of the same kinds:
   one whose own calls do not reproduce is dropped, and candidates that give the same
   outcome on every one of those calls are one function (the same behaviour);
4. a candidate with the same code as a function the memory has already extends it (its
   sources and tests) instead of being added again; every other one is named (its
   helper's name; another task's different helper of that name gets the task id as a
   suffix), its source calls the other library functions by name, and a function whose
   module would bind a global name differently from another's is dropped;
5. the recorded tests of every function are re-run standalone from the memory's own
   texts (:func:`~arcmemo.library.calls.run_recorded_tests`): only passing functions, and
   the untested helpers they call, are kept;
6. each kept function joins the routine concept its name names, or a new routine concept
   is proposed for it (its provenance's author is :data:`PROPOSED_AUTHOR`).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.library.calls import CallCache, passes, run_calls, run_recorded_tests
from arcmemo.library.modules import LibraryConflictError, memory_functions, module_text
from arcmemo.library.names import rename_references
from arcmemo.library.split import (
    ProgramSyntaxError,
    SplitProgram,
    normalised_closure,
    positional_arity,
    signature_of,
    split_program,
)
from arcmemo.library.trace import Pair, Trace, trace_program
from arcmemo.library.values import TAG, canonical, classes_in, returned
from arcmemo.memory.schema import Concept, LibraryFunction, Memory, Provenance, RecordedCall
from arcmemo.sandbox import Sandbox

MAX_TESTS = 10
"""Recorded calls kept per function, taken in turn from the tasks it came from."""
PROBES_PER_CANDIDATE = 3
"""Calls of each candidate that the others of its kind are run on (behaviour dedupe)."""
PROPOSED_AUTHOR = "library (proposed)"
"""The author of a concept proposed for a function no concept of the memory names."""
DEFAULT_ENTRY_POINTS = frozenset({"transform"})
_STOPWORDS = frozenset(
    {"a", "an", "the", "of", "to", "by", "and", "in", "on", "for", "with", "from", "get", "is"}
)


class BuildReport(BaseModel):
    """What :func:`build_library` did, in counts, with every program's and function's
    problem named."""

    programs: int = Field(default=0, description="Programs given.")
    traced: int = Field(
        default=0, description="Programs with helpers whose every example matched traced."
    )
    without_helpers: int = Field(default=0, description="Programs with no helper to trace.")
    helpers: int = Field(default=0, description="Helper defs in all programs.")
    candidates: int = Field(default=0, description="Candidates after the AST dedupe.")
    recorded: int = Field(default=0, description="Candidates with at least one recorded call.")
    merged_by_behaviour: int = Field(
        default=0, description="Candidates merged into another by identical outcomes."
    )
    functions: int = Field(default=0, description="Library functions written.")
    functions_tested: int = Field(default=0, description="Written functions with a test.")
    tests: int = Field(default=0, description="Recorded calls of the written functions.")
    tests_passed: int = Field(default=0, description="Of those, passing standalone.")
    shared: dict[str, int] = Field(
        default_factory=dict, description="Function name -> programs it came from (>= 2)."
    )
    attached: int = Field(default=0, description="Functions joined to an existing concept.")
    extended: int = Field(
        default=0,
        description="Functions the memory had already that candidates with the same code "
        "extended (sources and tests) instead of adding another.",
    )
    proposed: int = Field(default=0, description="New routine concepts proposed.")
    dropped: dict[str, str] = Field(
        default_factory=dict, description="Candidate (task:helper) -> why it was not kept."
    )
    errors: dict[str, str] = Field(
        default_factory=dict, description="Task -> why its program gave no calls."
    )
    names: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="Task -> helper -> the library function with its behaviour (refactor).",
    )


@dataclass
class _Candidate:
    members: list[tuple[str, str]]
    tests: list[RecordedCall] = field(default_factory=list)
    arity: int = 0
    outcomes: list[str | None] = field(default_factory=list)

    @property
    def rep(self) -> tuple[str, str]:
        return self.members[0]

    @property
    def tasks(self) -> list[str]:
        return list(dict.fromkeys(task for task, _ in self.members))


def _spread(calls: Sequence[RecordedCall], limit: int) -> list[RecordedCall]:
    """At most ``limit`` calls, taken in turn from each task (so a shared function keeps
    tests from many programs), distinct by arguments."""
    by_task: dict[str | None, list[RecordedCall]] = defaultdict(list)
    seen: set[str] = set()
    for call in calls:
        key = canonical([call.args, call.kwargs])
        if key not in seen:
            seen.add(key)
            by_task[call.task_id].append(call)
    chosen: list[RecordedCall] = []
    queues = list(by_task.values())
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return chosen


def _kind(value: Any) -> str:
    if isinstance(value, dict) and TAG in value:
        if value[TAG] == "ndarray":
            return f"ndarray{len(value['shape'])}"
        return str(value[TAG])
    return type(value).__name__


def _bucket(candidate: _Candidate) -> tuple[Any, ...]:
    first = candidate.tests[0]
    return (candidate.arity, tuple(_kind(a) for a in first.args), tuple(sorted(first.kwargs)))


def _classes(calls: Sequence[RecordedCall]) -> set[str]:
    found: set[str] = set()
    for call in calls:
        found |= classes_in([call.args, call.kwargs, call.result])
    return found


def _preamble(
    programs: Mapping[str, SplitProgram], candidate: _Candidate, names: list[str]
) -> list[str]:
    """The statements the rep's functions ``names`` need, and those defining the classes
    of the recorded objects (from the first member program that defines one the rep's
    program does not: a shared function meets other programs' objects)."""
    task, _ = candidate.rep
    program = programs[task]
    classes = _classes(candidate.tests)
    texts = [s.text for s in program.preamble(names, classes)]
    bound = {name for s in program.statements for name in s.binds}
    for missing in sorted(classes - bound):
        for other, _ in candidate.members:
            statements = programs[other].preamble([], {missing})
            if any(missing in s.binds for s in statements):
                texts += [s.text for s in statements if s.text not in texts]
                break
    return texts


def _local_module(programs: Mapping[str, SplitProgram], candidate: _Candidate) -> str:
    program = programs[candidate.rep[0]]
    closure = program.helper_closure(candidate.rep[1])
    texts = _preamble(programs, candidate, closure)
    texts += [program.helpers[name].text for name in closure]
    return "\n\n".join(texts) + "\n"


def _split_all(
    programs: Mapping[str, str], entry_points: frozenset[str], report: BuildReport
) -> dict[str, SplitProgram]:
    split: dict[str, SplitProgram] = {}
    for task_id, source in programs.items():
        try:
            split[task_id] = split_program(task_id, source, entry_points)
        except ProgramSyntaxError as error:
            report.errors[task_id] = str(error)
    return split


def _trace_all(
    sandbox: Sandbox,
    programs: Mapping[str, str],
    split: Mapping[str, SplitProgram],
    tasks: Mapping[str, Sequence[Pair]],
    entry: str,
    workers: int,
) -> dict[str, Trace]:
    def one(task_id: str) -> Trace:
        return trace_program(
            sandbox,
            task_id,
            programs[task_id],
            tasks.get(task_id, []),
            list(split[task_id].helpers),
            entry=entry,
        )

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return dict(zip(split, pool.map(one, list(split)), strict=True))


def _candidates(split: Mapping[str, SplitProgram], traces: Mapping[str, Trace]) -> list[_Candidate]:
    by_key: dict[str, _Candidate] = {}
    for task_id, program in split.items():
        for name, helper in program.helpers.items():
            key = normalised_closure(program, name)
            candidate = by_key.get(key)
            if candidate is None:
                candidate = by_key[key] = _Candidate(
                    members=[], arity=positional_arity(helper.node)
                )
            candidate.members.append((task_id, name))
            trace = traces.get(task_id)
            if trace is not None:
                candidate.tests.extend(trace.calls.get(name, []))
    for candidate in by_key.values():
        candidate.tests = _spread(candidate.tests, MAX_TESTS)
    return list(by_key.values())


def _check_and_merge(
    sandbox: Sandbox,
    split: Mapping[str, SplitProgram],
    candidates: list[_Candidate],
    report: BuildReport,
    workers: int,
    cache: CallCache | None = None,
) -> list[_Candidate]:
    """Run every tested candidate standalone on its calls and its kind's probes; drop the
    ones whose own calls do not reproduce; merge those with equal outcomes."""
    tested = [c for c in candidates if c.tests]
    buckets: dict[tuple[Any, ...], list[_Candidate]] = defaultdict(list)
    for candidate in tested:
        buckets[_bucket(candidate)].append(candidate)
    probes: dict[tuple[Any, ...], list[RecordedCall]] = {}
    for key, members in buckets.items():
        shared: list[RecordedCall] = []
        if len(members) > 1:
            for member in members:
                shared.extend(member.tests[:PROBES_PER_CANDIDATE])
        probes[key] = shared

    def run(candidate: _Candidate) -> None:
        calls = candidate.tests + probes[_bucket(candidate)]
        module = _local_module(split, candidate)
        candidate.outcomes = run_calls(sandbox, module, candidate.rep[1], calls, cache=cache)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        list(pool.map(run, tested))

    kept: list[_Candidate] = [c for c in candidates if not c.tests]
    for members in buckets.values():
        groups: dict[tuple[str | None, ...], _Candidate] = {}
        for candidate in members:
            own = candidate.outcomes[: len(candidate.tests)]
            if not all(passes(own, candidate.tests)):
                failed = sum(1 for ok in passes(own, candidate.tests) if not ok)
                report.dropped[":".join(candidate.rep)] = (
                    f"{failed} of its {len(candidate.tests)} recorded calls do not reproduce "
                    "when it runs standalone"
                )
                continue
            signature = tuple(candidate.outcomes[len(candidate.tests) :])
            if len(members) == 1 or None in signature:
                kept.append(candidate)
                continue
            first = groups.get(signature)
            if first is None:
                groups[signature] = candidate
                kept.append(candidate)
                continue
            first.members.extend(candidate.members)
            first.tests = _spread(first.tests + candidate.tests, MAX_TESTS)
            report.merged_by_behaviour += 1
    return kept


def _identifier(text: str) -> str:
    cleaned = re.sub(r"\W", "_", text)
    return cleaned if cleaned[:1].isalpha() or cleaned[:1] == "_" else f"t_{cleaned}"


def _name_candidates(
    candidates: list[_Candidate], reserved: set[str]
) -> dict[tuple[str, str], str]:
    """(task, helper) -> library name, for every member of every candidate."""
    names: dict[tuple[str, str], str] = {}
    taken = set(reserved)
    order = sorted(candidates, key=lambda c: (-len(c.tasks), c.rep))
    for candidate in order:
        task, helper = candidate.rep
        name = helper
        if name in taken:
            name = _identifier(f"{helper}_{task}")
        suffix = 2
        base = name
        while name in taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        taken.add(name)
        for member in candidate.members:
            names[member] = name
    return names


def _function(
    split: Mapping[str, SplitProgram],
    candidate: _Candidate,
    names: Mapping[tuple[str, str], str],
) -> LibraryFunction | None:
    """The candidate as a library function, or None when a helper it calls has no name."""
    task, helper = candidate.rep
    program = split[task]
    calls = program.helper_calls(helper)
    if any((task, used) not in names for used in calls):
        return None
    renames = {helper: names[(task, helper)]}
    renames.update({used: names[(task, used)] for used in calls})
    node = program.helpers[helper].node
    texts = _preamble(split, candidate, [helper])
    texts.append(rename_references(program.helpers[helper].text, renames))
    return LibraryFunction(
        name=names[(task, helper)],
        source="\n\n".join(texts) + "\n",
        signature=signature_of(node),
        docstring=ast.get_docstring(node) or "",
        tests=list(candidate.tests),
        sources=candidate.tasks,
    )


def _words(text: str) -> set[str]:
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    words = {w.lower().rstrip("s") for w in re.split(r"[^A-Za-z0-9]+", text)}
    return {
        w
        for w in words
        if len(w) > 1 and w not in _STOPWORDS and not re.fullmatch(r"[0-9a-f]{8}", w)
    }


def _title(function: LibraryFunction) -> str:
    words = re.split(r"[_\W]+", function.name)
    return " ".join(w for w in words if w and not re.fullmatch(r"[0-9a-f]{8}", w)) or function.name


def _join(concept: Concept, function: LibraryFunction, report: BuildReport) -> None:
    concept.functions.append(function)
    if PROPOSED_AUTHOR not in concept.provenance.authors:
        report.attached += 1


def _attach(memory: Memory, function: LibraryFunction, report: BuildReport) -> None:
    """Put ``function`` on the live routine concept its name names: the concept of that
    name, else the one sharing the most words with it (at least half of all their words),
    else a proposed one."""
    title = _title(function)
    exact = memory.find(title)
    if exact is not None and exact.kind == "routine" and exact.retired is None:
        _join(exact, function, report)
        return
    wanted = _words(function.name)
    best: tuple[float, Concept] | None = None
    for concept in memory.concepts:
        if concept.kind != "routine" or concept.retired is not None:
            continue
        words = _words(concept.name)
        if not words or not wanted:
            continue
        score = len(words & wanted) / len(words | wanted)
        if score >= 0.5 and (best is None or score > best[0]):
            best = (score, concept)
    if best is not None:
        _join(best[1], function, report)
        return
    if exact is not None:  # a structure or a retired concept has the name
        title = f"{title} routine"
        taken = memory.find(title)
        if taken is not None and taken.kind == "routine" and taken.retired is None:
            _join(taken, function, report)
            return
        if taken is not None:
            title = f"{title} {function.name}"
    grids = [returned(test.result) for test in function.tests]
    makes_grids = bool(grids) and all(
        isinstance(g, dict) and g.get(TAG) == "ndarray" and len(g["shape"]) == 2 for g in grids
    )
    memory.add(
        Concept(
            name=title,
            kind="routine",
            routine_subtype="grid manipulation" if makes_grids else "intermediate",
            description=" ".join(function.docstring.strip().split("\n\n")[0].split())[:300],
            functions=[function],
            provenance=Provenance(sources=list(function.sources)),
        ),
        actor=PROPOSED_AUTHOR,
    )
    report.proposed += 1


def trace_programs(
    programs: Mapping[str, str],
    tasks: Mapping[str, Sequence[Pair]],
    sandbox: Sandbox,
    *,
    entry: str = "transform",
    entry_points: frozenset[str] = DEFAULT_ENTRY_POINTS,
    workers: int = 2,
) -> dict[str, Trace]:
    """Step 1 alone: each program (task id -> source) run on its task's examples with its
    helpers traced, by task id (a program that does not parse has none). A program's
    trace does not depend on the other programs: traces kept once serve every build from
    a subset (:func:`build_from_traces`)."""
    split = _split_all(programs, entry_points | {entry}, BuildReport())
    return _trace_all(sandbox, programs, split, tasks, entry, workers)


def build_library(
    programs: Mapping[str, str],
    tasks: Mapping[str, Sequence[Pair]],
    memory: Memory,
    sandbox: Sandbox,
    *,
    entry: str = "transform",
    entry_points: frozenset[str] = DEFAULT_ENTRY_POINTS,
    workers: int = 2,
    cache: CallCache | None = None,
) -> BuildReport:
    """Extract tested library functions from verified ``programs`` (task id -> source,
    run on ``tasks``' examples, task id -> (input, output) pairs) into ``memory`` (changed
    in place; the caller saves it). The module docstring gives the steps:
    :func:`trace_programs` then :func:`build_from_traces`, the programs split once."""
    report = BuildReport(programs=len(programs))
    split = _split_all(programs, entry_points | {entry}, report)
    traces = _trace_all(sandbox, programs, split, tasks, entry, workers)
    return _build(split, traces, memory, sandbox, report, workers, cache)


def build_from_traces(
    programs: Mapping[str, str],
    traces: Mapping[str, Trace],
    memory: Memory,
    sandbox: Sandbox,
    *,
    entry: str = "transform",
    entry_points: frozenset[str] = DEFAULT_ENTRY_POINTS,
    workers: int = 2,
    cache: CallCache | None = None,
) -> BuildReport:
    """Steps 2 to 6 over ``programs`` whose traces :func:`trace_programs` made (a program
    without one gives no tests): the library of exactly these programs. The standalone
    runs go to the sandbox; with a ``cache`` only the calls it does not hold already."""
    report = BuildReport(programs=len(programs))
    split = _split_all(programs, entry_points | {entry}, report)
    return _build(split, traces, memory, sandbox, report, workers, cache)


def _build(
    split: Mapping[str, SplitProgram],
    traces: Mapping[str, Trace],
    memory: Memory,
    sandbox: Sandbox,
    report: BuildReport,
    workers: int,
    cache: CallCache | None,
) -> BuildReport:
    """Steps 2 to 6 over the split programs and their traces, counted into ``report``."""
    report.helpers = sum(len(p.helpers) for p in split.values())
    empty = Trace(task_id="")
    for task_id, program in split.items():
        trace = traces.get(task_id, empty)
        if trace.errors:
            report.errors[task_id] = trace.errors[0]
        if not program.helpers:
            report.without_helpers += 1
        elif trace.examples and trace.matched == trace.examples:
            report.traced += 1
    candidates = _candidates(split, traces)
    report.candidates = len(candidates)
    report.recorded = sum(1 for c in candidates if c.tests)
    candidates = _check_and_merge(sandbox, split, candidates, report, workers, cache)
    known, candidates = _extend_existing(memory, sandbox, split, candidates, report, workers, cache)
    names = {**known, **_name_candidates(candidates, set(memory_functions(memory)))}
    functions = _assemble(split, candidates, names, report)
    functions = _keep_passing(memory, sandbox, functions, report, workers, cache)
    # The most shared first: a concept is proposed for a function before its variants.
    for function in sorted(functions.values(), key=lambda f: -len(set(f.sources))):
        _attach(memory, function, report)
        if len(function.sources) >= 2:
            report.shared[function.name] = len(function.sources)
    kept = set(functions) | set(known.values())
    report.names = {}
    for (task, helper), name in names.items():
        if name in kept:
            report.names.setdefault(task, {})[helper] = name
    report.functions = len(functions)
    report.functions_tested = sum(1 for f in functions.values() if f.tests)
    return report


def _extend_existing(
    memory: Memory,
    sandbox: Sandbox,
    split: Mapping[str, SplitProgram],
    candidates: list[_Candidate],
    report: BuildReport,
    workers: int,
    cache: CallCache | None = None,
) -> tuple[dict[tuple[str, str], str], list[_Candidate]]:
    """Candidates with the same code as a function the memory has already extend it (its
    sources, and its tests while they pass) instead of adding another: building twice from
    the same programs adds nothing. Returns the names found and the candidates left."""
    existing = memory_functions(memory)
    if not existing:
        return {}, candidates
    library = split_program("library", module_text(existing.values()), frozenset())
    keys = {normalised_closure(library, name, preamble=False): name for name in existing}
    known: dict[tuple[str, str], str] = {}
    left: list[_Candidate] = []
    previous: dict[str, list[RecordedCall]] = {}
    for candidate in candidates:
        task, helper = candidate.rep
        name = keys.get(normalised_closure(split[task], helper, preamble=False))
        if name is None:
            left.append(candidate)
            continue
        function = existing[name]
        previous.setdefault(name, list(function.tests))
        for source in candidate.tasks:
            if source not in function.sources:
                function.sources.append(source)
        function.tests[:] = _spread([*function.tests, *candidate.tests], MAX_TESTS)
        known.update(dict.fromkeys(candidate.members, name))
    if previous:
        results = run_recorded_tests(
            memory, sandbox, names=sorted(previous), workers=workers, cache=cache
        )
        for result in results:
            if not result.ok:  # the new calls do not reproduce from the memory's text
                existing[result.name].tests[:] = previous[result.name]
        report.extended = len(previous)
    return known, left


def _assemble(
    split: Mapping[str, SplitProgram],
    candidates: list[_Candidate],
    names: Mapping[tuple[str, str], str],
    report: BuildReport,
) -> dict[str, LibraryFunction]:
    functions: dict[str, LibraryFunction] = {}
    for candidate in candidates:
        function = _function(split, candidate, names)
        if function is None:
            report.dropped[":".join(candidate.rep)] = "a helper it calls was dropped"
            continue
        try:
            module_text([*functions.values(), function])
        except (LibraryConflictError, SyntaxError) as error:
            report.dropped[":".join(candidate.rep)] = str(error)
            continue
        functions[function.name] = function
    return functions


def _dependents(functions: Mapping[str, LibraryFunction], missing: set[str]) -> set[str]:
    from arcmemo.library.modules import calls_of

    gone = set(missing)
    changed = True
    while changed:
        changed = False
        for name, function in functions.items():
            if name not in gone and any(
                dep in gone for dep in calls_of(function, functions.keys())
            ):
                gone.add(name)
                changed = True
    return gone


def _keep_passing(
    memory: Memory,
    sandbox: Sandbox,
    functions: dict[str, LibraryFunction],
    report: BuildReport,
    workers: int,
    cache: CallCache | None = None,
) -> dict[str, LibraryFunction]:
    """The functions whose recorded tests pass from their final texts, the untested ones
    only where a kept one calls them; counts the kept functions' tests."""
    scratch = Memory(
        concepts=[
            Concept(
                name="library build",
                kind="routine",
                functions=[*memory_functions(memory).values(), *functions.values()],
            )
        ]
    )
    results = {
        r.name: r
        for r in run_recorded_tests(
            scratch, sandbox, names=list(functions), workers=workers, cache=cache
        )
    }
    failed = {name for name, r in results.items() if not r.ok}
    for name in sorted(failed):
        report.dropped[f"{functions[name].sources[0]}:{name}"] = "; ".join(
            results[name].failures[:2]
        )
    gone = _dependents(functions, failed)
    for name in sorted(gone - failed):
        report.dropped[f"{functions[name].sources[0]}:{name}"] = (
            "a library function it calls failed its tests"
        )
    kept = {n: f for n, f in functions.items() if n not in gone}
    needed: set[str] = set()
    from arcmemo.library.modules import closure

    for name, function in kept.items():
        if function.tests:
            needed.update(closure(kept, name))
    kept = {n: f for n, f in kept.items() if n in needed}
    report.tests = sum(len(f.tests) for f in kept.values())
    report.tests_passed = sum(results[n].passed for n in kept)
    return kept
