"""Data embedded in the report page as JSON inside ``<script type="application/json">``.

A script element's text ends at the first ``</script`` and ``<!--`` changes how the parser
reads it, whatever the JSON means; so every ``</`` and ``<!--`` is written with an escape
JSON reads back unchanged (``<\\/``, ``\\u003c!--``). U+2028 and U+2029 are escaped too:
valid in JSON strings, but line breaks to older JavaScript parsers.
"""

from __future__ import annotations

import json
from typing import Any

from markupsafe import Markup

_ESCAPES = (("</", "<\\/"), ("<!--", "\\u003c!--"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def script_json(value: Any) -> Markup:
    """``value`` as JSON that can stand inside a script element and parses back to it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in _ESCAPES:
        text = text.replace(raw, escaped)
    return Markup(text)
