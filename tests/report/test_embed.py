"""JSON embedded in a script element: it cannot end the element early, and parses back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from arcmemo.report.embed import script_json
from tests.report.chromium import Browser, find_chromium

HOSTILE = (
    "</script><script>window.pwned = 1</script>"
    "<!--<script>window.pwned = 2</script>-->"
    "</SCRIPT ><img src=x onerror='window.pwned = 3'>"
    "\u2028\u2029 <\\/ ok"
)


def test_no_sequence_that_ends_or_changes_a_script_element_is_left() -> None:
    text = script_json({"html": HOSTILE, "list": [HOSTILE]})
    assert "</" not in text and "<!--" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"html": HOSTILE, "list": [HOSTILE]}


def test_other_text_stays_as_it_is() -> None:
    assert script_json("a < b & c > d × ✓") == '"a < b & c > d × ✓"'


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    executable = find_chromium()
    if executable is None:
        pytest.skip("Chromium is not installed (Debian/Ubuntu: apt-get install -y chromium)")
    opened = Browser(executable, tmp_path / "profile")
    try:
        yield opened
    finally:
        opened.close()


def test_a_browser_reads_the_data_back_and_runs_none_of_it(
    browser: Browser, tmp_path: Path
) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        '<!DOCTYPE html><html><body><script type="application/json" id="data">'
        f"{script_json(HOSTILE)}</script>"
        "<script>window.back = JSON.parse(document.getElementById('data').textContent);"
        "</script></body></html>",
        encoding="utf-8",
    )
    browser.open(page.as_uri())
    assert browser.evaluate("window.back") == HOSTILE
    assert browser.evaluate("typeof window.pwned") == "undefined"
    assert browser.evaluate("document.scripts.length") == 2
    assert browser.console_errors() == []
