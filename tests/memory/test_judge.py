"""The aux-model attribution judge: its prompt, its parsed answer and how it overrides."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arcmemo.core.records import Attempt, Selection, Step, TaskResult
from arcmemo.memory.attribution import attribute_task
from arcmemo.memory.judge import judge_usage, parser
from arcmemo.memory.schema import Concept, Memory
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.models.structured import OutputError

PROGRAM = "def transform(grid):\n    return grid[::-1]  # reflect the grid\n"


def memory() -> Memory:
    return Memory(
        concepts=[
            Concept(name="reflect grid", kind="routine", description="mirror the grid"),
            Concept(name="flip upside down", kind="routine", description="turn rows around"),
        ]
    )


def task(verified: bool) -> tuple[TaskResult, Step]:
    shown = ["reflect grid", "flip upside down"]
    step = Step(round=0, completion=PROGRAM, candidate=PROGRAM, verified=verified, concepts=shown)
    result = TaskResult(
        task_id="t",
        selection=Selection(selector="llm", selected=shown),
        attempts=[Attempt(index=0, steps=[step])],
    )
    return result, step


def judge(answer: str, mem: Memory, result: TaskResult, step: Step | None) -> Any:
    seen: list[str] = []

    def respond(messages: list[Any]) -> str:
        seen.append(messages[0].content)
        return answer

    client = ModelClient(ScriptedProvider.from_script(respond, model="judge"))
    return asyncio.run(judge_usage(client, mem, result, step, domain="arc")), seen


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


def test_the_judge_sees_the_solution_and_the_shown_concepts() -> None:
    mem = memory()
    result, step = task(verified=True)
    judged, seen = judge("```yaml\n- Flip Upside Down\n```", mem, result, step)
    assert judged == {"reflect-grid": False, "flip-upside-down": True}
    (prompt,) = seen
    assert "return grid[::-1]" in prompt
    assert "- reflect grid: mirror the grid" in prompt
    assert "- flip upside down: turn rows around" in prompt


def test_its_opinion_overrides_the_lexical_check_and_is_recorded() -> None:
    mem = memory()
    result, step = task(verified=True)
    lexical = {v.name: v.verdict for v in attribute_task(mem, result, step).verdicts}
    assert lexical == {"reflect grid": "helpful", "flip upside down": "unused"}
    judged = {"reflect-grid": False, "flip-upside-down": True}
    verdicts = attribute_task(mem, result, step, judged).verdicts
    assert {v.name: v.verdict for v in verdicts} == {
        "reflect grid": "unused",
        "flip upside down": "helpful",
    }
    assert verdicts[0].evidence == ["name words reflect, grid", "aux model: not used"]
    failed, _ = task(verified=False)
    harmful = attribute_task(mem, failed, None, {"flip-upside-down": True}).verdicts
    assert {v.name: v.verdict for v in harmful} == {
        "reflect grid": "harmful",  # not judged: the lexical check stands
        "flip upside down": "harmful",
    }


def test_an_unusable_answer_leaves_the_lexical_verdicts() -> None:
    mem = memory()
    result, step = task(verified=True)
    judged, seen = judge("```yaml\n- rotate grid\n```", mem, result, step)
    assert judged is None
    assert len(seen) == 2  # one repair round, then it gives up
    assert judge("```yaml\n[]\n```", mem, result, step)[0] == {
        "reflect-grid": False,
        "flip-upside-down": False,
    }
    with pytest.raises(OutputError, match="not among the concepts shown: rotate grid"):
        parser(mem.concepts)("```yaml\n- rotate grid\n```")
    unshown = TaskResult(
        task_id="u", attempts=[Attempt(index=0, steps=[Step(round=0, completion="x")])]
    )
    assert judge("unused", mem, unshown, None)[0] == {}
