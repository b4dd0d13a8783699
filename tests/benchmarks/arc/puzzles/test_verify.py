"""The checks, run for real in the local sandbox on modules that fail in one way each."""

from __future__ import annotations

import pytest

from arcmemo.benchmarks.arc.grids import validate_grid
from arcmemo.benchmarks.arc.puzzles.verify import (
    CHECK_NAMES,
    PuzzleConfig,
    RoutineHints,
    VerifiedPuzzle,
    verify_module,
)
from arcmemo.sandbox import Sandbox
from tests.support import puzzle_modules as modules
from tests.support.paths import HANDWRITTEN

HINTS = RoutineHints(
    grid_params=["grid"], returns_grid=True, properties=["involution", "same_colors"]
)


def run(
    sandbox: Sandbox, source: str, hints: RoutineHints = HINTS, **config: object
) -> VerifiedPuzzle:
    (puzzle,) = verify_module(
        sandbox, source, [7], config=PuzzleConfig.model_validate(config), hints=hints
    )
    return puzzle


def statuses(puzzle: VerifiedPuzzle) -> dict[str, str]:
    return {check.name: check.status for check in puzzle.report.checks}


def details(puzzle: VerifiedPuzzle, name: str) -> str:
    return "\n".join(next(c for c in puzzle.report.checks if c.name == name).details)


def test_every_bad_module_differs_from_the_good_one() -> None:
    # Guards the string surgery in tests/support/puzzle_modules.py: a replace that matched
    # nothing would make a "bad" module a copy of the good one.
    bad = {name: value for name, value in vars(modules).items() if name.isupper()}
    del bad["GOOD"]
    assert all(source != modules.GOOD for source in bad.values())
    assert modules.COUNTS_UNUSED != modules.COUNTS_COLORS


def test_a_good_generator_passes_every_check_and_yields_the_puzzle(sandbox: Sandbox) -> None:
    puzzle = run(sandbox, modules.GOOD)
    assert statuses(puzzle) == dict.fromkeys(CHECK_NAMES, "passed")
    implements = puzzle.report.check("implements_concept")
    assert implements is not None and implements.note == (
        "property tests involution, same_colors on 5 call(s)"
    )
    assert puzzle.passed and len(puzzle.train) == 4 and len(puzzle.test) == 1
    pairs = puzzle.train + puzzle.test
    assert len({str(pair.input) for pair in pairs}) == 5
    for pair in pairs:  # the rule really is the mirror, on the real inputs
        assert pair.output == [row[::-1] for row in pair.input]
    task = puzzle.task_json()
    assert set(task) == {"train", "test"} and validate_grid(task["test"][0]["output"])


def test_without_a_property_test_implements_concept_is_skipped_and_does_not_fail(
    sandbox: Sandbox,
) -> None:
    puzzle = run(sandbox, modules.GOOD, hints=RoutineHints(grid_params=["grid"]))
    implements = puzzle.report.check("implements_concept")
    assert implements is not None and implements.status == "skipped"
    assert "the concept has no property test" in implements.note
    assert puzzle.passed


def test_another_concepts_property_fails_an_honest_mirror(sandbox: Sandbox) -> None:
    # The properties are what is tested: a mirror is not a line drawing.
    hints = RoutineHints(grid_params=["grid"], properties=["collinear"])
    puzzle = run(sandbox, modules.GOOD, hints=hints)
    assert statuses(puzzle)["implements_concept"] == "failed"
    assert "collinear" in details(puzzle, "implements_concept")
    assert not puzzle.passed


def test_a_crash_without_the_concept_counts_when_other_values_change_the_output(
    sandbox: Sandbox,
) -> None:
    # [] from the substitute makes [0] raise; another example's colors change the output.
    puzzle = run(sandbox, modules.INDEXES_HONESTLY, hints=RoutineHints(grid_params=["grid"]))
    assert statuses(puzzle)["exercises_concept"] == "passed", details(puzzle, "exercises_concept")


def test_the_same_seed_gives_the_same_puzzle_in_separate_runs(sandbox: Sandbox) -> None:
    first, second = run(sandbox, modules.GOOD), run(sandbox, modules.GOOD)
    assert first.train == second.train and first.test == second.test
    (other,) = verify_module(sandbox, modules.GOOD, [8], hints=HINTS)
    assert other.train != first.train


@pytest.mark.parametrize("path", sorted(HANDWRITTEN.glob("*-*.py")), ids=lambda p: p.stem)
def test_the_handwritten_generators_pass(sandbox: Sandbox, path: object) -> None:
    from pathlib import Path

    assert isinstance(path, Path)
    hints = RoutineHints(grid_params=["grid"], returns_grid=True)
    puzzles = verify_module(sandbox, path.read_text(), [0, 1, 2], hints=hints)
    assert [p.report.summary() for p in puzzles] == ["passed"] * 3


def test_a_transform_that_ignores_concept_routine_is_rejected(sandbox: Sandbox) -> None:
    puzzle = run(sandbox, modules.IGNORES_CONCEPT)
    assert statuses(puzzle)["exercises_concept"] == "failed"
    assert "never called concept_routine" in details(puzzle, "exercises_concept")
    assert "train 1, train 2, train 3, train 4, test 1" in details(puzzle, "exercises_concept")
    assert not puzzle.passed and puzzle.train == [] and puzzle.test == []


def test_a_transform_that_discards_the_result_is_rejected_as_not_load_bearing(
    sandbox: Sandbox,
) -> None:
    puzzle = run(sandbox, modules.DISCARDS_RESULT)
    failed = [check.name for check in puzzle.report.failed()]
    assert failed == ["exercises_concept"]
    assert "not load-bearing" in details(puzzle, "exercises_concept")


def test_an_intermediate_concept_is_replaced_by_a_constant_of_its_type(sandbox: Sandbox) -> None:
    # concept_routine returns an int: the substitute returns 0, which changes the output
    # when the count is used and changes nothing when it is not.
    assert run(sandbox, modules.COUNTS_COLORS, hints=RoutineHints(returns_grid=False)).passed
    unused = run(sandbox, modules.COUNTS_UNUSED, hints=RoutineHints())
    assert [check.name for check in unused.report.failed()] == ["exercises_concept"]


@pytest.mark.parametrize("source", ["GLOBAL_RANDOM", "NUMPY_RANDOM"])
def test_a_generator_not_driven_by_rng_is_not_deterministic(sandbox: Sandbox, source: str) -> None:
    puzzle = run(sandbox, getattr(modules, source))
    assert statuses(puzzle)["deterministic"] == "failed"
    assert "the same seed 7 gave a different puzzle" in details(puzzle, "deterministic")


def test_a_random_transform_is_not_deterministic(sandbox: Sandbox) -> None:
    puzzle = run(sandbox, modules.RANDOM_TRANSFORM)
    assert statuses(puzzle)["deterministic"] == "failed"
    assert "different output when run again" in details(puzzle, "deterministic")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("BAD_COLOR", "is 10, not a color 0-9"),
        ("RAGGED_OUTPUT", "not rectangular"),
        ("HUGE_INPUT", "larger than 30x30"),
        ("ONE_COLOR_OUTPUT", "the output is all one color (3)"),
        ("SYMMETRIC_INPUT", "the output equals the input"),
    ],
)
def test_malformed_grids_are_rejected(sandbox: Sandbox, source: str, message: str) -> None:
    puzzle = run(sandbox, getattr(modules, source))
    assert statuses(puzzle)["well_formed"] == "failed"
    assert message in details(puzzle, "well_formed")
    assert not puzzle.passed


def test_a_loop_is_contained_by_the_timeout(sandbox: Sandbox) -> None:
    puzzle = run(sandbox, modules.LOOPS, timeout_s=0.5)
    assert statuses(puzzle) == {
        "runs": "failed",
        "well_formed": "skipped",
        "deterministic": "skipped",
        "diverse": "skipped",
        "exercises_concept": "skipped",
        "implements_concept": "skipped",
        "concept_is_crux": "skipped",
    }
    assert "longer than 0.5 s" in details(puzzle, "runs")
    # the sandbox is still usable afterwards
    assert run(sandbox, modules.GOOD).passed


def test_too_few_distinct_inputs_is_not_diverse(sandbox: Sandbox) -> None:
    puzzle = run(sandbox, modules.CONSTANT_INPUT)
    assert statuses(puzzle)["diverse"] == "failed"
    assert "only 1 distinct inputs in 50 draws" in details(puzzle, "diverse")


def test_an_exception_is_reported_with_the_module_frames_only(sandbox: Sandbox) -> None:
    puzzle = run(sandbox, modules.RAISES)
    text = details(puzzle, "runs")
    assert "IndexError" in text and "in transform" in text
    assert "_arcmemo" not in text  # the harness' own frames are dropped


def test_a_missing_function_is_named(sandbox: Sandbox) -> None:
    puzzle = run(sandbox, modules.MISSING_FUNCTION)
    assert "defines no function generate_input()" in details(puzzle, "runs")
