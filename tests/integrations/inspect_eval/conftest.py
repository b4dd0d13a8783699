"""inspect_ai is an optional extra: these tests skip, saying why, where it is missing."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "inspect_ai", reason="inspect_ai is not installed (pip install '.[inspect]' runs these)"
)
