"""Checks that a generator module makes good helper puzzles that truly exercise its concept.

A generator module (written by a model) defines ``concept_routine(...)``,
``generate_input(rng)`` and ``transform(grid)``. :func:`verify_module` runs it in the
sandbox through the trusted harness (``_harness.py``, run after the module in its globals;
the sandbox leaves the harness' frames out of tracebacks) and turns what comes back into one
:class:`VerificationReport` per seed. The checks:

* ``runs``: the module executes, defines the three functions, and neither
  ``generate_input`` nor ``transform`` raises or times out;
* ``well_formed``: every grid is rectangular, ints 0-9, at most 30x30; no output equals its
  input; no output is all one color;
* ``deterministic``: ``transform`` gives the same output when run again on the same input,
  and building the puzzle twice from the same seed (in the same process, so a module that
  draws from the global ``random`` or ``np.random`` state gets different numbers) gives
  the same puzzle;
* ``diverse``: ``generate_input`` yields ``train + test`` distinct inputs within the draw
  budget;
* ``exercises_concept``: every example calls ``concept_routine`` (traced by replacing the
  module's global ``concept_routine`` with a wrapper), and with ``concept_routine`` replaced
  by a neutral substitute every example's output changes (or the ablated run fails).
  The substitute answers with the type of the real return value of the same call: when
  that is a grid, the identity on the call's grid argument (the argument bound to a
  parameter the ontology types ``grid``, else the first argument that is a valid grid), or
  a blank grid of the real shape when there is none; otherwise a constant of the real type
  (``0``, ``""``, ``[]``, ``None``, zeros for arrays...). An ablated run that *raises*
  counts only if answering another example's real values instead changes the output
  (indexing an empty substitute raises even when the value is used only incidentally);
* ``implements_concept``: ``concept_routine`` is the named concept: it passes the
  concept's property tests (:mod:`arcmemo.benchmarks.arc.puzzles.properties`; a reflection
  is an involution...) on every real call that takes and returns a grid. A concept without
  property tests is reviewed by the aux model (:mod:`arcmemo.benchmarks.arc.puzzles.review`,
  after this module) or, with none, the check is skipped with a note saying so;
* ``concept_is_crux``: no trivial baseline and no other concept of the memory applied alone
  (its reference routine) reproduces the outputs (:mod:`arcmemo.benchmarks.arc.puzzles.crux`).

Known limits: the harness shares the process with the module, so a module could in
principle forge its results (models are not adversarial here; grids are re-validated in
this process anyway), and a ``transform`` that reaches ``concept_routine`` through an alias
bound at import time (``f = concept_routine``) is reported as never calling it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from arcmemo.benchmarks.arc.grids import Grid, InvalidGridError, validate_grid
from arcmemo.benchmarks.arc.puzzles.crux import Candidates, crux_problems
from arcmemo.benchmarks.arc.puzzles.properties import property_source
from arcmemo.sandbox.base import CallResult, Program, Sandbox, SandboxLimits

CheckName = Literal[
    "runs",
    "well_formed",
    "deterministic",
    "diverse",
    "exercises_concept",
    "implements_concept",
    "concept_is_crux",
]
CHECK_NAMES: tuple[CheckName, ...] = get_args(CheckName)
_HARNESS_FUNCTION = "_arcmemo_build_puzzle"
_ALONE_FUNCTION = "_arcmemo_alone"
# Why implements_concept was skipped when no property test could run (the review keys on it).
UNTESTED = "no property test could run"


class PuzzleConfig(BaseModel):
    """How puzzles are built and checked (stored with each puzzle so it can be re-checked)."""

    train: int = Field(default=4, ge=4, description="Train pairs per puzzle (at least 4).")
    test: int = Field(default=1, ge=1, description="Test pairs per puzzle.")
    repeats: int = Field(
        default=2, ge=1, description="Extra runs of transform per input for the determinism check."
    )
    draws_per_example: int = Field(
        default=10, ge=1, description="Draw budget of generate_input per wanted distinct input."
    )
    timeout_s: float = Field(
        default=10.0, gt=0, description="Sandbox time limit to build one puzzle."
    )
    memory_mb: int = Field(default=1024, gt=0, description="Sandbox memory limit.")
    crux_tolerance: float = Field(
        default=0.1,
        ge=0,
        lt=1,
        description="A rival rule reproduces a puzzle when the cells it gets wrong are at most "
        "this share of the cells the puzzle changes (concept_is_crux).",
    )

    @property
    def examples(self) -> int:
        """Distinct examples a puzzle needs (train + test)."""
        return self.train + self.test


class RoutineHints(BaseModel):
    """What the ontology says about ``concept_routine``, used by the neutral substitute."""

    grid_params: list[str] = Field(
        default_factory=list,
        description="Python names of the parameters typed 'grid': the preferred grid argument "
        "of the identity substitute.",
    )
    returns_grid: bool | None = Field(
        default=None,
        description="Whether the routine returns a grid (output_type 'grid'); None when the "
        "ontology does not say, then the real return value decides.",
    )
    properties: list[str] = Field(
        default_factory=list,
        description="Property tests the routine must pass "
        "(arcmemo.benchmarks.arc.puzzles.properties).",
    )


class ReferenceRoutine(BaseModel):
    """Another concept's reference module (``puzzles/handwritten/<id>.py``): a rival rule."""

    concept_id: str
    concept_name: str
    source: str = Field(
        description="A module defining transform(grid) and optionally variants(grid) -> list "
        "of grids (the concept applied alone with each natural parameter setting)."
    )


class CheckResult(BaseModel):
    """The outcome of one check."""

    name: CheckName = Field(description="Which check.")
    status: Literal["passed", "failed", "skipped"] = Field(
        description="'skipped' when an earlier failure made the check meaningless."
    )
    details: list[str] = Field(default_factory=list, description="What failed, and where.")
    note: str = Field(default="", description="How the check was made (what was tried).")


class VerificationReport(BaseModel):
    """Every check of one puzzle (one module, one seed)."""

    seed: int = Field(description="Seed of the random.Random given to generate_input.")
    checks: list[CheckResult] = Field(description="One entry per check, in CHECK_NAMES order.")

    @property
    def passed(self) -> bool:
        """True when no check failed and every check ran or was skipped by design.

        A check is skipped either after an earlier failure (so the report already failed)
        or, for ``implements_concept``, when the concept has no property test and no
        review model was given (its note says so).
        """
        return bool(self.checks) and all(check.status != "failed" for check in self.checks)

    def check(self, name: CheckName) -> CheckResult | None:
        """The result of check ``name`` (None in reports made before it existed)."""
        return next((check for check in self.checks if check.name == name), None)

    def failed(self) -> list[CheckResult]:
        """The checks that failed."""
        return [check for check in self.checks if check.status == "failed"]

    def summary(self) -> str:
        """One line: ``passed`` or the failed check names."""
        failed = [check.name for check in self.failed()]
        return "passed" if not failed else "failed: " + ", ".join(failed)


class PuzzlePair(BaseModel):
    """One example of a puzzle."""

    input: Grid
    output: Grid


class VerifiedPuzzle(BaseModel):
    """The puzzle one seed produced, and its report; ``train``/``test`` are empty on failure."""

    seed: int
    train: list[PuzzlePair] = Field(default_factory=list)
    test: list[PuzzlePair] = Field(default_factory=list)
    report: VerificationReport

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return self.report.passed

    def task_json(self) -> dict[str, Any]:
        """The puzzle as a standard ARC task object."""
        return {
            "train": [pair.model_dump() for pair in self.train],
            "test": [pair.model_dump() for pair in self.test],
        }


@cache
def harness_source() -> str:
    """The trusted harness code appended to every generator module."""
    return Path(__file__).with_name("_harness.py").read_text(encoding="utf-8")


def example_label(index: int, train: int) -> str:
    """``train 1`` ... ``train N``, then ``test 1`` ...; 1-based as people count."""
    return f"train {index + 1}" if index < train else f"test {index - train + 1}"


def _grid_problem(value: Any) -> str | None:
    try:
        validate_grid(value)
    except InvalidGridError as error:
        return str(error).removeprefix("output ")
    return None


def _grouped(entries: list[tuple[str, str]]) -> list[str]:
    """``(where, message)`` pairs as lines, one per distinct message listing every place."""
    places: dict[str, list[str]] = {}
    for where, message in entries:
        places.setdefault(message, []).append(where)
    return [f"{', '.join(wheres)}: {message}" for message, wheres in places.items()]


def _request(seed: int, config: PuzzleConfig, hints: RoutineHints) -> dict[str, Any]:
    return {
        "seed": seed,
        "examples": config.examples,
        "max_draws": config.examples * config.draws_per_example,
        "repeats": config.repeats,
        "hints": hints.model_dump(),
        "properties": list(hints.properties),
    }


def _puzzle_view(value: Any) -> list[tuple[Any, Any]]:
    examples = value.get("examples", []) if isinstance(value, dict) else []
    return [(e.get("input"), e.get("output")) for e in examples if isinstance(e, dict)]


def judge(
    first: CallResult,
    second: CallResult,
    *,
    seed: int,
    config: PuzzleConfig,
    hints: RoutineHints | None = None,
    rivals: dict[str, Candidates] | None = None,
) -> VerifiedPuzzle:
    """Decide every check from two harness builds of the same seed and the outputs of the
    other concepts' reference routines on its inputs (``rivals``; pure, no sandbox)."""
    hints = hints or RoutineHints()
    checks: dict[CheckName, CheckResult] = {}

    def record(name: CheckName, details: list[str], note: str = "") -> None:
        checks[name] = CheckResult(
            name=name, status="failed" if details else "passed", details=details, note=note
        )

    def report() -> VerificationReport:
        ordered = [
            checks.get(name, CheckResult(name=name, status="skipped")) for name in CHECK_NAMES
        ]
        return VerificationReport(seed=seed, checks=ordered)

    value = first.value if first.ok else None
    if not first.ok or not isinstance(value, dict) or not isinstance(value.get("examples"), list):
        reason = first.error or "the harness returned no puzzle"
        if first.error_kind == "timeout":
            reason += " (an endless loop, or generate_input retrying forever?)"
        record("runs", [reason])
        return VerifiedPuzzle(seed=seed, report=report())
    record("runs", [])
    examples: list[dict[str, Any]] = [e for e in value["examples"] if isinstance(e, dict)]

    def label(index: int) -> str:
        return example_label(index, config.train)

    # well-formed
    problems: list[str] = []
    if value.get("input_error"):
        problems.append(f"draw {value.get('draws')}: {value['input_error']}")
    for index, example in enumerate(examples):
        where = label(index)
        input_problem = _grid_problem(example.get("input"))
        if input_problem:
            problems.append(f"{where}: the input grid {input_problem}")
            continue
        if example.get("output_error"):
            problems.append(f"{where}: {example['output_error']}")
            continue
        output_problem = _grid_problem(example.get("output"))
        if output_problem:
            problems.append(f"{where}: the output grid {output_problem}")
            continue
        output = validate_grid(example["output"])
        if output == validate_grid(example["input"]):
            problems.append(f"{where}: the output equals the input")
        colors = {cell for row in output for cell in row}
        if len(colors) == 1:
            problems.append(f"{where}: the output is all one color ({colors.pop()})")
    record("well_formed", problems)

    # deterministic
    problems = _grouped(
        [
            (
                label(index),
                "transform gave a different output when run again on the same input "
                "(transform must not use randomness or global state)",
            )
            for index, example in enumerate(examples)
            if example.get("repeat_mismatch")
        ]
    )
    if not second.ok:
        problems.append(
            f"building the puzzle a second time from seed {seed} failed: "
            + (second.error or "no result")
        )
    else:
        again = _puzzle_view(second.value)
        mine = _puzzle_view(value)
        differing = [
            label(index)
            for index in range(max(len(mine), len(again)))
            if index >= len(mine) or index >= len(again) or mine[index] != again[index]
        ]
        if differing:
            problems.append(
                f"the same seed {seed} gave a different puzzle ({', '.join(differing)} "
                "differ): generate_input must draw all randomness from its rng argument, "
                "and transform must not use randomness at all"
            )
    record("deterministic", problems)

    # diverse
    if not value.get("input_error"):
        problems = []
        if len(examples) < config.examples:
            problems.append(
                f"generate_input gave only {len(examples)} distinct inputs in "
                f"{value.get('draws')} draws; a puzzle needs {config.train} train + "
                f"{config.test} test = {config.examples} distinct inputs (vary sizes, "
                "positions, colors and counts with rng)"
            )
        record("diverse", problems)

    # exercises the concept
    entries: list[tuple[str, str]] = []
    for index, example in enumerate(examples):
        if example.get("output") is None:
            continue
        where = label(index)
        if not example.get("calls"):
            entries.append(
                (
                    where,
                    "transform never called concept_routine (call it by that global name: "
                    "it is traced by replacing the name)",
                )
            )
            continue
        if example.get("ablated_error") is None and example.get("ablated_output") == example.get(
            "output"
        ):
            entries.append(
                (
                    where,
                    "with concept_routine replaced by a neutral substitute (identity on its "
                    "grid argument, or a blank value of its return type) the output is "
                    "unchanged, so the concept is not load-bearing; make the output depend on "
                    "what concept_routine returns, and make every input need it",
                )
            )
        elif example.get("ablated_error") is not None and not example.get("swap_changed"):
            completed = example.get("swaps_run", 0)
            outcome = (
                f"({completed} runs completed) the output is unchanged, so the concept is "
                "used only incidentally"
                if completed
                else "every run crashed too, so nothing shows that the output depends on it"
            )
            entries.append(
                (
                    where,
                    "the ablated run only crashed, and with concept_routine answering the "
                    f"real values of other examples instead {outcome}; the output must "
                    "depend on what concept_routine returns",
                )
            )
    record("exercises_concept", _grouped(entries))

    with_output = [e for e in examples[: config.examples] if e.get("output") is not None]
    if "well_formed" in checks and checks["well_formed"].status == "passed" and with_output:
        _implements(checks, hints, with_output, label)
        inputs = [validate_grid(e["input"]) for e in with_output]
        outputs = [validate_grid(e["output"]) for e in with_output]
        problems, note = crux_problems(
            inputs, outputs, rivals or {}, tolerance=config.crux_tolerance
        )
        record("concept_is_crux", problems, note)

    puzzle = VerifiedPuzzle(seed=seed, report=report())
    if puzzle.passed:
        pairs = [
            PuzzlePair(input=validate_grid(e["input"]), output=validate_grid(e["output"]))
            for e in examples[: config.examples]
        ]
        puzzle.train, puzzle.test = pairs[: config.train], pairs[config.train :]
    return puzzle


def _implements(
    checks: dict[CheckName, CheckResult],
    hints: RoutineHints,
    examples: list[dict[str, Any]],
    label: Any,
) -> None:
    """The ``implements_concept`` check from the property-test results of the examples."""
    if not hints.properties:
        checks["implements_concept"] = CheckResult(
            name="implements_concept",
            status="skipped",
            note=f"{UNTESTED}: the concept has no property test",
        )
        return
    entries: list[tuple[str, str]] = []
    tested = 0
    for index, example in enumerate(examples):
        found = example.get("properties")
        result: dict[str, Any] = found if isinstance(found, dict) else {}
        tested += int(result.get("tested", 0))
        entries += [(label(index), str(line)) for line in result.get("violations", [])]
    names = ", ".join(hints.properties)
    if not tested and not entries:
        checks["implements_concept"] = CheckResult(
            name="implements_concept",
            status="skipped",
            note=f"{UNTESTED}: no call of concept_routine took and returned a grid "
            f"(property tests {names})",
        )
        return
    details = [
        f"concept_routine does not behave like the concept: {line}" for line in _grouped(entries)
    ]
    checks["implements_concept"] = CheckResult(
        name="implements_concept",
        status="failed" if details else "passed",
        details=details,
        note=f"property tests {names} on {tested} call(s)",
    )


@cache
def alone_harness_source() -> str:
    """The trusted harness that runs a reference routine alone on one input."""
    return Path(__file__).with_name("_alone.py").read_text(encoding="utf-8")


def rival_outputs(
    sandbox: Sandbox,
    references: list[ReferenceRoutine],
    inputs: list[Grid],
    limits: SandboxLimits,
) -> dict[str, Candidates]:
    """Each reference routine applied alone to each input, in the sandbox: per rival name
    (``concept name`` or ``concept name (variant k)``), its output for each input."""
    rivals: dict[str, Candidates] = {}
    for reference in references:
        program = Program(
            source=reference.source, entry=_ALONE_FUNCTION, harness=alone_harness_source()
        )
        results = sandbox.run(program, [[grid] for grid in inputs], limits=limits)
        per_input: list[list[Grid | None]] = []
        for result in results:
            values = result.value if result.ok and isinstance(result.value, list) else []
            per_input.append([None if _grid_problem(v) else validate_grid(v) for v in values])
        count = max((len(v) for v in per_input), default=0)
        for k in range(count):
            name = reference.concept_name
            if count > 1:
                name += f" (variant {k + 1})"
            rivals[name] = [v[k] if k < len(v) else None for v in per_input]
    return rivals


def verify_module(
    sandbox: Sandbox,
    source: str,
    seeds: list[int],
    *,
    config: PuzzleConfig | None = None,
    hints: RoutineHints | None = None,
    references: list[ReferenceRoutine] | None = None,
) -> list[VerifiedPuzzle]:
    """Build and check one puzzle per seed from the generator module ``source``.

    All builds run in one sandbox process (each seed twice in a row, for the determinism
    check); a timeout or crash only costs the build it happened in. Then each of the other
    concepts' ``references`` runs alone on every input (one sandbox process each).
    """
    config = config or PuzzleConfig()
    hints = hints or RoutineHints()
    if not seeds:
        return []
    requests = [_request(seed, config, hints) for seed in seeds]
    args_list = [[request] for request in requests for _ in range(2)]
    limits = SandboxLimits(timeout_s=config.timeout_s, memory_mb=config.memory_mb)
    harness = harness_source() + "\n\n" + property_source()
    program = Program(source=source, entry=_HARNESS_FUNCTION, harness=harness)
    results = sandbox.run(program, args_list, limits=limits)
    inputs: list[list[Grid]] = []
    for index in range(len(seeds)):
        first = results[2 * index]
        seed_inputs = []
        for grid, _ in _puzzle_view(first.value if first.ok else None)[: config.examples]:
            if _grid_problem(grid) is None:
                seed_inputs.append(validate_grid(grid))
        inputs.append(seed_inputs)
    flat = [grid for seed_inputs in inputs for grid in seed_inputs]
    rivals = rival_outputs(sandbox, references or [], flat, limits) if flat else {}
    puzzles = []
    start = 0
    for index, seed in enumerate(seeds):
        count = len(inputs[index])
        mine = {name: outs[start : start + count] for name, outs in rivals.items()}
        start += count
        puzzles.append(
            judge(
                results[2 * index],
                results[2 * index + 1],
                seed=seed,
                config=config,
                hints=hints,
                rivals=mine,
            )
        )
    return puzzles
