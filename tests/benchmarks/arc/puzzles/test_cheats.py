"""The three cheating generator modules of issue 21 are rejected, each for its own reason,
while passing every check the old ablation had."""

from __future__ import annotations

from arcmemo.benchmarks.arc.puzzles.generate import routine_hints
from arcmemo.benchmarks.arc.puzzles.references import load_references
from arcmemo.benchmarks.arc.puzzles.verify import RoutineHints, VerifiedPuzzle, verify_module
from arcmemo.memory.schema import Memory
from arcmemo.sandbox import Sandbox
from tests.benchmarks.arc.puzzles.cheats import source
from tests.support.paths import HANDWRITTEN

OLD_CHECKS = ("runs", "well_formed", "deterministic", "diverse")


def check(memory: Memory, sandbox: Sandbox, name: str, concept: str) -> list[VerifiedPuzzle]:
    target = memory.find(concept)
    assert target is not None
    references = load_references(HANDWRITTEN, memory, target)
    return verify_module(
        sandbox, source(name), [0, 1], hints=routine_hints(target), references=references
    )


def failed(puzzle: VerifiedPuzzle) -> dict[str, str]:
    return {c.name: "\n".join(c.details) for c in puzzle.report.checks if c.status == "failed"}


def test_a_reflection_whose_routine_recolors_fails_its_property_tests(
    arc_memory: Memory, sandbox: Sandbox
) -> None:
    for puzzle in check(arc_memory, sandbox, "reflect_recolors", "reflect grid"):
        problems = failed(puzzle)
        assert set(problems) == {"implements_concept"}, problems
        assert (
            "involution: applied twice it does not give back its input"
            in (problems["implements_concept"])
        )
        assert "same_colors" in problems["implements_concept"]


def test_a_concept_used_only_incidentally_is_not_load_bearing(
    arc_memory: Memory, sandbox: Sandbox
) -> None:
    # A list-returning routine: the neutral substitute answers [], which the module indexes.
    hints = RoutineHints(grid_params=["grid"])
    references = load_references(HANDWRITTEN, arc_memory, arc_memory.find("count objects"))  # type: ignore[arg-type]
    for puzzle in verify_module(
        sandbox, source("incidental"), [0, 1], hints=hints, references=references
    ):
        problems = failed(puzzle)
        assert set(problems) == {"exercises_concept"}, problems
        assert "the ablated run only crashed" in problems["exercises_concept"]
        assert "used only incidentally" in problems["exercises_concept"]


def test_a_flip_with_a_one_pixel_concept_is_explained_by_reflect_grid_alone(
    arc_memory: Memory, sandbox: Sandbox
) -> None:
    for puzzle in check(arc_memory, sandbox, "flip_one_pixel", "recolor object"):
        problems = failed(puzzle)
        assert set(problems) == {"concept_is_crux"}, problems
        assert (
            "'reflect grid (variant 2)' alone reproduces the outputs"
            in (problems["concept_is_crux"])
        )
        statuses = {c.name: c.status for c in puzzle.report.checks}
        assert all(statuses[name] == "passed" for name in OLD_CHECKS)
        assert statuses["exercises_concept"] == statuses["implements_concept"] == "passed"


def test_the_handwritten_modules_pass_every_concept_check(
    arc_memory: Memory, sandbox: Sandbox
) -> None:
    for path in sorted(HANDWRITTEN.glob("*-*.py")):
        target = arc_memory.find(path.stem)
        assert target is not None, path
        puzzles = verify_module(
            sandbox,
            path.read_text(),
            [3],
            hints=routine_hints(target),
            references=load_references(HANDWRITTEN, arc_memory, target),
        )
        for puzzle in puzzles:
            assert puzzle.passed, (path.name, failed(puzzle))
            implements = puzzle.report.check("implements_concept")
            crux = puzzle.report.check("concept_is_crux")
            assert implements is not None and implements.status == "passed"
            others = len(list(HANDWRITTEN.glob("*-*.py"))) - 1
            assert crux is not None and f"{others} other concept(s)" in crux.note
