"""The aux-model review of a routine without property tests, through the pipeline."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arcmemo.benchmarks.arc.puzzles.generate import generate_for_concept, routine_hints
from arcmemo.benchmarks.arc.puzzles.recheck import recheck_puzzle
from arcmemo.benchmarks.arc.puzzles.store import read_meta, write_outcome
from arcmemo.benchmarks.arc.puzzles.verify import PuzzleConfig
from arcmemo.memory.schema import Concept, Memory
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.sandbox import Sandbox
from tests.support import puzzle_modules as modules

# No rule of the property table matches this name, so the routine goes to review.
CONCEPT_NO_RULE = Concept(name="swap sides", kind="routine", description="reverse the columns")


def scripted(answers: list[str], seen: list[list[Message]]) -> ModelClient:
    def respond(messages: list[Message]) -> str:
        seen.append(list(messages))
        return answers.pop(0)

    return ModelClient(ScriptedProvider.from_script(respond))


def run(sandbox: Sandbox, verdict: str) -> tuple[object, list[list[Message]]]:
    memory = Memory(concepts=[CONCEPT_NO_RULE])
    asked: list[list[Message]] = []
    review_calls: list[list[Message]] = []
    writer = scripted([f"```python\n{modules.GOOD}```"], asked)
    reviewer = scripted(
        [f"It reverses columns. {verdict}<reason>looks right</reason>"], review_calls
    )
    outcome = asyncio.run(
        generate_for_concept(
            writer,
            memory,
            CONCEPT_NO_RULE,
            sandbox=sandbox,
            seeds=[0, 1],
            repairs=0,
            reviewer=reviewer,
        )
    )
    return outcome, review_calls


def test_a_yes_review_passes_implements_concept_and_is_recorded(sandbox: Sandbox) -> None:
    outcome, calls = run(sandbox, "<verdict>yes</verdict>")
    assert len(calls) == 1  # one review per module, not per seed
    prompt = calls[0][-1].content
    assert "### Concept: swap sides" in prompt and "def concept_routine" in prompt
    attempt = outcome.final  # type: ignore[attr-defined]
    assert attempt.review.verdict == "yes"
    for puzzle in attempt.puzzles:
        check = puzzle.report.check("implements_concept")
        assert check.status == "passed" and "reviewed by scripted" in check.note
        assert puzzle.passed and puzzle.train


def test_a_no_review_rejects_the_puzzles(sandbox: Sandbox) -> None:
    outcome, _ = run(sandbox, "<verdict>no</verdict>")
    attempt = outcome.final  # type: ignore[attr-defined]
    assert attempt.review.verdict == "no"
    for puzzle in attempt.puzzles:
        check = puzzle.report.check("implements_concept")
        assert check.status == "failed"
        assert "does not implement the concept" in check.details[0]
        assert not puzzle.passed and not puzzle.train
    assert outcome.accepted == []  # type: ignore[attr-defined]


def test_the_stored_review_is_reused_when_the_puzzle_is_rechecked(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    outcome, _ = run(sandbox, "<verdict>yes</verdict>")
    paths = write_outcome(
        tmp_path,
        CONCEPT_NO_RULE,
        outcome,  # type: ignore[arg-type]
        model="scripted",
        memory=None,
        config=PuzzleConfig(),
        hints=routine_hints(CONCEPT_NO_RULE),
        wanted=2,
    )
    assert len(paths) == 2
    assert read_meta(paths[0]).review is not None
    result = recheck_puzzle(sandbox, paths[0])
    check = result.report.check("implements_concept")  # type: ignore[union-attr]
    assert result.passed and check is not None and check.status == "passed"
    assert "reviewed by scripted" in check.note
