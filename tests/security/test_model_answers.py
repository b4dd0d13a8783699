"""Model answers are untrusted input: a hostile or degenerate answer gets a parse error the
model is shown, and the work goes on (arcmemo.models.structured)."""

from __future__ import annotations

import asyncio

from arcmemo.abstraction import ABSTRACTORS
from arcmemo.core.records import SolvedItem
from arcmemo.core.roles import ABSTRACT
from arcmemo.memory.schema import Concept, Memory, Parameter, TypeDef
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.models.structured import OutputError, load_yaml_block

ITEM = SolvedItem(
    task_id="task-laughs",
    domain="arc",
    problem="Example 1 input (2x2):\n12\n34\n",
    solution="def transform(grid):\n    return grid[::-1]\n",
    reasoning="the rows are flipped",
)
SUMMARY = "<summary>flip the grid</summary>\n<pseudocode>\nreturn reversed rows\n</pseudocode>"
GOOD = """```yaml
- name: flip rows
  kind: routine
  routine_subtype: grid manipulation
  description: Reverse the order of the rows.
  parameters:
    - name: grid
      type: grid
  output_type: grid
  cues: [the output is the input upside down]
  implementation: ["grid[::-1]"]
```"""


def billion_laughs(levels: int = 9) -> str:
    """The alias bomb: each level a list of nine aliases of the level below."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    # The concept fields alias the top level, as the measured attack did.
    lines.append(f"concepts:\n  - name: boom\n    cues: *a{levels}\n    implementation: *a{levels}")
    return "```yaml\n" + "\n".join(lines) + "\n```"


class Answers:
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.received: list[list[Message]] = []

    def __call__(self, messages: list[Message]) -> str:
        self.received.append(list(messages))
        return self.answers[len(self.received) - 1]


def _memory() -> Memory:
    memory = Memory(
        domain="arc",
        types=[
            TypeDef(name="color", definition="int"),
            TypeDef(name="grid", definition="list[list[color]]"),
        ],
    )
    memory.add(
        Concept(
            name="recolor object",
            kind="routine",
            routine_subtype="grid manipulation",
            description="Paint an object with a new color.",
            parameters=[Parameter(name="grid", type="grid")],
            output_type="grid",
        ),
        task_id="older-task",
    )
    return memory


def test_billion_laughs_in_the_abstraction_step_is_a_parse_error_and_the_run_goes_on() -> None:
    answers = Answers(SUMMARY, billion_laughs(9), GOOD)
    client = ModelClient(ScriptedProvider.from_script(answers, model="abstractor"))
    memory = _memory()
    outcome = asyncio.run(
        ABSTRACTORS.create("ps", actor=client.spec).abstract(memory, ITEM, {ABSTRACT: client})
    )
    repair = answers.received[2][-1].content
    assert "anchors and aliases" in repair and "line 1" in repair
    assert outcome.failures == []
    assert memory.find("flip rows") is not None


def test_deep_nesting_is_a_parse_error_not_a_recursion_error() -> None:
    from arcmemo.models.structured import MAX_DEPTH

    for opener, closer in (("[", "]"), ("{a: ", "}")):
        deep = "```yaml\n" + opener * 100_000 + closer * 100_000 + "\n```"
        try:
            load_yaml_block(deep)
        except OutputError as error:
            assert f"more than {MAX_DEPTH} levels" in str(error)
        else:
            raise AssertionError("a 100,000-level document parsed")
