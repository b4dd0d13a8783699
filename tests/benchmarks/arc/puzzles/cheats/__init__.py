"""Generator modules written to cheat the load-bearing ablation (issue 21).

Each passes the older checks (runs, well formed, deterministic, diverse, and "the output
changes or the run crashes without concept_routine") and must now be rejected for its own
reason. The modules are read as text (they run only in the sandbox): :func:`source`.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def source(name: str) -> str:
    """The text of cheat module ``name`` (``reflect_recolors``, ...)."""
    return (HERE / f"{name}.py").read_text(encoding="utf-8")
