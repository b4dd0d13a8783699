"""Open-ended abstraction: situation/suggestion lessons, de-duplicated."""

from __future__ import annotations

import pytest
from abstraction_helpers import ACTOR, ITEM, Recorder, abstract, fenced

from arcmemo.abstraction.oe import parse_lessons
from arcmemo.memory.ontology import Lesson, Memory
from arcmemo.structured import OutputError

LESSONS = fenced(
    """
- situation: the output is the input seen upside down
  suggestion: reverse the order of the rows
- Situation: "colors stay: only positions change"
  Suggestion: look for a flip or a rotation before anything else
"""
)


def test_lessons_are_written_with_provenance_and_history() -> None:
    memory = Memory(domain="arc")
    recorder = Recorder(LESSONS)
    outcome = abstract(memory, recorder, "oe")
    assert outcome.failures == []
    assert outcome.written == ["lesson 1", "lesson 2"]
    assert [les.suggestion for les in memory.lessons] == [
        "reverse the order of the rows",
        "look for a flip or a rotation before anything else",
    ]
    assert memory.lessons[1].situation == "colors stay: only positions change"
    assert all(les.provenance.sources == ["task-7"] for les in memory.lessons)
    assert all(les.provenance.authors == [ACTOR] for les in memory.lessons)
    assert [(h.op, h.target, h.task_id) for h in memory.history] == [
        ("lesson", "0", "task-7"),
        ("lesson", "1", "task-7"),
    ]
    assert memory.solutions["task-7"].program == ITEM.solution
    prompt = recorder.prompt(0)
    assert ITEM.solution.strip() in prompt and "the rows are flipped" in prompt
    assert "Lessons already in memory" not in prompt  # nothing to show yet


def test_duplicate_lessons_are_not_added_again() -> None:
    memory = Memory(domain="arc")
    memory.add_lesson(
        Lesson(
            situation="The output is the input  seen upside down",
            suggestion="Reverse the order of the rows",
        ),
        task_id="older-task",
    )
    recorder = Recorder(LESSONS)
    outcome = abstract(memory, recorder, "oe")
    assert len(memory.lessons) == 2
    assert outcome.written == ["lesson 2"]
    assert memory.lessons[0].provenance.sources == ["older-task", "task-7"]
    prompt = recorder.prompt(0)
    assert "Lessons already in memory" in prompt
    assert "Reverse the order of the rows" in prompt


def test_an_incomplete_lesson_is_repaired_once() -> None:
    memory = Memory(domain="arc")
    bad = fenced("- situation: something\n- suggestion: only half")
    recorder = Recorder(bad, LESSONS)
    outcome = abstract(memory, recorder, "oe")
    assert outcome.failures == []
    assert len(memory.lessons) == 2
    repair = recorder.last(1)
    assert "item 1: situation and suggestion must both be non-empty" in repair
    assert "item 2: situation and suggestion must both be non-empty" in repair


def test_a_still_broken_answer_is_recorded_and_writes_nothing() -> None:
    memory = Memory(domain="arc")
    recorder = Recorder("no yaml: [", fenced("- just a string"))
    outcome = abstract(memory, recorder, "oe")
    (failure,) = outcome.failures
    assert failure.stage == "lessons"
    assert failure.raw == ["no yaml: [", fenced("- just a string")]
    assert "item 1: expected a mapping with situation and suggestion" in failure.error
    assert memory.lessons == [] and memory.solutions == {}


def test_parse_lessons_accepts_a_lessons_key_and_rejects_empty_lists() -> None:
    (lesson,) = parse_lessons("```yaml\nlessons:\n  - {situation: a, suggestion: b}\n```")
    assert (lesson.situation, lesson.suggestion) == ("a", "b")
    with pytest.raises(OutputError, match="non-empty YAML list"):
        parse_lessons("```yaml\n[]\n```")
