"""The one text sanitizer: encodable, no control characters but newline and tab, capped."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import arcmemo.sandbox.text
from arcmemo.sandbox.text import clean_json, clean_text


def test_clean_text_removes_terminal_control_sequences_and_keeps_lines() -> None:
    hostile = "title\x1b]0;pwned\x07 clear\x1b[2J\x9b31m bell\x07 cr\r\nnext\tcol\x00\x7f"
    assert clean_text(hostile) == "title]0;pwned clear[2J31m bell cr\nnext\tcol"
    assert "\x1b" in clean_text("\x1b[2J", controls=True)


def test_clean_text_escapes_lone_surrogates_and_caps_keeping_both_ends() -> None:
    assert clean_text("a\ud800") == "a\\ud800"
    capped = clean_text("start" + "x" * 10_000 + "end", 100)
    assert len(capped) <= 100 and capped.startswith("start") and capped.endswith("end")
    assert clean_text("short", 10) == "short"


def test_clean_json_cleans_keys_and_strings_and_refuses_what_json_cannot_hold() -> None:
    assert clean_json({"k\ud800\x1b": ["\udcff\x1b[2J", 1, 2.5, None]}) == {
        "k\\ud800": ["\\udcff[2J", 1, 2.5, None]
    }
    with pytest.raises(ValueError):
        clean_json(float("nan"))
    nested: list[object] = []
    for _ in range(200):
        nested = [nested]
    with pytest.raises(ValueError):
        clean_json(nested)


def test_the_sanitizer_imports_nothing_from_arcmemo() -> None:
    # The sandbox worker loads it by file inside the sandbox, with only the standard library.
    tree = ast.parse(Path(arcmemo.sandbox.text.__file__).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert not (node.module or "").startswith("arcmemo"), node.module
        elif isinstance(node, ast.Import):
            assert not any(alias.name.startswith("arcmemo") for alias in node.names)
