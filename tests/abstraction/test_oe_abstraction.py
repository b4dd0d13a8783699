"""Open-ended abstraction: thought-process reconstruction, then lessons, de-duplicated."""

from __future__ import annotations

import pytest

from arcmemo.abstraction.examples import load_examples
from arcmemo.abstraction.lessons import parse_lessons
from arcmemo.abstraction.oe import parse_thought_process
from arcmemo.core.records import SolvedItem
from arcmemo.core.registry import ComponentSpec
from arcmemo.memory.schema import Concept, Lesson, Memory, TypeDef
from arcmemo.models.structured import OutputError
from tests.support.abstraction import ACTOR, ITEM, Recorder, abstract, fenced

TRACE = (
    "Here is how it could be found.\n<thought_process>\n"
    "- o 1: the output has the same rows as the input in reverse order\n"
    "- t 1: the grid is flipped upside down\n</thought_process>"
)
LESSONS = fenced(
    """
- situation: the output is the input seen upside down
  suggestion: reverse the order of the rows
- Situation: "colors stay: only positions change"
  Suggestion: look for a flip or a rotation before anything else
"""
)


def test_lessons_are_written_from_the_reconstructed_thought_process() -> None:
    memory = Memory(domain="arc")
    recorder = Recorder(TRACE, LESSONS)
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
    reconstruct, extract = recorder.prompt(0), recorder.prompt(1)
    assert "Reconstruct how someone could have found this solution" in reconstruct
    assert ITEM.solution.strip() in reconstruct and "the rows are flipped" in reconstruct
    assert "### How it was found\n- o 1: the output has the same rows" in extract
    assert ITEM.solution.strip() in extract


def test_both_steps_show_the_examples_that_have_a_thought_process_and_lessons() -> None:
    recorder = Recorder(TRACE, LESSONS)
    abstract(Memory(domain="arc"), recorder, "oe")
    shown = [e for e in load_examples(None, "arc") if e.thought_process and e.lessons]
    assert len(shown) >= 3
    for example in shown:
        assert example.thought_process.strip() in recorder.prompt(0)
        assert example.program.strip() in recorder.prompt(0)
        assert example.lessons_yaml().strip() in recorder.prompt(1)
    assert f"## Example {len(shown) + 1}\n" not in recorder.prompt(0)


def test_prompts_carry_nothing_of_the_program_synthesis_format() -> None:
    # Even on a memory that holds concepts and types, OE prompts show neither.
    memory = Memory(domain="arc", types=[TypeDef(name="grid", definition="list[list[int]]")])
    memory.add(Concept(name="recolor object", kind="routine"), task_id="older")
    memory.add_lesson(Lesson(situation="old situation", suggestion="old suggestion"))
    recorder = Recorder(TRACE, LESSONS)
    abstract(memory, recorder, "oe")
    for call in (0, 1):
        prompt = recorder.prompt(call)
        for word in ("recolor object", ":=", "routine", "structure", "typed", "old situation"):
            assert word not in prompt, (call, word)


def test_duplicate_lessons_are_not_added_again() -> None:
    memory = Memory(domain="arc")
    memory.add_lesson(
        Lesson(
            situation="The output is the input  seen upside down",
            suggestion="Reverse the order of the rows",
        ),
        task_id="older-task",
    )
    outcome = abstract(memory, Recorder(TRACE, LESSONS), "oe")
    assert len(memory.lessons) == 2
    assert outcome.written == ["lesson 2"]
    assert memory.lessons[0].provenance.sources == ["older-task", "task-7"]


def test_a_thought_process_without_numbered_steps_is_repaired_once() -> None:
    recorder = Recorder("<thought_process>it flips</thought_process>", TRACE, LESSONS)
    outcome = abstract(Memory(domain="arc"), recorder, "oe")
    assert outcome.failures == []
    assert "'- o 1: ...' (observations)" in recorder.last(1)
    with pytest.raises(OutputError):
        parse_thought_process("- o 1: no tags\n- t 1: at all")


def test_an_incomplete_lesson_is_repaired_once() -> None:
    memory = Memory(domain="arc")
    bad = fenced("- situation: something\n- suggestion: only half")
    recorder = Recorder(TRACE, bad, LESSONS)
    outcome = abstract(memory, recorder, "oe")
    assert outcome.failures == []
    assert len(memory.lessons) == 2
    repair = recorder.last(2)
    assert "item 1: situation and suggestion must both be non-empty" in repair
    assert "item 2: situation and suggestion must both be non-empty" in repair


def test_a_still_broken_answer_is_recorded_and_writes_nothing() -> None:
    memory = Memory(domain="arc")
    recorder = Recorder(TRACE, "no yaml: [", fenced("- just a string"))
    outcome = abstract(memory, recorder, "oe")
    (failure,) = outcome.failures
    assert failure.stage == "lessons"
    assert failure.raw == ["no yaml: [", fenced("- just a string")]
    assert "item 1: expected a mapping with situation and suggestion" in failure.error
    assert memory.lessons == [] and memory.solutions == {}


def test_a_failed_reconstruction_stops_before_lessons() -> None:
    recorder = Recorder("nothing", "still nothing")
    outcome = abstract(Memory(domain="arc"), recorder, "oe")
    (failure,) = outcome.failures
    assert failure.stage == "thought process" and len(recorder.received) == 2


def test_parse_lessons_accepts_a_lessons_key_and_rejects_empty_lists() -> None:
    (lesson,) = parse_lessons("```yaml\nlessons:\n  - {situation: a, suggestion: b}\n```")
    assert (lesson.situation, lesson.suggestion) == ("a", "b")
    with pytest.raises(OutputError, match="non-empty YAML list"):
        parse_lessons("```yaml\n[]\n```")


# -- AIME: the pilot's adaptation (lessons from the solution trace, with a domain prefix) ---

AIME_ITEM = SolvedItem(
    task_id="2023-I-4",
    domain="aime",
    problem="Find the number of positive integers n < 1000 with n = 7k + 3 for some k.",
    solution="Write n = 7k + 3 with k >= 0; 7k + 3 < 1000 gives k <= 142, so \\boxed{143}.",
    reasoning="count the residues",
)
AIME_TRACE = (
    "<thought_process>\n- o 1: n is fixed modulo 7\n- t 1: count the k that keep n in range\n"
    "</thought_process>"
)
PREFIXED = fenced(
    """
- situation: "[Number theory] integers in a range are restricted to one residue class"
  suggestion: write them as a fixed residue plus a multiple and bound the multiplier
- situation: "[Counting] the count of integers between two bounds"
  suggestion: count the admissible multipliers, watching both endpoints
"""
)


PILOT = ComponentSpec(name="oe", options={"domain_prefix": True})


def test_aime_lessons_come_from_the_solution_trace_with_a_domain_prefix() -> None:
    memory = Memory(domain="aime")
    recorder = Recorder(AIME_TRACE, PREFIXED)
    outcome = abstract(memory, recorder, item=AIME_ITEM, spec=PILOT)
    assert outcome.failures == []
    assert [les.situation.split("]")[0] for les in memory.lessons] == [
        "[Number theory",
        "[Counting",
    ]
    extract = recorder.prompt(1)
    assert AIME_ITEM.solution in extract  # the worked solution trace
    assert "starts with the mathematical domain in brackets" in extract
    assert "two to five" in extract and "one must capture the key step" in extract
    assert "colors" not in extract  # none of ARC's wording


def test_aime_lessons_without_a_domain_prefix_are_repaired_once() -> None:
    memory = Memory(domain="aime")
    plain = fenced("- situation: a residue class\n  suggestion: bound the multiplier")
    recorder = Recorder(AIME_TRACE, plain, PREFIXED)
    outcome = abstract(memory, recorder, item=AIME_ITEM, spec=PILOT)
    assert outcome.failures == [] and len(memory.lessons) == 2
    assert "item 1: the situation must start with its domain in brackets" in recorder.last(2)


def test_the_domain_prefix_is_an_option_of_the_format() -> None:
    # Off by default: plain lessons are accepted and the generic guidance is shown.
    recorder = Recorder(AIME_TRACE, LESSONS)
    outcome = abstract(Memory(domain="aime"), recorder, "oe", item=AIME_ITEM)
    assert outcome.failures == [] and "in brackets" not in recorder.prompt(1)
    # On, the prefix is required in any domain.
    refused = abstract(Memory(domain="arc"), Recorder(TRACE, LESSONS, LESSONS), spec=PILOT)
    assert refused.written == [] and refused.failures
