"""Helpers of the selection tests: a small memory and a recording scripted model."""

from __future__ import annotations

from arcmemo.memory.schema import Concept, Lesson, Memory, Parameter, TypeDef
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider


def concept(name: str, kind: str = "routine", **fields: object) -> Concept:
    if kind == "routine":
        fields.setdefault("routine_subtype", "grid manipulation")
    return Concept(name=name, kind=kind, **fields)


def selection_memory() -> Memory:
    """Six concepts and a lesson; usage differs so budgets have something to rank."""
    memory = Memory(domain="arc", types=[TypeDef(name="grid", definition="list[list[int]]")])
    memory.add(
        concept(
            "rotate grid",
            description="Turn the whole grid by a multiple of 90 degrees.",
            parameters=[Parameter(name="grid", type="grid"), Parameter(name="angle", type="int")],
            output_type="grid",
            cues=["the output is the input turned on its side"],
            implementation=["np.rot90(grid, k)"],
        ),
        task_id="a",
    )
    memory.add(concept("rotate grid"), task_id="b")
    memory.add(concept("rotate grid"), task_id="c")
    memory.add(
        concept(
            "reflect grid",
            description="Mirror the grid across an axis.",
            cues=["the output is a mirror image of the input"],
            implementation=["np.flip(grid, axis)"],
        ),
        task_id="a",
    )
    memory.add(concept("reflect grid"), task_id="d")
    memory.add(
        concept(
            "fill region left",
            description="Flood fill the left region with a color.",
            cues=["a region on the left changes color"],
        ),
        task_id="e",
    )
    memory.add(
        concept(
            "fill region right",
            description="Flood fill the right region with a color.",
            cues=["a region on the right changes color"],
        ),
        task_id="e",
    )
    memory.add(
        concept(
            "enclosure",
            kind="structure",
            description="A closed ring of one color around background cells.",
            cues=["rings with holes"],
        ),
        task_id="f",
    )
    memory.add(
        concept(
            "count colors",
            routine_subtype="intermediate",
            description="How many distinct colors a grid uses.",
            cues=["the output size depends on the number of colors"],
        ),
        task_id="g",
    )
    memory.add_lesson(
        Lesson(situation="the grid is mostly empty", suggestion="look at the few colored cells"),
        task_id="h",
    )
    return memory


class Recorder:
    """Hands out ``answers`` in order and keeps what each call was sent."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.received: list[list[Message]] = []

    def __call__(self, messages: list[Message]) -> str:
        self.received.append(list(messages))
        assert len(self.received) <= len(self.answers), "the selector asked too often"
        return self.answers[len(self.received) - 1]

    def client(self) -> ModelClient:
        return ModelClient(ScriptedProvider.from_script(self, model="selector"))
