"""The demo's scripted model: every answer it gives is written in ``script.yaml``.

It is loaded by ``--model scripted:THIS_FILE`` (the ``scripted`` provider calls
:func:`respond` with each conversation). It tells the stage of a call from the prompt's
wording and the task from the prompt's first example grids (or, for the concepts prompt,
which shows no grids, from the summary it wrote itself), then answers from the script:

* ``select``: the concepts it prefers that the selection prompt lists (a concept that is not
  in the memory yet cannot be chosen);
* ``solve``: the program of the feedback round it is in (round ``k`` once the programs of
  rounds ``0..k-1`` appear in the conversation); with ``needs_concept``, the scripted
  program is given only when the solve prompt shows that concept in full (it was selected),
  and ``otherwise`` is given when it does not;
* ``pseudocode`` and ``concepts``: the abstraction of a verified program.

Nothing here decides what is right: the sandbox runs each program, the run verifies it on
the task's examples, and the memory, attribution and report are arcmemo's own.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

SCRIPT = Path(__file__).with_name("script.yaml")

STAGE_MARKERS = (
    ("select", "decide which of them are relevant to this puzzle"),
    ("select", "Choose the concepts that will help"),
    ("pseudocode", "Rewrite the solution as short pseudocode"),
    ("concepts", "Abstract the reusable concepts"),
)


@cache
def script() -> dict[str, Any]:
    """The tasks and answers of ``script.yaml``."""
    loaded = yaml.safe_load(SCRIPT.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


@cache
def signatures() -> dict[str, tuple[str, str]]:
    """Texts that identify each demo task in a prompt: its first example's grids."""
    from arcmemo.benchmarks.arc import format_grid, load_split

    wanted = set(script()["answers"])
    return {
        task.id: (format_grid(task.train[0].input), format_grid(task.train[0].output))
        for task in load_split(script()["split"], wanted=wanted)
    }


def stage_of(prompt: str) -> str:
    for stage, marker in STAGE_MARKERS:
        if marker in prompt:
            return stage
    return "solve"


def task_of(stage: str, prompt: str) -> str:
    answers = script()["answers"]
    if stage == "concepts":
        for task_id, entry in answers.items():
            if entry.get("summary") and entry["summary"] in prompt:
                return task_id
    for task_id, (grid_in, grid_out) in signatures().items():
        if f"\n{grid_in}\n" in prompt and f"\n{grid_out}\n" in prompt:
            return task_id
    raise ValueError(f"the demo's script has no task whose grids are in this {stage} prompt")


def fenced(language: str, body: str) -> str:
    return f"```{language}\n{body.strip()}\n```"


def select(entry: dict[str, Any], prompt: str) -> str:
    listed = [
        name for name in entry.get("select", []) if re.search(rf"\b{re.escape(name)}\b", prompt)
    ]
    reason = entry.get("select_reason", "These concepts fit the examples.")
    return f"{reason}\n{fenced('yaml', yaml.safe_dump(listed) if listed else '[]')}\n"


def solve(entry: dict[str, Any], conversation: str) -> str:
    rounds = entry["solve"]
    done = sum(1 for program in rounds if program["program"].strip() in conversation)
    program = rounds[min(done, len(rounds) - 1)]
    needed = program.get("needs_concept")
    if needed and f"- concept: {needed}\n" not in conversation:
        program = program["otherwise"]
    return f"{program['say']}\n{fenced('python', program['program'])}\n"


def respond(messages: list[Any]) -> str:
    """The scripted provider's entry point: one answer for one conversation."""
    prompt = next(m.content for m in messages if m.role == "user")
    conversation = "\n\n".join(m.content for m in messages)
    stage = stage_of(prompt)
    task_id = task_of(stage, prompt)
    entry = script()["answers"][task_id]
    if stage == "select":
        return select(entry, prompt)
    if stage == "solve":
        return solve(entry, conversation)
    if stage == "pseudocode":
        return (
            f"<pseudocode>\n{entry['pseudocode'].strip()}\n</pseudocode>\n"
            f"<summary>{entry['summary']}</summary>\n"
        )
    return f"Here are the concepts.\n{fenced('yaml', entry['concepts'])}\n"
