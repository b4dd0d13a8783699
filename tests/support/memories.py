"""Small memories built in code, with fixed timestamps, for tests that render or compare them."""

from __future__ import annotations

from datetime import datetime, timezone

from arcmemo.memory.merge import write_concept, write_lesson
from arcmemo.memory.schema import Concept, Lesson, Memory, Parameter, TypeDef

FIXED_TIME = datetime(2025, 1, 1, tzinfo=timezone.utc)


def build_small_memory() -> Memory:
    """A memory touching every rendering feature, with fixed timestamps."""
    memory = Memory(
        domain="arc",
        types=[
            TypeDef(name="color", definition="int"),
            TypeDef(name="grid", definition="list[list[color]]"),
        ],
    )
    write_concept(
        memory,
        Concept(
            name="container",
            kind="structure",
            description="An object enclosing a cavity.",
            cues=["closed rings with holes"],
            implementation=["flood fill the background from the border"],
        ),
        task_id="t1",
        now=FIXED_TIME,
    )
    recolor = Concept(
        name="recolor object",
        kind="routine",
        routine_subtype="grid manipulation",
        description="Change the color of an object.",
        parameters=[
            Parameter(name="grid", type="grid", description="The grid."),
            Parameter(
                name="scheme",
                type="color scheme := dict[color, color]",
                description="Old to new colors.",
            ),
        ],
        output_type="grid",
        cues=["objects keep their shape but change color"],
        implementation=["write the new color at each pixel"],
    )
    write_concept(memory, recolor, task_id="t1", now=FIXED_TIME)
    write_concept(memory, recolor, task_id="t2", now=FIXED_TIME)
    write_concept(
        memory,
        Concept(
            name="extract objects",
            kind="routine",
            routine_subtype="intermediate",
            description="Split a grid into connected objects.",
            parameters=[
                Parameter(name="grid", type="grid", description="The input grid."),
                Parameter(name="connectivity", type="Literal[4, 8]", description="Neighborhood."),
            ],
            output_type="list[object]",
            cues=["distinct shapes on a uniform background"],
            implementation=["breadth-first search over non-background cells"],
            relations=["recolor object"],
        ),
        task_id="t2",
        now=FIXED_TIME,
    )
    write_concept(
        memory,
        Concept(
            name="size criteria",
            kind="routine",
            routine_subtype="selection criteria",
            description="Select objects by pixel count.",
            parameters=[Parameter(name="object", type="object", description="The candidate.")],
            output_type="bool",
            cues=["only the largest shape changes"],
        ),
        task_id="t3",
        now=FIXED_TIME,
    )
    write_lesson(
        memory,
        Lesson(situation="shapes fall toward a wall", suggestion="simulate gravity step by step"),
        task_id="t3",
        now=FIXED_TIME,
    )
    return memory
