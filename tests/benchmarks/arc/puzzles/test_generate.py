"""The pipeline with scripted models: prompt, extraction, repair round, failure records."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arcmemo.benchmarks.arc.puzzles.generate import (
    ConceptOutcome,
    PuzzleGenerationError,
    build_messages,
    extract_module,
    generate_for_concept,
    generate_puzzles,
    resolve_concepts,
    routine_hints,
)
from arcmemo.benchmarks.arc.puzzles.verify import PuzzleConfig
from arcmemo.memory.schema import Memory
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.sandbox import Sandbox
from tests.support import puzzle_modules as modules


def fenced(source: str) -> str:
    return f"Reasoning first.\n\n```python\n{source}```\n"


class Recorder:
    """A scripted model that hands out answers in order and keeps every conversation."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.conversations: list[list[Message]] = []

    def __call__(self, messages: list[Message]) -> str:
        self.conversations.append(list(messages))
        return self.answers.pop(0)


def client(recorder: Recorder) -> ModelClient:
    return ModelClient(ScriptedProvider.from_script(recorder))


def generate(
    memory: Memory, sandbox: Sandbox, answers: list[str], seeds: list[int] | None = None
) -> tuple[ConceptOutcome, Recorder]:
    recorder = Recorder(answers)
    concept = memory.find("reflect grid")
    assert concept is not None
    outcome = asyncio.run(
        generate_for_concept(
            client(recorder), memory, concept, sandbox=sandbox, seeds=seeds or [0, 1]
        )
    )
    return outcome, recorder


def test_a_passing_module_is_accepted_without_repair(arc_memory: Memory, sandbox: Sandbox) -> None:
    outcome, recorder = generate(arc_memory, sandbox, [fenced(modules.GOOD)])
    assert len(recorder.conversations) == 1 and len(outcome.attempts) == 1
    assert [p.seed for p in outcome.accepted] == [0, 1]
    assert outcome.final is not None and outcome.final.source == modules.GOOD.strip() + "\n"


def test_the_repair_round_sends_the_failed_check_and_accepts_the_fix(
    arc_memory: Memory, sandbox: Sandbox
) -> None:
    answers = [fenced(modules.DISCARDS_RESULT), fenced(modules.GOOD)]
    outcome, recorder = generate(arc_memory, sandbox, answers)
    assert len(outcome.attempts) == 2
    first, second = outcome.attempts
    assert not first.passed and second.passed and second.round == 1
    repair = recorder.conversations[1]
    assert repair[:2] == recorder.conversations[0]  # same conversation, continued
    assert repair[2] == Message(role="assistant", content=answers[0])
    feedback = repair[3].content
    assert "[exercises_concept] (seed 0)" in feedback and "[exercises_concept] (seed 1)" in feedback
    assert "not load-bearing" in feedback
    assert "[well_formed]" not in feedback  # only the checks that failed
    assert [p.seed for p in outcome.accepted] == [0, 1]


def test_a_module_failing_twice_keeps_nothing_and_keeps_both_reports(
    arc_memory: Memory, sandbox: Sandbox
) -> None:
    outcome, recorder = generate(
        arc_memory, sandbox, [fenced(modules.IGNORES_CONCEPT), fenced(modules.GLOBAL_RANDOM)]
    )
    assert len(recorder.conversations) == 2 and outcome.accepted == []
    reports = [[p.report.summary() for p in a.puzzles] for a in outcome.attempts]
    assert reports == [["failed: exercises_concept"] * 2, ["failed: deterministic"] * 2]


def test_an_answer_without_a_module_is_repaired_with_the_reason(
    arc_memory: Memory, sandbox: Sandbox
) -> None:
    outcome, recorder = generate(arc_memory, sandbox, ["I cannot.", fenced(modules.GOOD)])
    assert outcome.attempts[0].error == "the answer has no ```python block"
    assert "the answer has no ```python block" in recorder.conversations[1][-1].content
    assert outcome.final is not None and outcome.final.passed


def test_extract_module_takes_the_last_python_block_and_names_missing_functions() -> None:
    text = fenced("def draft(): pass\n") + fenced(modules.GOOD)
    assert extract_module(text) == modules.GOOD.strip() + "\n"
    with pytest.raises(ValueError, match=r"does not define generate_input\(\), transform\(\)"):
        extract_module(fenced("def concept_routine(grid):\n    return grid\n"))


def test_the_prompt_shows_the_concept_with_python_parameter_names(arc_memory: Memory) -> None:
    concept = arc_memory.find("complete symmetry")
    assert concept is not None
    system, user = build_messages(arc_memory, concept, PuzzleConfig(train=5, test=2))
    assert system.role == "system" and user.role == "user"
    text = user.content
    assert "### Concept: complete symmetry" in text
    assert "def concept_routine(grid, symmetry, mask_color):" in text
    assert "- mask_color (color): The color marking cells to be restored." in text
    assert "symmetry := Literal[" in text and "color := int" in text  # referenced types
    assert "selection criteria :=" not in text  # only the types the concept uses
    assert "each puzzle has 5 train and 2 test pairs" in text


def test_routine_hints_come_from_the_ontology(arc_memory: Memory) -> None:
    recolor = arc_memory.find("recolor object")
    assert recolor is not None
    hints = routine_hints(recolor)
    assert hints.grid_params == ["grid"] and hints.returns_grid is True
    background = arc_memory.find("background")  # a structure: no output type
    assert background is not None and routine_hints(background).returns_grid is None
    _, user = build_messages(arc_memory, background, PuzzleConfig())
    assert "def concept_routine(grid, color):" in user.content  # finds it in a grid
    assert "This concept is a structure" in user.content


def test_unknown_concepts_are_named_with_the_known_ones(arc_memory: Memory) -> None:
    with pytest.raises(
        PuzzleGenerationError,
        match=r"unknown concept\(s\): flip everything; the memory has: .*reflect-grid",
    ):
        resolve_concepts(arc_memory, ["reflect grid", "flip everything"])
    assert [c.id for c in resolve_concepts(arc_memory, ["Reflect Grids", "reflect grid"])] == [
        "reflect-grid"
    ]


def test_generate_puzzles_runs_every_concept_and_records_model_failures(
    arc_memory: Memory, sandbox: Sandbox
) -> None:
    concepts = resolve_concepts(arc_memory, ["reflect grid", "draw line"])
    script = {"### Concept: reflect grid": fenced(modules.GOOD)}  # nothing for draw line
    done: list[Any] = []
    outcomes = asyncio.run(
        generate_puzzles(
            ModelClient(ScriptedProvider.from_script(script)),
            arc_memory,
            concepts,
            sandbox=sandbox,
            seeds=[3],
            on_done=lambda concept, outcome: done.append(concept.id),
        )
    )
    assert sorted(done) == ["draw-line", "reflect-grid"]
    by_id = {o.concept_id: o for o in outcomes}
    assert [p.seed for p in by_id["reflect-grid"].accepted] == [3]
    assert by_id["draw-line"].accepted == [] and "no pattern matches" in (
        by_id["draw-line"].error or ""
    )


def test_a_model_failure_in_the_repair_round_keeps_the_first_attempt(
    arc_memory: Memory, sandbox: Sandbox
) -> None:
    script = {"### Concept: reflect grid": [fenced(modules.DISCARDS_RESULT)]}  # one answer only
    concept = arc_memory.find("reflect grid")
    assert concept is not None
    outcome = asyncio.run(
        generate_for_concept(
            ModelClient(ScriptedProvider.from_script(script)),
            arc_memory,
            concept,
            sandbox=sandbox,
            seeds=[0],
        )
    )
    assert len(outcome.attempts) == 1 and not outcome.attempts[0].passed
    assert outcome.error is not None and "stage puzzles-repair" in outcome.error
    assert outcome.accepted == []
