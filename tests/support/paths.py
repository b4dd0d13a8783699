"""Where the tests' files are, so a test reads them the same way from any folder."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
ARC_EVAL = FIXTURES / "arc" / "eval"
SCRIPTS = FIXTURES / "scripts"
HANDWRITTEN = REPO / "puzzles" / "handwritten"  # the repository's hand-written puzzles
SAMPLES = REPO / "puzzles" / "samples"
