"""The Dynamic Cheatsheet baseline: a curator rewrites one sheet, never collapsing it."""

from __future__ import annotations

from arcmemo.memory.schema import Memory
from tests.support.abstraction import ACTOR, ITEM, Recorder, abstract

OLD_SHEET = "\n".join(
    f"- strategy {n}: look for symmetry of kind {n} and complete it" for n in range(20)
)


def sheet(text: str) -> str:
    return f"Here is the new sheet.\n<cheatsheet>\n{text}\n</cheatsheet>"


def test_the_first_sheet_is_written_with_history() -> None:
    memory = Memory(domain="arc")
    recorder = Recorder(sheet("- flip the grid when the output is upside down"))
    outcome = abstract(memory, recorder, "cheatsheet")
    assert outcome.failures == [] and outcome.written == ["cheatsheet"]
    assert memory.cheatsheet == "- flip the grid when the output is upside down"
    (entry,) = memory.history
    assert (entry.op, entry.task_id, entry.actor) == ("cheatsheet", "task-7", ACTOR)
    assert entry.changes == ["0 -> 46 characters"]
    assert "task-7" in memory.solutions
    prompt = recorder.prompt(0)
    assert "### Current cheatsheet\n(empty)" in prompt
    assert ITEM.solution.strip() in prompt


def test_a_rewrite_replaces_the_sheet_it_was_shown() -> None:
    memory = Memory(domain="arc", cheatsheet=OLD_SHEET)
    new = OLD_SHEET + "\n- flip the grid when the output is upside down"
    recorder = Recorder(sheet(new))
    abstract(memory, recorder, "cheatsheet")
    assert memory.cheatsheet == new
    assert OLD_SHEET in recorder.prompt(0)


def test_a_collapsing_rewrite_is_refused_and_the_old_sheet_kept() -> None:
    memory = Memory(domain="arc", cheatsheet=OLD_SHEET)
    tiny = sheet("- flip")
    recorder = Recorder(tiny, tiny)
    outcome = abstract(memory, recorder, "cheatsheet")
    assert memory.cheatsheet == OLD_SHEET
    (failure,) = outcome.failures
    assert failure.stage == "cheatsheet"
    assert failure.raw == [tiny, tiny]
    assert f"drops most of the current one ({len(OLD_SHEET)} characters)" in failure.error
    assert "drops most of the current one" in recorder.last(1)  # asked once more
    assert outcome.written == [] and memory.history == [] and memory.solutions == {}


def test_a_collapse_fixed_on_repair_is_accepted() -> None:
    memory = Memory(domain="arc", cheatsheet=OLD_SHEET)
    recorder = Recorder(sheet("- flip"), sheet(OLD_SHEET + "\n- flip"))
    outcome = abstract(memory, recorder, "cheatsheet")
    assert outcome.failures == []
    assert memory.cheatsheet.endswith("- flip") and len(memory.cheatsheet) > len(OLD_SHEET)


def test_an_answer_without_tags_is_repaired() -> None:
    memory = Memory(domain="arc")
    recorder = Recorder("just prose", sheet("- rows reversed"))
    outcome = abstract(memory, recorder, "cheatsheet")
    assert outcome.failures == []
    assert "inside <cheatsheet></cheatsheet> tags" in recorder.last(1)
    assert memory.cheatsheet == "- rows reversed"
