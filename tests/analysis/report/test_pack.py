"""A task's details packed for the page: ASCII without ``<``, unpacked by the page's script
to the same text, with nothing in it run."""

from __future__ import annotations

import re
from pathlib import Path

from arcmemo.analysis.report.html import environment
from arcmemo.analysis.report.pack import pack, unpack
from tests.support.chromium import Browser

HOSTILE = (
    "</script><script>window.pwned = 1</script>"
    "<!--<script>window.pwned = 2</script>-->"
    "</SCRIPT ><b>bold</b> × ✓ \u2028\u2029 <\\/ ok"
)


def test_packed_text_is_base64_and_unpacks_to_the_same_text() -> None:
    packed = pack(HOSTILE * 50)
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", packed)
    assert unpack(packed) == HOSTILE * 50
    assert len(packed) < len((HOSTILE * 50).encode())  # repeated text shrinks


def test_the_page_script_unpacks_what_python_packed(browser: Browser, tmp_path: Path) -> None:
    """The report's own script (the generic page's base) reads a packed task back, and the
    packed text in a script element runs nothing."""
    base = environment().get_template("_base.html.j2")
    body = (
        '<section class="task" id="task-t"><details class="task-body"><summary>t</summary>'
        f'</details><script type="application/x-deflate-base64" class="task-data">{pack(HOSTILE)}'
        "</script></section>"
    )
    page = tmp_path / "page.html"
    html = base.render(title="packed").replace("<body>\n", "<body>\n" + body, 1)
    page.write_text(html, encoding="utf-8")
    browser.open(page.as_uri() + "#task-t")
    browser.wait_for("document.querySelector('details.task-body[data-ready]') !== null")
    # inserted as markup: the page's own text is escaped before packing, this test's is not
    assert browser.evaluate("document.querySelector('details.task-body b').textContent") == "bold"
    assert browser.evaluate("typeof window.pwned") == "undefined"  # inserted scripts never run
    assert browser.evaluate("document.querySelector('script.task-data').textContent") == pack(
        HOSTILE
    )
    assert browser.console_errors() == []
