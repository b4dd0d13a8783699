"""A scripted "model" answering puzzle-generator prompts with the hand-written modules here.

Used to build the committed sample set (see ../README.md):
``arcmemo puzzles generate --model scripted:puzzles/handwritten/respond.py ...``. The module
for a concept is the file ``<concept id>.py`` next to this one.
"""

import re
from pathlib import Path

from arcmemo.memory.schema import concept_id

HERE = Path(__file__).resolve().parent


def respond(messages):
    prompt = next(m.content for m in messages if m.role == "user")
    match = re.search(r"^### Concept: (.+)$", prompt, re.MULTILINE)
    if match is None:
        raise ValueError("not a puzzle-generator prompt")
    path = HERE / f"{concept_id(match.group(1))}.py"
    if not path.is_file():
        raise ValueError(f"no hand-written generator {path.name}")
    return "Here is the module.\n\n```python\n" + path.read_text() + "```\n"
