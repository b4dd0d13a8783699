"""Helpers of the abstraction tests: a recording scripted model and a small memory."""

from __future__ import annotations

import asyncio

from arcmemo.abstraction import ABSTRACTORS
from arcmemo.abstraction.outcome import AbstractionOutcome
from arcmemo.core.records import SolvedItem
from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import ABSTRACT
from arcmemo.memory.schema import Concept, Memory, Parameter, TypeDef
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider

MODEL_NAME = "abstractor"
ACTOR = f"scripted:{MODEL_NAME}"


class Recorder:
    """Hands out ``answers`` in order (running past the end fails the test) and keeps what
    each call was sent."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.received: list[list[Message]] = []

    def __call__(self, messages: list[Message]) -> str:
        self.received.append(list(messages))
        assert len(self.received) <= len(self.answers), "the abstractor asked too often"
        return self.answers[len(self.received) - 1]

    def prompt(self, call: int) -> str:
        """The rendered template of call ``call`` (its first user message)."""
        return self.received[call][0].content

    def last(self, call: int) -> str:
        """The last message of call ``call`` (the repair request in a repair round)."""
        return self.received[call][-1].content


def small_memory() -> Memory:
    """A memory with a grid type vocabulary and one routine, as the abstraction sees it."""
    memory = Memory(
        domain="arc",
        types=[
            TypeDef(name="color", definition="int"),
            TypeDef(name="grid", definition="list[list[color]]"),
            TypeDef(name="object", definition="list[tuple[int, int, color]]"),
        ],
    )
    memory.add(
        Concept(
            name="recolor object",
            kind="routine",
            routine_subtype="grid manipulation",
            description="Paint an object with a new color.",
            parameters=[Parameter(name="grid", type="grid"), Parameter(name="color")],
            output_type="grid",
            cues=["objects change color but not shape"],
        ),
        task_id="older-task",
    )
    return memory


ITEM = SolvedItem(
    task_id="task-7",
    domain="arc",
    problem="Example 1 input (2x2):\n12\n34\n",
    solution="def transform(grid):\n    return grid[::-1]\n",
    reasoning="the rows are flipped",
)

PSEUDOCODE = (
    "<summary>flip the grid upside down</summary>\n"
    "<pseudocode>\nrows = reversed(grid.rows)\nreturn rows\n</pseudocode>"
)


def abstract(
    memory: Memory,
    recorder: Recorder,
    memory_format: str = "ps",
    item: SolvedItem = ITEM,
    spec: ComponentSpec | None = None,
) -> AbstractionOutcome:
    """Run one abstraction of ``item`` with the scripted ``recorder`` (``spec``: the format
    with options, instead of ``memory_format`` with its defaults)."""
    client = ModelClient(ScriptedProvider.from_script(recorder, model=MODEL_NAME))
    abstractor = ABSTRACTORS.create(spec or memory_format, actor=client.spec)
    return asyncio.run(abstractor.abstract(memory, item, {ABSTRACT: client}))


def fenced(body: str) -> str:
    return f"Concepts:\n```yaml\n{body.strip()}\n```\n"
