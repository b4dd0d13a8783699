"""A scripted model for the DC-RS end-to-end test: ``--model scripted:THIS_FILE``.

The DC-RS synthesis prompt is answered with a cheatsheet naming the solved problems it was
shown (in order); a solve prompt is answered with the identity program and, when
``DCRS_SCRIPT_SOLVE_LOG`` names a file, appended to it, so the test can read what reached
the solver.
"""

from __future__ import annotations

import os
import re

SYNTHESIS = "You are preparing a cheatsheet"


def respond(messages):
    prompt = next(m.content for m in messages if m.role == "user")
    if SYNTHESIS in prompt:
        shown = re.findall(r"^### Solved problem \d+ \((\S+)\)$", prompt, re.MULTILINE)
        sheet = "SYNTHESISED for this problem from: " + ", ".join(shown)
        return f"<cheatsheet>{sheet}</cheatsheet>"
    log = os.environ.get("DCRS_SCRIPT_SOLVE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(prompt + "\n")
    return "```python\ndef transform(grid):\n    return grid\n```\n"
